"""Loss-parity testing kit (public as :mod:`paddle_recompute.testing`, whose docstring has the overview)."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import paddle

from .._core.forwards import swap_forward
from .._entry.recompute import recompute

__all__ = [
    "assert_tensors_equal",
    "snapshot_grads",
    "snapshot_params",
    "snapshot_buffers",
    "assert_loss_parity",
    "recompute_sublayers",
]

_MAX_REPORTED = 10  # entries described in full in one failure report


# --------------------------------------------------------------------------- conversion


def _to_numpy(value: Any) -> np.ndarray:
    """A numpy copy of a tensor, array or scalar (bfloat16 widened to float32)."""
    if isinstance(value, paddle.Tensor):
        if value.dtype == paddle.bfloat16:
            value = value.astype("float32")
        return np.array(value.numpy(), copy=True)
    return np.asarray(value)


_PY_SCALARS = (bool, int, float, complex)


def _is_array(value: Any) -> bool:
    return isinstance(value, (paddle.Tensor, np.ndarray, np.generic, int, float, complex))


# --------------------------------------------------------------------------- engine


def _mismatch_mask(actual: np.ndarray, expected: np.ndarray, rtol: float, atol: float) -> np.ndarray:
    """True where ``actual`` and ``expected`` differ beyond ``atol + rtol * |expected|``.

    NaNs in the same place count as equal; with ``rtol == atol == 0`` the test is exact.
    """
    inexact = np.issubdtype(actual.dtype, np.inexact) or np.issubdtype(expected.dtype, np.inexact)
    if not inexact and rtol == 0 and atol == 0:
        return np.asarray(actual != expected)
    return ~np.isclose(actual, expected, rtol=rtol, atol=atol, equal_nan=True)


def _describe_values(actual: np.ndarray, expected: np.ndarray, mask: np.ndarray) -> list[str]:
    """numpy.testing-style statistics over the mismatched elements."""
    n_bad, total = int(mask.sum()), mask.size
    lines = [f"Mismatched elements: {n_bad} / {total} ({100.0 * n_bad / total:.3g}%)"]
    if not (np.issubdtype(actual.dtype, np.number) and np.issubdtype(expected.dtype, np.number)):
        return lines
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        a = actual.astype(np.float64) if not np.iscomplexobj(actual) else actual
        e = expected.astype(np.float64) if not np.iscomplexobj(expected) else expected
        diff = np.abs(a - e)
        rel = diff / np.abs(e)
    diff_bad = np.where(mask, diff, -np.inf)
    diff_bad = np.where(np.isnan(diff_bad), np.inf, diff_bad)  # a NaN on one side is the worst
    worst = np.unravel_index(int(np.argmax(diff_bad)), mask.shape) if mask.ndim else ()
    lines.append(f"Max absolute difference: {np.max(diff[mask]):.6g}")
    lines.append(f"Max relative difference: {np.max(rel[mask]):.6g}")
    where = tuple(int(i) for i in worst)
    lines.append(
        f"Largest difference at index {where}: actual={actual[where]!r}, expected={expected[where]!r}"
    )
    return lines


def _compare_arrays(actual: np.ndarray, expected: np.ndarray, rtol: float, atol: float) -> list[str] | None:
    """None when equal, else the lines describing the difference."""
    header = f"Shape: {actual.shape}, dtype: {actual.dtype}"
    if actual.shape != expected.shape:
        return [f"Shapes differ: actual {actual.shape}, expected {expected.shape}"]
    if actual.dtype != expected.dtype:
        return [f"Dtypes differ: actual {actual.dtype}, expected {expected.dtype} (shape {actual.shape})"]
    if actual.size == 0:
        return None
    mask = _mismatch_mask(actual, expected, rtol, atol)
    if not mask.any():
        return None
    return [header, *_describe_values(actual, expected, mask)]


def _compare_leaf(actual: Any, expected: Any, rtol: float, atol: float) -> list[str] | None:
    if _is_array(actual) and _is_array(expected):
        a, e = _to_numpy(actual), _to_numpy(expected)
        if isinstance(actual, _PY_SCALARS) and not isinstance(expected, _PY_SCALARS):
            a = a.astype(e.dtype)  # a Python number takes the dtype of what it is compared with
        elif isinstance(expected, _PY_SCALARS) and not isinstance(actual, _PY_SCALARS):
            e = e.astype(a.dtype)
        return _compare_arrays(a, e, rtol, atol)
    if _is_array(actual) or _is_array(expected):
        return [f"Values differ in kind: actual {_kind(actual)}, expected {_kind(expected)}"]
    if actual is expected or actual == expected:
        return None
    return [f"Values differ: actual {actual!r}, expected {expected!r}"]


def _kind(value: Any) -> str:
    if value is None:
        return "None"
    if isinstance(value, (paddle.Tensor, np.ndarray)):
        return f"array of shape {tuple(value.shape)}"
    return type(value).__name__


def _walk(actual: Any, expected: Any, path: str, tol: tuple[float, float], out: list) -> None:
    """Append ``(path, lines)`` for every differing entry of two nested structures."""
    if isinstance(actual, Mapping) and isinstance(expected, Mapping):
        if set(actual) != set(expected):
            missing = ", ".join(sorted(map(repr, set(expected) - set(actual))))
            extra = ", ".join(sorted(map(repr, set(actual) - set(expected))))
            out.append((path, [f"Keys differ: missing [{missing}], unexpected [{extra}]"]))
            return
        for key in expected:
            _walk(actual[key], expected[key], f"{path}[{key!r}]", tol, out)
        return
    if isinstance(actual, (list, tuple)) and isinstance(expected, (list, tuple)):
        if len(actual) != len(expected):
            out.append((path, [f"Lengths differ: actual {len(actual)}, expected {len(expected)}"]))
            return
        for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
            _walk(a, e, f"{path}[{i}]", tol, out)
        return
    if isinstance(actual, (Mapping, list, tuple)) or isinstance(expected, (Mapping, list, tuple)):
        out.append((path, [f"Structures differ: actual {_kind(actual)}, expected {_kind(expected)}"]))
        return
    lines = _compare_leaf(actual, expected, *tol)
    if lines:
        out.append((path, lines))


def _named(value: Any, names: Sequence[str] | str | None) -> Any:
    """Attach ``names`` to the entries of a sequence (or to a single array)."""
    if names is None:
        return value
    if isinstance(names, str):
        return {names: value}
    if not isinstance(value, (list, tuple)) or len(names) != len(value):
        raise ValueError("assert_tensors_equal: `names` must have one name per entry of a sequence")
    return dict(zip(names, value, strict=True))


def _format_report(failures: list, rtol: float, atol: float, err_msg: str, total: int) -> str:
    title = "Not equal" if rtol == 0 and atol == 0 else f"Not equal to tolerance rtol={rtol:g}, atol={atol:g}"
    lines = [f"{title}: {len(failures)} of {total} entries differ"]
    if err_msg:
        lines.append(err_msg)
    for path, detail in failures[:_MAX_REPORTED]:
        lines.append(f"Entry {path or '<value>'}:")
        lines.extend(f"  {line}" for line in detail)
    if len(failures) > _MAX_REPORTED:
        rest = ", ".join(path for path, _ in failures[_MAX_REPORTED:])
        lines.append(f"... and {len(failures) - _MAX_REPORTED} more differing entries: {rest}")
    return "\n".join(lines)


def _count_leaves(value: Any) -> int:
    if isinstance(value, Mapping):
        return sum(_count_leaves(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return sum(_count_leaves(v) for v in value)
    return 1


def assert_tensors_equal(
    actual: Any,
    expected: Any,
    *,
    rtol: float = 0,
    atol: float = 0,
    err_msg: str = "",
    names: Sequence[str] | str | None = None,
) -> None:
    """Assert that tensors (or nested lists, tuples and dicts of them) are equal.

    Paddle tensors, numpy arrays, scalars and ``None`` may be mixed; ``None`` only equals
    ``None``, and other plain values (strings, ...) are compared with ``==``.  Shapes and
    dtypes must match exactly (a Python number takes the dtype of the other side).
    Values must satisfy ``|actual - expected| <= atol + rtol * |expected|`` (NaN equals
    NaN); with the default ``rtol = atol = 0`` the comparison is exact.  Every differing
    entry is reported.

    Args:
        actual: the values under test.
        expected: the reference values, with the same structure.
        rtol: relative tolerance.
        atol: absolute tolerance.
        err_msg: text added to the failure report.
        names: names for the entries of a sequence (one each), or one name for a single
            value; dict entries are named by their keys.

    Raises:
        AssertionError: with a report naming each differing entry, its shape and dtype,
            ``Mismatched elements: k / n (p%)``, the largest absolute and relative
            differences and the index of the largest difference.
        ValueError: ``names`` does not fit ``actual``.

    Example:
        >>> import numpy as np, paddle
        >>> from paddle_recompute.testing import assert_tensors_equal
        >>> assert_tensors_equal([paddle.ones([2]), None], [np.ones(2, "float32"), None])
        >>> actual, expected = paddle.to_tensor([1.0, 2.0]), np.array([1.0, 3.0], "float32")
        >>> try:
        ...     assert_tensors_equal(actual, expected, names="w")
        ... except AssertionError as e:
        ...     print(str(e).splitlines()[3])
          Mismatched elements: 1 / 2 (50%)
    """
    __tracebackhide__ = True
    actual, expected = _named(actual, names), _named(expected, names)
    failures: list = []
    _walk(actual, expected, "", (rtol, atol), failures)
    if failures:
        raise AssertionError(_format_report(failures, rtol, atol, err_msg, _count_leaves(expected)))


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
    return {name: None if p.grad is None else _to_numpy(p.grad) for name, p in model.named_parameters()}


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
    return {name: _to_numpy(p) for name, p in model.named_parameters()}


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
    return {name: None if b is None else _to_numpy(b) for name, b in model.named_buffers()}


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
        model = plan(model) or model
    losses, grads = [], []
    for step in range(steps):
        losses.append(_to_numpy(train_step(model, optimizer, step)))
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
        recompute_plan: optional ``plan(model) -> model or None`` applied to the model of
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
) -> paddle.nn.Layer:
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
        ``model`` itself.

    Raises:
        KeyError: a name is not a sublayer of ``model``.

    Example:
        >>> import paddle
        >>> from paddle_recompute.testing import recompute_sublayers
        >>> model = paddle.nn.Sequential(paddle.nn.Linear(4, 4), paddle.nn.ReLU())
        >>> model = recompute_sublayers(model, ["0"], use_reentrant=False)
        >>> list(model(paddle.ones([2, 4])).shape)
        [2, 4]
    """
    layers = dict(model.named_sublayers())
    for name in names:
        if name not in layers:
            raise KeyError(f"recompute_sublayers: {name!r} is not a sublayer of the model; "
                           f"sublayers: {sorted(layers)}")
        _route_through_recompute(layers[name], options)
    return model


def _route_through_recompute(layer: paddle.nn.Layer, options: dict) -> None:
    original = layer.forward  # the bound method: recompute sees the layer behind it

    def forward(*args: Any, **kwargs: Any) -> Any:
        return recompute(original, *args, **options, **kwargs)

    swap_forward(layer, forward)
