"""Per-block recompute options for the planner: a registry of kinds, each with costs and a wrap.

A *kind* turns a block's profile into candidate options (``Candidate``: bytes held for
backward, extra seconds, and which sublayers to wrap) and says how to wrap a sublayer's
forward.  Built in: ``keep`` (no recompute), ``full`` (recompute the block) and ``sub``
(recompute some of the block's direct sublayers).  Adding a kind is one call, e.g. once
selective policies exist::

    register_option("policy:save_matmuls", kept_tensors_option(is_matmul_output),
                    wrap=lambda f: functools.partial(recompute, f, use_reentrant=False,
                                                     policy=save_matmuls))
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..._entry.routing import recomputed_forward
from ..profile.blocks import inside
from ..profile.result import LayerProfile, Profile, SavedTensor

__all__ = ["Candidate", "register_option", "option_kinds", "kept_tensors_option", "wrap_of",
           "candidates_for", "recompute_forward", "wrapped_forward", "load_payload"]

_MAX_SUBSETS_CHILDREN = 6  # above this many sublayers, "sub" offers single sublayers only


@dataclass(frozen=True)
class Candidate:
    """One option for one block: ``memory`` bytes held, ``time`` extra seconds, the
    qualified names of the layers whose forward the kind's wrap replaces, and the value the
    wrap is given with the forward (``payload``: e.g. the operator-level option's policy)."""

    kind: str
    name: str
    memory: int
    time: float
    targets: tuple[str, ...]
    payload: Any = None


Provider = Callable[[LayerProfile, Profile], list[tuple]]
_KINDS: dict[str, tuple[Provider, Callable | None]] = {}
_LOADERS: dict[str, Callable[[dict], Any]] = {}


def register_option(kind: str, provider: Provider, wrap: Callable | None,
                    load: Callable[[dict], Any] | None = None) -> None:
    """Make ``kind`` available to :func:`paddle_recompute.planner.plan`.

    Args:
        kind: the option kind's name (``"policy:<name>"`` for selective policies).
        provider: ``provider(block, profile) -> [(name, memory_bytes, seconds, targets)]``;
            ``targets`` are qualified layer names (the block's own name, or its sublayers').
            A fifth item, a payload, is handed to the wrap (``wrap(forward, payload)``).
        wrap: ``wrap(forward) -> forward`` applied to each target when a plan is applied;
            ``None`` for options that change nothing.
        load: for kinds with payloads: ``load(dict) -> payload``, the inverse of the
            payload's ``to_dict()`` (saved plans, ``Plan.load``).

    Raises:
        TypeError: ``kind`` is not a string or ``provider``/``wrap`` is not callable.
    """
    if not isinstance(kind, str) or not kind:
        raise TypeError(f"register_option: `kind` must be a non-empty string, got {kind!r}")
    if not callable(provider) or not (wrap is None or callable(wrap)):
        raise TypeError("register_option: `provider` must be callable and `wrap` callable or None")
    _KINDS[kind] = (provider, wrap)
    if load is not None:
        _LOADERS[kind] = load


def option_kinds() -> tuple[str, ...]:
    """Registered kinds, in registration order."""
    return tuple(_KINDS)


def wrap_of(kind: str) -> Callable | None:
    if kind not in _KINDS:
        raise ValueError(f"plan: option kind {kind!r} is not registered; registered: {option_kinds()}")
    return _KINDS[kind][1]


def wrapped_forward(kind: str, forward: Callable, payload: Any = None) -> Callable:
    """``forward`` under ``kind``'s wrap (given ``payload`` when there is one)."""
    wrap = wrap_of(kind)
    return wrap(forward) if payload is None else wrap(forward, payload)


def load_payload(kind: str, data: dict | None) -> Any:
    """A saved payload of ``kind`` back as a value (``None`` stays ``None``)."""
    if data is None:
        return None
    if kind not in _LOADERS:
        raise ValueError(f"Plan.load: option kind {kind!r} saved a payload but registers no "
                         f"loader; register_option({kind!r}, ..., load=...) before loading")
    return _LOADERS[kind](data)


def candidates_for(block: LayerProfile, prof: Profile, kinds) -> list[Candidate]:
    """Every candidate of ``kinds`` for ``block``."""
    out = []
    for kind in kinds:
        wrap_of(kind)  # validates the name
        for name, memory, seconds, targets, *payload in _KINDS[kind][0](block, prof):
            out.append(Candidate(kind, name, int(memory), float(seconds), tuple(targets),
                                 payload[0] if payload else None))
    return out


def recompute_forward(forward: Callable, **options) -> Callable:
    """``forward`` as a non-reentrant recompute region with ``options`` (a plan's wrap)."""
    return recomputed_forward(forward, use_reentrant=False, **options)


def _keep(block: LayerProfile, prof: Profile):
    return [("keep", block.saved_bytes, 0.0, ())]


def _full(block: LayerProfile, prof: Profile):
    # the region holds its inputs; the rerun costs one forward of the block
    return [("full", block.input_bytes, block.recompute_s or 0.0, (block.name,))]


def _sub(block: LayerProfile, prof: Profile):
    kids = [prof.layers[c] for c in block.children if prof.layers[c].saved_bytes > 0]
    sizes = range(1, len(kids)) if len(kids) <= _MAX_SUBSETS_CHILDREN else (1,)
    out = []
    for r in sizes:
        for group in itertools.combinations(kids, r):
            memory = (block.saved_bytes - sum(k.saved_bytes for k in group)
                      + sum(k.input_bytes for k in group))
            if memory < block.saved_bytes:
                label = "+".join(k.name.rsplit(".", 1)[-1] for k in group)
                out.append((f"sub:{label}", memory, sum(k.recompute_s or 0.0 for k in group),
                            tuple(k.name for k in group)))
    return out


def kept_tensors_option(keep: Callable[[SavedTensor], bool], name: str | None = None,
                        skipped: Callable[[LayerProfile], bool] | None = None) -> Provider:
    """A provider for selective recompute of whole blocks.

    Memory: the block's inputs plus the saved tensors ``keep`` accepts (from the profile's
    records; ``SavedTensor.producer`` names the op that made each one).  Time: the block's
    recompute time minus the forward time of its sublayers that ``skipped`` accepts (the
    operators a policy keeps are not rerun); without ``skipped``, the full recompute time,
    an upper bound.

    Example:
        >>> from paddle_recompute.planner import kept_tensors_option
        >>> provider = kept_tensors_option(lambda s: s.producer in ("matmul", "linear"),
        ...                                skipped=lambda row: row.type == "Linear")
    """

    def provider(block: LayerProfile, prof: Profile):
        saved = [s for s in prof.saved if s.layer == block.name or inside(s.layer, block.name)]
        memory = block.input_bytes + sum(s.nbytes for s in saved if keep(s))
        saved_time = 0.0
        if skipped is not None:
            saved_time = sum(row.forward_s for row in _outermost(block, prof, skipped))
        seconds = max((block.recompute_s or 0.0) - saved_time, 0.0)
        return [(name or "kept", memory, seconds, (block.name,))]

    return provider


def _outermost(block: LayerProfile, prof: Profile, accept) -> list[LayerProfile]:
    """Sublayers of ``block`` that ``accept`` takes and that sit in no other taken one."""
    taken: list[str] = []
    for name, row in prof.layers.items():
        if inside(name, block.name) and not any(inside(name, t) for t in taken):
            if accept(row):
                taken.append(name)
    return [prof.layers[t] for t in taken]


register_option("keep", _keep, None)
register_option("full", _full, recompute_forward)
register_option("sub", _sub, recompute_forward)
