"""Metadata comparison between forward and recomputation (count, shape, dtype, place)."""

from __future__ import annotations

import paddle
from paddle.base import core

from .errors import RecomputeError

__all__ = ["tensor_meta", "check_same", "check_count"]

# A CPU-only build has one place; reading and comparing Place objects would cost ~2 µs
# per saved tensor for nothing.
_ONE_PLACE = not (core.is_compiled_with_cuda() or core.is_compiled_with_xpu()
                  or paddle.device.get_all_custom_device_type())


def tensor_meta(t) -> tuple:
    """Shape, dtype (and place): ``t.shape`` is a fresh list each read, kept as it is."""
    if _ONE_PLACE:
        return (t.shape, t.dtype)
    return (t.shape, t.dtype, t.place)


def _fmt(meta) -> str:
    place = f", place={meta[2]}" if len(meta) > 2 else ""
    return f"shape={list(meta[0])}, dtype={meta[1]}{place}"


def check_same(api: str, what: str, index: int, forward_meta, recompute_meta, trace: str = "") -> None:
    if forward_meta != recompute_meta:
        raise RecomputeError(
            f"{api}: {what} {index} differs between the original forward and the recomputation.\n"
            f"  forward:   {_fmt(forward_meta)}\n"
            f"  recompute: {_fmt(recompute_meta)}\n"
            "The recomputed function must be deterministic in its control flow and shapes; "
            "keep preserve_rng_state=True if it draws random numbers, or pass "
            "determinism_check='none' to skip this check." + trace
        )


def check_count(api: str, what: str, forward_count: int, recompute_count: int, trace: str = "") -> None:
    if forward_count != recompute_count:
        raise RecomputeError(
            f"{api}: a different number of {what} was produced during the original forward and "
            f"the recomputation.\n  Number of {what} during forward: {forward_count}\n"
            f"  Number of {what} during recomputation: {recompute_count}\n"
            "The recomputed function must take the same path as the forward "
            "(no data-dependent branches on state that changed)." + trace
        )
