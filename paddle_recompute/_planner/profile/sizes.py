"""A profile at another sequence length or batch size, fitted from profiles at a few sizes.

NOTE [ Sizes ]: profiles of one model at several sizes of one input dimension (the
sequence length of every token tensor, or the batch) differ only in their numbers: the same
layers, calls and saved tensors.  Each saved tensor's bytes are a polynomial in the size
``n`` of degree at most 2 (``b*s*h`` for a hidden state, ``b*a*s*s`` for attention scores),
so every byte count the planner reads (a layer's or call's saved, own and input bytes, a
shared range, a shared input, the total) is one too.  From profiles at two sizes each count
is fitted as ``c1*n + c2*n^2`` (a saved activation grows with the input; a count equal at
both sizes stays constant).  A constant inside a growing count would be spread over both
terms (a loss's three 4-byte scalars came out 252 bytes short at 512 from 64 and 128), so
the saved tensors of equal bytes at every size are taken out of the saved and own bytes of
the layer that saved them (and of its callers) before the fit and added back after; from three or more sizes
as ``c0 + c1*n + c2*n^2`` by least squares, exact for any mix.  The fit is exact on
PaddleFormers' Llama, Ernie 4.5 and Phi-3 (``tests/planner/test_profile_scale.py``: every
byte count of a profile at 512 fitted from 32, 64 and 128 equals the one measured at 512;
from 64 and 128, all but the model's output bytes, which plans do not read).
A saved tensor's shape is scaled dimension by dimension, linearly through its two largest
sizes.  Times get the same two terms, with neither coefficient negative (a noisy pair of
timings can give a negative square term): when the exact fit has one, the better of
``c*n`` and ``c*n^2`` alone is used.  Compute grows at most as fast as ``n^2`` in a
transformer, so a time at 4x the size is off by the timings' noise times about 16.
"""

from __future__ import annotations

import copy
from dataclasses import replace

import numpy as np

from .result import Profile

__all__ = ["input_sizes", "at_size"]


def input_sizes(api: str, profiles: list[Profile], target: list) -> tuple[list[int], int]:
    """The size of each profile and of the target inputs (``[[shape, dtype], ...]``), from
    the input dimensions that differ among them (NOTE [ Sizes ]); all 0 when none does.

    Raises:
        ValueError: the inputs differ in number, dtype or rank, or in more than one size.
    """
    shapes = [_inputs(api, p) for p in profiles] + [target]
    first = shapes[0]
    for other in shapes[1:]:
        if len(other) != len(first) or any(len(a[0]) != len(b[0]) or a[1] != b[1]
                                           for a, b in zip(first, other, strict=True)):
            raise ValueError(f"{api}: the profiles and the inputs given differ in the number, "
                             f"rank or dtype of their input tensors ({first} vs {other}); only "
                             "their sizes may differ")
    varying = [(i, d) for i, (shape, _) in enumerate(first) for d in range(len(shape))
               if len({s[i][0][d] for s in shapes}) > 1]
    sizes = []
    for s in shapes:
        values = {s[i][0][d] for i, d in varying}
        if len(values) > 1:
            raise ValueError(f"{api}: the inputs differ in more than one size ({sorted(values)} in "
                             f"the dimensions that vary: {varying}); profile at sizes that differ "
                             "in one of them (the sequence length, or the batch) at a time")
        sizes.append(values.pop() if values else 0)
    return sizes[:-1], sizes[-1]


def _inputs(api: str, prof: Profile) -> list:
    if not prof.structure or "inputs" not in prof.structure:
        raise ValueError(f"{api}: a profile given records no input shapes (a file written "
                         "before they were recorded); profile the model again")
    return prof.structure["inputs"]


def at_size(api: str, profiles: list[Profile], sizes: list[int], n: int) -> Profile:
    """A profile of the profiled model at size ``n``, fitted from ``profiles`` at ``sizes``
    (NOTE [ Sizes ]); one measured at ``n`` is returned as it is.

    Raises:
        ValueError: fewer than two sizes, or profiles that differ in more than their numbers.
    """
    if n in sizes:
        return copy.deepcopy(profiles[sizes.index(n)])
    by_size = {s: p for s, p in zip(sizes, profiles, strict=True)}
    if len(by_size) < 2:
        raise ValueError(f"{api}: to scale to size {n} the profiles must be at two sizes at "
                         f"least (given: {sorted(by_size)}); profile the small model at two "
                         "sequence lengths (or batches) too")
    order = sorted(by_size)
    profs = [by_size[s] for s in order]
    _same_shape(api, profs)
    fit = _Fit(order, n)
    base = profs[-1]
    out = copy.deepcopy(base)
    out.op_profiles = {}
    const = _constants(profs)
    out.total_bytes = fit.nbytes([p.total_bytes for p in profs], sum(const.values()))
    out.forward_s = fit.seconds([p.forward_s for p in profs])
    for name, row in out.layers.items():
        rows = [p.layers[name] for p in profs]
        fixed = {"saved_bytes": _under(const, name), "self_bytes": const.get(name, 0)}
        out.layers[name] = replace(row, **{k: fit.nbytes([getattr(r, k) for r in rows], fixed.get(k, 0))
                                           for k in ("saved_bytes", "self_bytes", "input_bytes",
                                                     "output_bytes")},
                                   forward_s=fit.seconds([r.forward_s for r in rows]),
                                   recompute_s=fit.maybe_seconds([r.recompute_s for r in rows]))
    for cid, row in out.calls.items():
        rows = [p.calls[cid] for p in profs]
        shared = [(f, last, fit.nbytes([r.shared_bytes[k][2] for r in rows]))
                  for k, (f, last, _) in enumerate(row.shared_bytes)]
        fixed = {"saved_bytes": _under(const, row.layer) if row.index == 0 else 0,
                 "self_bytes": const.get(row.layer, 0) if row.index == 0 else 0}
        out.calls[cid] = replace(row, **{k: fit.nbytes([getattr(r, k) for r in rows], fixed.get(k, 0))
                                         for k in ("saved_bytes", "self_bytes", "input_bytes")},
                                 forward_s=fit.seconds([r.forward_s for r in rows]),
                                 recompute_s=fit.seconds([r.recompute_s for r in rows]),
                                 shared_bytes=shared)
    out.shared_inputs = [(fit.nbytes([p.shared_inputs[k][0] for p in profs]), names)
                         for k, (_, names) in enumerate(base.shared_inputs)]
    out.shared_call_inputs = [(fit.nbytes([p.shared_call_inputs[k][0] for p in profs]), calls)
                              for k, (_, calls) in enumerate(base.shared_call_inputs)]
    out.saved = [_saved_at(fit, [p.saved[k] for p in profs]) for k in range(len(base.saved))]
    out.policy_costs = _costs_at(fit, profs)
    out.step_costs = {b: {k: fit.seconds([p.step_costs[b][k] for p in profs]) for k in costs}
                      for b, costs in base.step_costs.items()
                      if all(k in p.step_costs.get(b, {}) for p in profs for k in costs)}
    return out


def _constants(profs: list[Profile]) -> dict[str, int]:
    """Per layer, the bytes of the saved tensors it saved that are the same at every size."""
    out: dict[str, int] = {}
    for k, t in enumerate(profs[-1].saved):
        if len({p.saved[k].nbytes for p in profs}) == 1 and t.nbytes:
            out[t.layer] = out.get(t.layer, 0) + t.nbytes
    return out


def _under(const: dict[str, int], name: str) -> int:
    """The constant bytes saved by layer ``name`` and its sublayers."""
    return sum(n for layer, n in const.items() if layer == name or name == "" or layer.startswith(name + "."))


def _same_shape(api: str, profs: list[Profile]) -> None:
    """The profiles have the same layers, calls, blocks and saved tensors (NOTE [ Sizes ])."""
    first = profs[0]
    for p in profs[1:]:
        for what, a, b in (("layers", list(first.layers), list(p.layers)),
                           ("calls", list(first.calls), list(p.calls)),
                           ("blocks", first.blocks, p.blocks),
                           ("saved tensors", [(t.layer, t.op) for t in first.saved],
                            [(t.layer, t.op) for t in p.saved]),
                           ("shared ranges", [[s[:2] for s in c.shared_bytes] for c in first.calls.values()],
                            [[s[:2] for s in c.shared_bytes] for c in p.calls.values()]),
                           ("shared inputs", [s[1] for s in first.shared_inputs],
                            [s[1] for s in p.shared_inputs]),
                           ("shared call inputs", [s[1] for s in first.shared_call_inputs],
                            [s[1] for s in p.shared_call_inputs])):
            if a != b:
                raise ValueError(f"{api}: the profiles at different sizes differ in their {what}, "
                                 "so their numbers cannot be fitted across sizes; profile at sizes "
                                 "where the model runs the same layers and operators")


def _saved_at(fit: _Fit, tensors: list):
    last, before = tensors[-1], tensors[-2]
    shape = tuple(int(round(b + (b - a) * (fit.n - fit.sizes[-1]) / (fit.sizes[-1] - fit.sizes[-2])))
                  for a, b in zip(before.shape, last.shape, strict=True))
    return replace(last, shape=shape, nbytes=fit.nbytes([t.nbytes for t in tensors]))


def _costs_at(fit: _Fit, profs: list[Profile]) -> dict:
    """Measured (bytes, seconds) of policy options measured at every size (not ``ops``
    points, which belong to operator graphs a scaled profile leaves out)."""
    out: dict = {}
    for b, costs in profs[-1].policy_costs.items():
        for kind in costs:
            points = [p.policy_costs.get(b, {}).get(kind) for p in profs]
            if kind.startswith("ops:") or any(c is None for c in points):
                continue
            out.setdefault(b, {})[kind] = (fit.nbytes([c[0] for c in points]),
                                           fit.seconds([c[1] for c in points]))
    return out


class _Fit:
    """Values at ``sizes`` to the value at ``n`` (NOTE [ Sizes ])."""

    def __init__(self, sizes: list[int], n: int):
        self.sizes, self.n = sizes, n
        x = np.asarray(sizes, dtype=np.float64)
        self.terms = [np.ones_like(x)] * (len(sizes) > 2) + [x, x * x]
        self.at_n = np.asarray([1.0] * (len(sizes) > 2) + [n, n * n])

    def _solve(self, columns: list, ys) -> np.ndarray:
        return np.linalg.lstsq(np.stack(columns, axis=1), np.asarray(ys, dtype=np.float64),
                               rcond=None)[0]

    def nbytes(self, ys: list, constant: int = 0) -> int:
        """The count at ``n``; ``constant``: bytes of it known not to grow (NOTE [ Sizes ])."""
        if len(set(ys)) == 1:  # a constant (a scalar loss): not spread over n and n^2
            return int(ys[0])
        constant = min(constant, *ys)
        grown = float(self._solve(self.terms, [y - constant for y in ys]) @ self.at_n)
        return max(int(round(grown)) + constant, 0)

    def seconds(self, ys: list) -> float:
        if len(set(ys)) == 1:
            return float(ys[0])
        coef = self._solve(self.terms, ys)
        if (coef >= 0).all():
            return float(coef @ self.at_n)
        x = np.asarray(self.sizes, dtype=np.float64)
        best = None
        for power in (1, 2):
            c = max(float(self._solve([x ** power], ys)[0]), 0.0)
            err = float(np.sum((c * x ** power - np.asarray(ys)) ** 2))
            if best is None or err < best[0]:
                best = (err, c * self.n ** power)
        return best[1]

    def maybe_seconds(self, ys: list) -> float | None:
        return None if any(y is None for y in ys) else self.seconds(ys)
