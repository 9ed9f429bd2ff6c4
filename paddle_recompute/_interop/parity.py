"""Snapshots of a model and loss parity: train twice, without and with recompute, and
compare (public as :mod:`paddle_recompute.testing`, whose docstring has the overview)."""

from __future__ import annotations

import functools
import random
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import paddle

from .._entry.routing import Applied, recomputed_forward, route_forwards
from .compare import assert_tensors_equal, to_numpy

__all__ = [
    "snapshot_grads",
    "snapshot_params",
    "snapshot_buffers",
    "assert_loss_parity",
    "recompute_sublayers",
]


# --------------------------------------------------------------------------- snapshots


def snapshot_grads(model: paddle.nn.Layer) -> dict[str, np.ndarray | None]:
    """Copy every named parameter's gradient.

    Args:
        model: the layer whose ``named_parameters()`` are read.

    Returns:
        ``{parameter name: numpy copy of its gradient}``; a parameter without a gradient
        maps to ``None``.

    Example:
        >>> import paddle
        >>> from paddle_recompute.testing import snapshot_grads
        >>> layer = paddle.nn.Linear(2, 1)
        >>> snapshot_grads(layer)
        {'weight': None, 'bias': None}
    """
    return {name: None if p.grad is None else to_numpy(p.grad) for name, p in model.named_parameters()}


def snapshot_params(model: paddle.nn.Layer) -> dict[str, np.ndarray]:
    """Copy every named parameter's value.

    Args:
        model: the layer whose ``named_parameters()`` are read.

    Returns:
        ``{parameter name: numpy copy of its value}``.

    Example:
        >>> import paddle
        >>> from paddle_recompute.testing import snapshot_params
        >>> sorted(snapshot_params(paddle.nn.Linear(2, 1)))
        ['bias', 'weight']
    """
    return {name: to_numpy(p) for name, p in model.named_parameters()}


def snapshot_buffers(model: paddle.nn.Layer) -> dict[str, np.ndarray | None]:
    """Copy every named buffer (tensors registered with ``register_buffer``).

    Paddle keeps BatchNorm's running mean and variance as non-trainable *parameters*, so
    :func:`snapshot_params` already covers them.

    Args:
        model: the layer whose ``named_buffers()`` are read.

    Returns:
        ``{buffer name: numpy copy of its value}`` (``None`` for an unset buffer).

    Example:
        >>> import paddle
        >>> from paddle_recompute.testing import snapshot_buffers
        >>> layer = paddle.nn.Layer()
        >>> layer.register_buffer("steps", paddle.zeros([1]))
        >>> list(snapshot_buffers(layer))
        ['steps']
    """
    return {name: None if b is None else to_numpy(b) for name, b in model.named_buffers()}


# --------------------------------------------------------------------------- parity


def _seed_all(seed: int) -> None:
    paddle.seed(seed)
    np.random.seed(seed)
    random.seed(seed)


def _train(
    build_model: Callable[[bool], tuple[paddle.nn.Layer, Any]],
    train_step: Callable[[paddle.nn.Layer, Any, int], Any],
    *,
    recompute_on: bool,
    plan: Callable[[paddle.nn.Layer], Any] | None,
    steps: int,
    seed: int,
) -> dict[str, Any]:
    """One seeded training run: its losses, per-step gradients, final parameters and buffers."""
    _seed_all(seed)
    model, optimizer = build_model(recompute_on)
    if recompute_on and plan is not None:
        applied = plan(model)  # an undo handle, the model, or None
        if isinstance(applied, paddle.nn.Layer):
            model = applied
    losses, grads = [], []
    for step in range(steps):
        losses.append(to_numpy(train_step(model, optimizer, step)))
        grads.append(snapshot_grads(model))
        optimizer.step()
        optimizer.clear_grad()
    return {"losses": losses, "grads": grads, "params": snapshot_params(model),
            "buffers": snapshot_buffers(model)}


def assert_loss_parity(
    build_model: Callable[[bool], tuple[paddle.nn.Layer, Any]],
    train_step: Callable[[paddle.nn.Layer, Any, int], Any],
    *,
    steps: int = 5,
    seed: int = 0,
    recompute_plan: Callable[[paddle.nn.Layer], Any] | None = None,
    rtol: float = 0,
    atol: float = 0,
) -> None:
    """Assert that training with recompute matches training without it.

    Runs the same training twice from the same seeds (``paddle.seed``, ``numpy.random.seed``
    and ``random.seed``, reset before each run): once with ``build_model(False)`` and once
    with ``build_model(True)`` (then ``recompute_plan`` applied, if given).  Each step calls
    ``train_step`` (forward and backward), snapshots every gradient, then calls
    ``optimizer.step()`` and ``optimizer.clear_grad()``.  Losses of every step, gradients
    of every named parameter at every step, the final parameters (Paddle's BatchNorm
    running statistics are non-trainable parameters) and the final buffers must agree.
    The global generators are left seeded by the second run.

    Args:
        build_model: ``build_model(recompute) -> (model, optimizer)``; builds a fresh model
            (random initialisation included) and its optimizer, using recompute when
            ``recompute`` is True.
        train_step: ``train_step(model, optimizer, step) -> loss``; runs forward and
            ``loss.backward()`` but neither ``optimizer.step()`` nor ``clear_grad()``.
            Draw inputs from a seeded source (``paddle.randn``, ``np.random``) or derive
            them from ``step``.
        steps: number of training steps.
        seed: seed of both runs.
        recompute_plan: optional ``plan(model) -> handle, model or None`` applied to the model of
            the recompute run (e.g. :func:`recompute_sublayers`); with ``None``,
            ``build_model(True)`` is expected to set recompute up itself.
        rtol: relative tolerance (0: exact).
        atol: absolute tolerance (0: exact).

    Raises:
        AssertionError: a loss, gradient, final parameter or buffer differs; the report
            names it (``losses[2]``, ``grads[0]['fc.weight']``, ``params['bn._mean']``,
            ``buffers['steps']``).
        ValueError: ``steps`` is not a positive integer.

    Example:
        >>> import paddle
        >>> from paddle_recompute import recompute
        >>> from paddle_recompute.testing import assert_loss_parity
        >>> class Net(paddle.nn.Layer):
        ...     def __init__(self, use_recompute):
        ...         super().__init__()
        ...         self.use_recompute = use_recompute
        ...         self.block = paddle.nn.Sequential(
        ...             paddle.nn.Linear(8, 8), paddle.nn.Dropout(0.5), paddle.nn.ReLU())
        ...         self.head = paddle.nn.Linear(8, 1)
        ...     def forward(self, x):
        ...         h = recompute(self.block, x) if self.use_recompute else self.block(x)
        ...         return self.head(h)
        >>> def build_model(use_recompute):
        ...     model = Net(use_recompute)
        ...     return model, paddle.optimizer.SGD(0.1, parameters=model.parameters())
        >>> def train_step(model, optimizer, step):
        ...     loss = model(paddle.randn([4, 8])).mean()
        ...     loss.backward()
        ...     return loss
        >>> assert_loss_parity(build_model, train_step, steps=3)
    """
    __tracebackhide__ = True
    if not isinstance(steps, int) or steps < 1:
        raise ValueError(f"assert_loss_parity: `steps` must be a positive integer, got {steps!r}")
    reference = _train(build_model, train_step, recompute_on=False, plan=None, steps=steps, seed=seed)
    candidate = _train(build_model, train_step, recompute_on=True, plan=recompute_plan,
                       steps=steps, seed=seed)
    assert_tensors_equal(
        candidate, reference, rtol=rtol, atol=atol,
        err_msg=f"Training with recompute (actual) differs from training without it (expected), "
                f"{steps} steps from seed {seed}.",
    )


def recompute_sublayers(
    model: paddle.nn.Layer, names: Iterable[str], **options: Any
) -> Applied:
    """Make the named sublayers of ``model`` run through :func:`~paddle_recompute.recompute`.

    Each sublayer's ``forward`` is replaced (on that instance only) by one that calls
    ``recompute(original_forward, *args, **options, **kwargs)``; forward hooks still run
    once, outside the recomputed region.  Suited as ``recompute_plan`` with
    ``functools.partial(recompute_sublayers, names=[...], use_reentrant=False)``.

    Args:
        model: the model to modify in place.
        names: sublayer names as in ``model.named_sublayers()`` (e.g. ``"blocks.1"``).
        **options: options of :func:`~paddle_recompute.recompute`
            (``use_reentrant``, ``preserve_rng_state``, ...).

    Returns:
        A :class:`~paddle_recompute.planner.Applied` handle: ``remove()`` (or leaving its
        ``with`` block) puts the sublayers' forwards back.

    Raises:
        KeyError: a name is not a sublayer of ``model``.

    Example:
        >>> import paddle
        >>> from paddle_recompute.testing import recompute_sublayers
        >>> model = paddle.nn.Sequential(paddle.nn.Linear(4, 4), paddle.nn.ReLU())
        >>> with recompute_sublayers(model, ["0"], use_reentrant=False):
        ...     list(model(paddle.ones([2, 4])).shape)
        [2, 4]
    """
    layers = dict(model.named_sublayers())
    names = list(names)
    for name in names:
        if name not in layers:
            raise KeyError(f"recompute_sublayers: {name!r} is not a sublayer of the model; "
                           f"sublayers: {sorted(layers)}")
    wrap = functools.partial(recomputed_forward, **options)
    return route_forwards((layers[name], wrap) for name in names)
