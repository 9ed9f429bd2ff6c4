"""Which code is MindSpore code: the callers that get MindSpore's meaning of a Tensor member.

NOTE [ Caller-scoped Tensor semantics ]: ``mindspore.Tensor(...)`` is a ``paddle.Tensor`` (the
very object autograd and recompute regions track), and Paddle's tensors cannot be re-classed
to a subclass. Members whose MindSpore meaning differs from Paddle's (``shape`` a tuple,
``std()`` with ``ddof=0``, ``max(1)`` returning values and indices, ...) therefore dispatch on
their *caller*: code in a MindSpore module gets MindSpore's meaning, every other caller
(Paddle itself, paddle-recompute, plain Paddle code) gets Paddle's member, called unchanged.

A module is MindSpore code when its globals hold this layer (the package, one of its
modules, or a class or function it defines: ``import mindspore`` under the runner,
``import paddle_mindspore as ms``, ``from paddle_mindspore import nn``),
or, under the runner (``python -m paddle_mindspore``), when its file sits in the
script's directory tree. Modules of ``paddle``, ``paddle_recompute`` and this layer (it calls
Paddle's functions, never the dispatched members) are never MindSpore code. The answer is
cached per code object; a negative answer for module-level code is not cached (the module may
import the layer further down).
"""

from __future__ import annotations

import os
import sys
from types import CodeType, FrameType, FunctionType, ModuleType

from paddle_recompute import extend

__all__ = ["mindspore_caller", "mindspore_assigner", "classify", "set_script_root", "VERDICTS",
           "operator_caller", "MACHINERY", "MACHINERY_CODES"]

_LAYER = "paddle_mindspore"
VERDICTS: dict[CodeType, bool] = {}  # read inline by the installed members (the hot path)
_SCRIPT_ROOT: list[str | None] = [None]


def set_script_root(path: str | None) -> None:
    """Under the runner: every module in ``path``'s tree is MindSpore code (None: off)."""
    _SCRIPT_ROOT[0] = os.path.abspath(path) + os.sep if path else None
    VERDICTS.clear()


def mindspore_caller(depth: int = 2) -> bool:
    """Whether the frame ``depth`` levels above this call runs MindSpore code."""
    return mindspore_frame(sys._getframe(depth))


def classify(frame: FrameType) -> bool:
    """The verdict for ``frame`` (cached per code object; see the module docstring)."""
    code = frame.f_code
    verdict = _classify(frame.f_globals, code.co_filename)
    if verdict or code.co_name != "<module>":
        VERDICTS[code] = verdict
    return verdict


# NOTE [ Operators in observed regions ]: inside a policy region (and its rerun in backward)
# paddle-recompute swaps the Tensor operators for wrappers that hand each call to the region's
# observer (``_core/tensor_methods.py``), so between the code that wrote ``a + b`` and the
# installed member stand frames of ``_core`` / ``_selective`` / ``_planner``. For the
# promoting operators the member looks past those frames to the code that wrote the operator;
# other members do not (the machinery's own ``reshape`` or ``shape`` must stay Paddle's).
MACHINERY = extend.OBSERVING_MODULES
MACHINERY_CODES: dict[CodeType, bool] = {}  # read inline by the operator members (hot path)


def operator_caller(frame: FrameType) -> bool:
    """For an operator member whose caller ``frame`` got Paddle's verdict: whether the call
    came through paddle-recompute's observation from MindSpore code (NOTE [ Operators in
    observed regions ])."""
    outer: FrameType | None = frame
    while outer is not None and _machinery(outer):
        outer = outer.f_back
    return outer is not frame and outer is not None and mindspore_frame(outer)


def _machinery(frame: FrameType) -> bool:
    code = frame.f_code
    known = MACHINERY_CODES.get(code)
    if known is None:
        known = MACHINERY_CODES[code] = (frame.f_globals.get("__name__") or "").startswith(MACHINERY)
    return known


def mindspore_frame(frame: FrameType) -> bool:
    verdict = VERDICTS.get(frame.f_code)
    return classify(frame) if verdict is None else verdict


def mindspore_assigner() -> bool:
    """For a property setter: whether the assignment ``obj.attr = value`` is MindSpore code.

    Paddle parameters route assignments through ``EagerParamBase.__setattr__`` (a Paddle frame
    between the assigning code and the setter), which is skipped.
    """
    frame = sys._getframe(2)
    if frame.f_code.co_name == "__setattr__" and frame.f_globals.get("__name__", "").startswith("paddle."):
        return mindspore_caller(4)
    return mindspore_caller(3)


def _is_layer(name: object) -> bool:
    return isinstance(name, str) and (name == _LAYER or name.startswith(_LAYER + "."))


def _classify(namespace: dict, filename: str) -> bool:
    module = namespace.get("__name__") or ""
    if module == "paddle" or module.startswith(("paddle.", "paddle_recompute")) or _is_layer(module):
        return False
    for value in list(namespace.values()):
        if isinstance(value, ModuleType):
            if _is_layer(value.__name__):
                return True
        elif isinstance(value, type | FunctionType) and _is_layer(getattr(value, "__module__", None)):
            return True
    root = _SCRIPT_ROOT[0]
    return root is not None and os.path.abspath(filename).startswith(root)
