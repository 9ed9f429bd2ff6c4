"""``no_recompute``: inside a non-reentrant region, keep one call's activations and outputs.

In the region's forward, the call runs under a hook frame that keeps what it saves (as if
no region were open) and the region records its outputs and, when the region preserves RNG
state, the random state right after it.  The recomputation does not run the call: it hands
back the recorded outputs and sets the random state the call left, so random operators
after it draw as in forward.  Calls are matched by their order within the region.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._core import hooks, tree
from .._core.errors import RecomputeError
from .._core.identity import Itself, kept
from .._core.nonreentrant import Frame, Recomputation
from .._core.plain_saves import Plain
from .._core.rng import RngState
from .._core.versions import first_moved, region_name, versions

__all__ = ["no_recompute"]


class _KeepFrame:
    """Saved tensors stay as they are: the activations of a ``no_recompute`` call, checked
    for in-place writes as plain Paddle checks them (NOTE [ Plain saves ]); parameters and
    leaves that need a gradient as themselves (NOTE [ Saved leaves ])."""

    __slots__ = ()

    def pack(self, tensor):
        value = kept(tensor)
        return Itself(value) if value is tensor else Plain(value)


_KEEP = _KeepFrame()


class _Record:
    __slots__ = ("spec", "held", "flags", "rng", "versions", "function")

    def replay(self, replayed):
        moved = first_moved(self.held, self.versions)
        if moved >= 0:  # NOTE [ Rerun inputs ] in _core/versions.py
            raise RecomputeError(
                f"no_recompute: output {moved} of {region_name(self.function)} was modified by an "
                f"inplace operation after the call (its version is "
                f"{self.held[moved]._inplace_version()}, the call left {self.versions[moved]}); "
                "the recomputation, which reuses the call's outputs, would continue from the "
                "written values and give wrong gradients. Fix: write to a copy (an out-of-place "
                "operator) instead of the output.")
        out = []
        for t, flag in zip(self.held, self.flags, strict=True):
            d = t.detach()
            d.stop_gradient = flag
            out.append(d)
        if self.rng is not None:
            # Only the generators the region's replay swapped in (and puts back after):
            # numpy's and Python's are left out when the forward did not draw from them.
            self.rng.np = self.rng.np if replayed.np is not None else None
            self.rng.py = self.rng.py if replayed.py is not None else None
            self.rng.apply()
        return tree.unflatten(self.spec, out)


def no_recompute(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Call ``function(*args, **kwargs)``, keeping its activations inside a recompute region.

    Inside a ``recompute(..., use_reentrant=False)`` region, tensors saved by this call are
    kept (not recomputed) and the recomputation does not run it again: it returns the
    forward's outputs and restores the random state the call left behind.  Use it for
    expensive parts of a recomputed block (the refined recompute of Paddle's LLM libraries).
    Outside a region (or in a reentrant one) it simply calls ``function``.

    Args:
        function: any callable.
        *args: its positional arguments.
        **kwargs: its keyword arguments.

    Returns:
        What ``function`` returns.

    Raises:
        TypeError: ``function`` is not callable.
        RecomputeError: the recomputation makes more ``no_recompute`` calls than the forward.

    Example:
        >>> import paddle, paddle_recompute as pr
        >>> attn, mlp = paddle.nn.Linear(4, 4), paddle.nn.Linear(4, 4)
        >>> def block(x):
        ...     return mlp(pr.no_recompute(attn, x))
        >>> x = paddle.randn([2, 4]); x.stop_gradient = False
        >>> pr.recompute(block, x, use_reentrant=False).sum().backward()
    """
    if not callable(function):
        raise TypeError(f"no_recompute: `function` must be callable, got {type(function).__name__}")
    top = hooks.top()
    if isinstance(top, Frame):
        return _record(top, function, args, kwargs)
    if isinstance(top, Recomputation):
        return _replay(top)
    return function(*args, **kwargs)


def _record(frame: Frame, function, args, kwargs):
    with hooks.pushed(_KEEP):
        out = function(*args, **kwargs)
    record = _Record()
    leaves, record.spec = tree.flatten(out)
    record.held = [t.detach() for t in leaves]
    record.versions = versions(leaves)
    record.function = function
    record.flags = [t.stop_gradient for t in leaves]
    record.rng = RngState.capture() if frame.state.rng is not None else None
    if frame.kept is None:
        frame.kept = []
    frame.kept.append(record)
    frame.hold(record.held)  # a policy region: what follows may keep these for free
    return out


def _replay(rec: Recomputation):
    kept = rec.frame.kept or ()
    index = rec.kept_index
    if index >= len(kept):
        raise RecomputeError(
            f"no_recompute: the recomputation made more no_recompute calls than the forward "
            f"({len(kept)}); the region must take the same path in both"
        )
    rec.kept_index = index + 1
    return kept[index].replay(rec.frame.state.rng)
