"""``Tensor.register_hook``: MindSpore's gradient hooks, and the registry that lets them fire on
the tensors the layer differentiates in their place.

NOTE [ Gradient hooks on copies ]: MindSpore 2.10 (PyNative) fires a hook registered on a
tensor when a gradient transform (``ms.grad``, ``value_and_grad``, ``GradOperation``, a
training cell) computes that tensor's gradient: on an intermediate of the forward, on a
Parameter among the ``weights``, and on an input at a ``grad_position``. The hooks of one
tensor run in registration order, each on the previous one's result; a hook that returns a
Tensor replaces the gradient, one that returns None leaves it. ``handle.remove()`` takes one
out (twice is harmless). A tensor outside the differentiated graph never fires.
``tensor.hooks()`` is a new list of the hook functions, in registration order (arguments are
ignored, as in MindSpore). ``Tensor.remove_hook(handle_id)`` takes out the hook with that
handle's ``id`` from whichever tensor holds it (ids are process-wide: ``x.remove_hook(h.id)``
removes ``h``'s hook from ``z`` too); an unknown id does nothing; an id that is not an ``int``
raises ``TypeError`` (recorded, group ``listing``).

Paddle runs a tensor hook only on a non-leaf under ``paddle.grad`` (a leaf's hook is skipped),
and the layer's grad transforms differentiate *detached copies* of their inputs
(``_grad.py``). So every hook is kept here, on the tensor it was registered on
(``_ms_grad_hooks``), and: a non-leaf that records gradients also gets it through Paddle
(intermediates, which fire where Paddle's backward reaches them, once per backward, recompute
regions included); the grad transforms apply the hooks of each input and weight they return
a gradient for (``apply``), the copies standing for their originals. A tensor that records no
gradient when the hook is registered (a forward under ``no_grad``, such as a reentrant
region's first pass) keeps the hook here only: it is not part of any graph.
"""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Callable
from typing import Any

import paddle

from ._paddle_members import paddle_member

__all__ = ["HookHandle", "register_hook", "remove_hook", "hooks", "apply"]

_IDS = itertools.count(1)
# handle id -> the tensor holding that hook (ids are process-wide, as MindSpore's)
_HOLDERS: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


class HookHandle:
    """MindSpore's ``_TensorHookHandle``: ``id``, ``tensor_weakref`` and ``remove()``."""

    def __init__(self, tensor: paddle.Tensor):
        self.id = next(_IDS)
        self.tensor_weakref = weakref.ref(tensor)

    def remove(self) -> None:
        """Take the hook out; removing it again does nothing."""
        remove_hook(self.id)


def remove_hook(handle_id: int) -> None:
    """``Tensor.remove_hook(handle_id)``: take out the hook registered with that handle id,
    on whichever tensor holds it; an unknown id does nothing."""
    if not isinstance(handle_id, int):
        raise TypeError(f"argument 1 must be int, not {type(handle_id).__name__}")
    tensor = _HOLDERS.pop(handle_id, None)
    if tensor is None:
        return
    tensor.__dict__.get("_ms_grad_hooks", {}).pop(handle_id, None)
    paddle_id = tensor.__dict__.get("_ms_paddle_hooks", {}).pop(handle_id, None)
    if paddle_id is not None:
        paddle_member(paddle.Tensor, "_remove_grad_hook")(tensor, paddle_id)


def hooks(tensor: paddle.Tensor, *ignored: Any) -> list:
    """``Tensor.hooks()``: the hook functions registered on ``tensor``, in registration order
    (a new list; MindSpore 2.10 ignores any argument)."""
    return list(tensor.__dict__.get("_ms_grad_hooks", {}).values())


def _chained(hook: Callable) -> Callable:
    def run(grad: paddle.Tensor) -> paddle.Tensor:
        new = hook(grad)
        return grad if new is None else new

    return run


def register_hook(tensor: paddle.Tensor, hook: Callable) -> HookHandle:
    """``Tensor.register_hook(hook)``: ``hook(grad)`` runs when the gradient of ``tensor`` is
    computed; see NOTE [ Gradient hooks on copies ]."""
    if not callable(hook):
        raise TypeError(f"Expected a callable hook function, but got {type(hook).__name__}.")
    handle = HookHandle(tensor)
    if not tensor.stop_gradient and not tensor.is_leaf:
        paddle_handle = paddle_member(paddle.Tensor, "register_hook")(tensor, _chained(hook))
        # its id only: Paddle's handle holds the tensor, a cycle through its __dict__
        tensor.__dict__.setdefault("_ms_paddle_hooks", {})[handle.id] = paddle_handle._hook_id
    tensor.__dict__.setdefault("_ms_grad_hooks", {})[handle.id] = hook
    _HOLDERS[handle.id] = tensor
    return handle


def apply(source: Any, grad: paddle.Tensor) -> paddle.Tensor:
    """``grad`` through the hooks registered on ``source`` (the input or weight it is the
    gradient of), in registration order."""
    registered = getattr(source, "__dict__", {}).get("_ms_grad_hooks")
    for hook in list(registered.values()) if registered else ():
        grad = _chained(hook)(grad)
    return grad
