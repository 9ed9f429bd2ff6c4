"""In-place versions: whether a tensor something will read later was written since.

NOTE [ Rerun inputs ]: Paddle counts the in-place writes of every tensor
(``Tensor._inplace_version()``) and refuses a backward that would read a saved tensor
written since it was saved ("Tensor used in gradient computation has been modified by an
inplace operation").  A rerun reads what its region kept instead of saved tensors: the
region's inputs (``h = x * 1.0; y = recompute(block, h); h.scale_(2.0)`` would rerun
``block`` on the doubled ``h``).  So a region records the versions of its inputs when it
is built, and a rerun checks them before it starts, and raises where plain Paddle's backward
would.  An input the region's own forward writes in place moves too: its rerun would start
from the written value, so that is refused alike.  Recording costs one
``_inplace_version()`` call per input tensor (~0.06 µs).  The check reads the region's own
aliases of its inputs (NOTE [ Inputs as aliases ] in ``identity.py``), which share each
input's counter.
"""

from __future__ import annotations

import functools

from .errors import RecomputeError
from .tree import leaf_path

__all__ = ["versions", "first_moved", "modified_in_place", "rerun_input_error", "region_name"]


def versions(tensors) -> list:
    """The in-place version of each of ``tensors``."""
    return [t._inplace_version() for t in tensors]


def first_moved(tensors, recorded, skip=()) -> int:
    """Index of the first of ``tensors`` whose version is not its ``recorded`` one (-1 if
    none); indices in ``skip`` are not checked (what a region keeps a private copy of)."""
    for i, t in enumerate(tensors):
        if i not in skip and t._inplace_version() != recorded[i]:
            return i
    return -1


def modified_in_place(current: int, expected: int) -> RuntimeError:
    """Paddle's own error for a saved tensor written in place since it was saved."""
    return RuntimeError(
        "(PermissionDenied) Tensor used in gradient computation has been modified by an "
        f"inplace operation. Its version is {current} but the expected version is "
        f"{expected}. Please fix your code to avoid calling an inplace operator after "
        "using the Tensor which will used in gradient computation."
    )


def rerun_input_error(api: str, function, spec, index: int, current: int, expected: int):
    """The ``RecomputeError`` of a region input written in place before its rerun."""
    return RecomputeError(
        f"{api}: argument {leaf_path(spec, index)} of {region_name(function)} was modified by "
        f"an inplace operation after the region's forward started (its version is {current}, "
        f"the forward saw {expected}). The rerun in backward would read the new values and "
        "give wrong gradients; plain Paddle refuses this backward too ('Tensor used in "
        "gradient computation has been modified by an inplace operation'). Fix: write to a "
        "copy (an out-of-place operator, or pass x.clone() to the region).")


def region_name(function) -> str:
    """A region's function as a user knows it: the layer's class, ``Class.method``, the name."""
    while isinstance(function, functools.partial):
        function = function.func
    owner = getattr(function, "__self__", None)
    if owner is not None and not isinstance(owner, type(functools)):
        return f"{type(owner).__name__}.{getattr(function, '__name__', '?')}"
    name = getattr(function, "__qualname__", None)
    return name if isinstance(name, str) else type(function).__name__
