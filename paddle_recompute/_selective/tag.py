"""Name a tensor inside a policy region, for name-based policies (``policies.save_names``)."""

from __future__ import annotations

import paddle

from .._core import hooks

__all__ = ["tag"]


def tag(tensor: paddle.Tensor, name: str) -> paddle.Tensor:
    """Give ``tensor`` a name that policies see (``PolicyInfo.name``); returns ``tensor``.

    Inside a ``recompute(..., policy=...)`` region the policy is asked again about the
    operator output ``tensor``, now with ``name``; if it keeps it, the operator that produced
    it is skipped in recomputation (when it can be, see ``policies``).  Tag a tensor right
    after the operator that makes it: saved tensors packed before the tag are not revisited.
    Outside a policy region it does nothing (JAX's ``checkpoint_name``).

    Args:
        tensor: a tensor produced inside the region.
        name: the name ``policies.save_names(...)`` matches.

    Returns:
        ``tensor`` itself.

    Raises:
        TypeError: ``tensor`` is not a ``paddle.Tensor`` or ``name`` not a string.

    Example:
        >>> import paddle, paddle_recompute as pr
        >>> from paddle_recompute import policies
        >>> lin = paddle.nn.Linear(4, 4)
        >>> def f(x):
        ...     return paddle.tanh(pr.tag(lin(x), "proj"))
        >>> x = paddle.randn([2, 4]); x.stop_gradient = False
        >>> y = pr.recompute(f, x, use_reentrant=False, policy=policies.save_names("proj"))
    """
    if not isinstance(tensor, paddle.Tensor):
        raise TypeError(f"tag: `tensor` must be a paddle.Tensor, got {type(tensor).__name__}")
    if not isinstance(name, str):
        raise TypeError(f"tag: `name` must be a string, got {name!r}")
    top = hooks.top()
    if top is not None:
        observe = getattr(top, "observe_tag", None)
        if observe is not None:
            observe(tensor, name)
    return tensor
