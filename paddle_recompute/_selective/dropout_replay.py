"""Rebuild dropout's output from its kept mask instead of rerunning the kernel.

NOTE [ Dropout mask replay ]: ``_C_ops.dropout(x, seed_tensor, p, is_test, mode, seed,
fix_seed)`` returns ``out`` and saves its uint8 ``mask`` (Paddle's second, intermediate
output) for backward.  A policy region that keeps only the mask (1 byte an element) lets
the rerun skip the kernel, whose cost is drawing the random numbers, and rebuild ``out``
from the rerun's ``x`` and the mask; the generators are then set to their post-operator
snapshot, as for any skipped random operator (NOTE [ Selective recompute ]).

Paddle's CPU kernel (phi ``DropoutRawKernel``) writes, per element, ``x / T(1.0f - p)``
("upscale_in_train") or ``x`` ("downgrade_in_infer") where the mask is 1, and ``+0``
where it is 0; the GPU kernel multiplies by ``MT(1.0f / (1.0f - p))`` in the compute type
instead.  Kernels differ by device and dtype, so no formula is trusted blindly: the first
time a (place, dtype, p, mode) is seen, the real kernel runs on a probe of awkward values
(negative zero, infinities, NaN, subnormals, extremes, random normals) under saved and
restored generators, its mask is read back from the output's bits (kept where they are
not all zero; a kept ``+0`` reads as dropped, and either way its output is ``+0``), and each
candidate formula is compared with it bit for bit.  The first identical one is used for
that key from then on; when none is, the key is never replayed (the mask is not kept and
the operator reruns).
"""

from __future__ import annotations

import contextlib

import numpy as np
import paddle
from paddle import _C_ops

from .._core import ops
from .._core.rng import RngState

__all__ = ["DropoutReplay", "plan", "verdicts", "rebuilds_wrapped"]

_MODES = ("upscale_in_train", "downgrade_in_infer")
_NUMPY_DTYPES = (paddle.float32, paddle.float64)  # numpy has no bfloat16
verdicts: dict = {}  # (place, dtype, p, mode) -> formula name, or None: never replayed


class DropoutReplay:
    """How to rebuild one dropout call's output: its formula and calibration key."""

    __slots__ = ("key", "formula")

    def __init__(self, key: tuple, formula: str):
        self.key = key
        self.formula = formula

    def rebuild(self, args: tuple, mask):
        """``out`` of ``_C_ops.dropout(*args)`` given its ``mask``; None if ``args`` differ."""
        parsed = _parse(args, {})
        if parsed is None or _key(*parsed) != self.key:
            return None
        x, p, mode = parsed
        with _plain():
            return FORMULAS[self.formula](x.detach(), mask, p, mode)


@contextlib.contextmanager
def rebuilds_wrapped(wrap):
    """In the body, rebuilds run through ``wrap(rebuild)`` (a function of ``(replay, args,
    mask)``), e.g. to time them: the benchmark kit's ``kernel_times``."""
    rebuild = DropoutReplay.rebuild
    DropoutReplay.rebuild = wrap(rebuild)
    try:
        yield
    finally:
        DropoutReplay.rebuild = rebuild


@contextlib.contextmanager
def _plain():
    """Kernels as they are: unobserved by the region, no autograd, no AMP casts."""
    with ops.unobserved(), paddle.no_grad(), paddle.amp.auto_cast(enable=False):
        yield


def _parse(args: tuple, kwargs: dict):
    """``(x, p, mode)`` of a training-mode dropout call with a float ``p``; else None."""
    if kwargs or len(args) != 7:
        return None
    x, seed_tensor, p, is_test, mode, _, _ = args
    if is_test or not isinstance(p, float | int) or mode not in _MODES or not 0 <= p < 1:
        return None
    return x, float(p), mode


def _key(x, p: float, mode: str) -> tuple:
    return (str(x.place), str(x.dtype), float(np.float32(p)), mode)


def _retain(p: float) -> np.float32:
    return np.float32(1.0) - np.float32(p)  # computed in float, as the kernels do


def _numpy(x, mask, p: float, mode: str):
    """CPU, float32/64: ``x / T(1 - p)`` where kept, ``+0`` elsewhere, in one numpy pass.

    Works on the tensors' own buffers (DLPack, no copies; with numpy < 2.1, whose DLPack
    import is read-only, the output is computed in numpy and copied once).
    """
    if not x.place.is_cpu_place() or x.dtype not in _NUMPY_DTYPES:
        return None
    out = paddle.empty(x.shape, x.dtype)
    view = np.from_dlpack(out)
    shared = view.flags.writeable  # numpy < 2.1 imports DLPack read-only: then one copy more
    if not shared:
        view = np.empty(view.shape, view.dtype)
    view.fill(0)
    keep = np.from_dlpack(mask.detach()).view(np.bool_)
    with np.errstate(all="ignore"):  # inf / NaN inputs divide as in the kernel, silently
        _numpy_select(np.from_dlpack(x.detach()), keep, p, mode, view)
    return out if shared else paddle.to_tensor(view, place=x.place)


def _numpy_select(xn, keep, p: float, mode: str, out) -> None:
    if mode == "upscale_in_train":
        np.divide(xn, out.dtype.type(_retain(p)), out=out, where=keep)
    else:
        np.copyto(out, xn, where=keep)


def _selected(x, mask):
    return paddle.where(mask.astype(paddle.bool), x, paddle.zeros([], x.dtype))  # +0 if dropped


def _divide(x, mask, p: float, mode: str):
    """Any device: ``x / T(1 - p)`` after zeroing dropped elements (the CPU kernel's arithmetic)."""
    kept = _selected(x, mask)
    if mode != "upscale_in_train":
        return kept
    return kept / paddle.full([], float(_retain(p)), x.dtype)


def _multiply(x, mask, p: float, mode: str):
    """Any device: ``T(MT(x) * MT(1 / (1 - p)))``, MT float32 for half types (the GPU kernel's)."""
    kept = _selected(x, mask)
    if mode != "upscale_in_train":
        return kept
    compute = paddle.float64 if x.dtype == paddle.float64 else paddle.float32
    factor = paddle.full([], float(np.float32(1.0) / _retain(p)), compute)
    return (kept.astype(compute) * factor).astype(x.dtype)


FORMULAS = {"numpy": _numpy, "divide": _divide, "multiply": _multiply}


def _probe(dtype, place):
    rng = np.random.default_rng(0)
    tiny = np.finfo(np.float32).tiny
    special = [-0.0, np.inf, -np.inf, np.nan, tiny / 8, -tiny / 8, tiny, 3e38, -3e38, 1.0, -1.0]
    values = np.concatenate([special, rng.standard_normal(4096) * 10.0 ** rng.integers(-6, 6, 4096)])
    return paddle.to_tensor(values.astype(np.float32), place=place).astype(dtype)


def _bits(t) -> bytes:
    return t.numpy().tobytes()


def _calibrate(x, p: float, mode: str) -> str | None:
    """The first formula bit-identical with the real kernel on a probe, or None."""
    with _plain():
        return _first_identical(_probe(x.dtype, x.place), p, mode)


def _first_identical(probe, p: float, mode: str) -> str | None:
    saved = RngState.capture_generators()
    try:
        out = _C_ops.dropout(probe, None, p, False, mode, 0, False)
    except Exception:  # noqa: BLE001 - a probe the kernel refuses: never replay, never fail
        return None
    finally:
        saved.apply()  # the probe's draws never happened, as far as the region can tell
    if out.dtype != probe.dtype:
        return None
    itemsize = out.element_size()
    raw = np.frombuffer(_bits(out), np.uint8).reshape(-1, itemsize)
    mask = paddle.to_tensor(raw.any(axis=1).astype(np.uint8), place=probe.place)
    expected = _bits(out)
    for name, formula in FORMULAS.items():
        try:
            got = formula(probe, mask, p, mode)
        except Exception:  # noqa: BLE001 - e.g. no kernel for this dtype here: not a candidate
            continue
        if got is not None and got.dtype == out.dtype and _bits(got) == expected:
            return name
    return None


def plan(args: tuple, kwargs: dict, out) -> DropoutReplay | None:
    """How to rebuild this dropout call's ``out`` from its mask, or None (rerun the kernel)."""
    parsed = _parse(args, kwargs)
    if parsed is None or not isinstance(out, paddle.Tensor) or out.dtype != parsed[0].dtype:
        return None
    key = _key(*parsed)
    if key not in verdicts:
        verdicts[key] = _calibrate(*parsed)
    formula = verdicts[key]
    return None if formula is None else DropoutReplay(key, formula)
