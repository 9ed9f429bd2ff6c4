"""Nested-tensor comparison with path reports: :func:`assert_tensors_equal` (public as
:mod:`paddle_recompute.testing`, whose docstring has the overview)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import paddle

__all__ = ["assert_tensors_equal", "to_numpy"]

_MAX_REPORTED = 10  # entries described in full in one failure report


# --------------------------------------------------------------------------- conversion


def to_numpy(value: Any) -> np.ndarray:
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
        a, e = to_numpy(actual), to_numpy(expected)
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
