"""The planner's operator model of a block, for benchmarks that check it against reruns.

:func:`operator_graphs` records each block's operators as the planner's ``ops`` option
records them (NOTE [ Operator units ]); :func:`predicted_reruns` reads, off a graph's exact
keep / recompute frontier (NOTE [ Operator model ], NOTE [ Ancestor model ]), what a region
keeping a share of the block's saved-tensor bytes is predicted to rerun.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .._core.layers import find_roots
from .._planner.harness import Session
from .._planner.options.op_profile import profile_ops
from .._planner.profile.blocks import layer_table
from .._planner.profile.measure import profile as profile_of
from .._planner.solvers.ops import OpGraph, evaluate, live_ops, op_frontier

__all__ = ["PredictedRerun", "operator_graphs", "predicted_reruns"]


def operator_graphs(model_or_fn: Callable[..., Any], *inputs: Any,
                    blocks: Sequence | None = None, profile=None, repeats: int = 3,
                    **kwargs: Any) -> dict[str, OpGraph]:
    """The operator graph of each block of ``model_or_fn(*inputs, **kwargs)``, as the planner
    records it for its ``ops`` option.

    Args:
        model_or_fn, inputs, kwargs, blocks: as for ``planner.profile``.
        profile: the call's ``planner.profile`` (made with ``repeats=1`` when None).
        repeats: forwards recorded; each operator's time is the median over them.

    Returns:
        Block name -> graph (``ops``: per operator call its ``name``, ``time``, ``nbytes``
        kept, ``skippable``; ``slots``: per saved tensor its ``producer`` and ``reach``).
        Blocks whose calls run different operators have none.
    """
    prof = profile if profile is not None else profile_of(model_or_fn, *inputs, blocks=blocks,
                                                        repeats=1, **kwargs)
    roots = find_roots(model_or_fn, inputs, kwargs)
    session = Session((model_or_fn, inputs, kwargs), layer_table(model_or_fn, roots, blocks),
                      roots, prof)
    return {block: op_prof.graph for block, op_prof in profile_ops(session, repeats).items()}


@dataclass(frozen=True)
class PredictedRerun:
    """What the operator model predicts for the region of one block that keeps the fastest
    set of operator outputs within ``fraction`` of the block's saved-tensor bytes.

    Attributes:
        fraction: the share of the saved bytes asked for.
        keep: the kept operators' positions.
        memory: kept bytes over the block's saved bytes.
        model_time: the rerun's time over a full rerun's (operators that no needed tensor
            depends on left out).
        passed: the operators the rerun passes (up to its last uncovered saved tensor).
        skipped: of those, the kept ones it skips.
        run: of those, the ones it runs.
        prefix_time: the same kept set's time over a full rerun's when the rerun runs every
            operator it passes but the kept ones.
    """

    fraction: float
    keep: list
    memory: float
    model_time: float
    passed: int
    skipped: int
    run: int
    prefix_time: float


def predicted_reruns(graph: OpGraph, fractions: Sequence[float]) -> list[PredictedRerun]:
    """A :class:`PredictedRerun` per fraction of ``graph``'s saved-tensor bytes.

    Example:
        >>> import paddle
        >>> from paddle_recompute import bench
        >>> model = paddle.nn.Sequential(*[paddle.nn.Sequential(
        ...     paddle.nn.Linear(8, 8), paddle.nn.Tanh(), paddle.nn.Linear(8, 8)) for _ in range(2)])
        >>> x = paddle.randn([4, 8]); x.stop_gradient = False
        >>> graph = bench.operator_graphs(model, x)["0"]
        >>> [o.name for o in graph.ops]
        ['linear', 'tanh', 'linear']
        >>> everything = bench.predicted_reruns(graph, [1.0])[0]
        >>> everything.memory, everything.model_time, everything.run
        (1.0, 0.0, 0)
    """
    frontier = op_frontier(graph)
    prefix = dataclasses.replace(graph, ancestors=False)
    full = evaluate(graph, ()).time
    prefix_full = evaluate(prefix, ()).time
    saved = sum(graph.ops[p].nbytes for p in {s.producer for s in graph.slots if s.producer is not None})
    rows = []
    for f in fractions:
        p = frontier.best(f * saved)
        stop = max((s.reach for s in graph.slots if s.producer is not None and s.producer not in p.keep),
                   default=0)
        live = live_ops(graph, p.keep, stop)
        rows.append(PredictedRerun(
            fraction=f, keep=sorted(p.keep), memory=p.memory / saved, model_time=p.time / full,
            passed=stop, skipped=sum(1 for j in p.keep if j < stop and graph.ops[j].skippable),
            run=len([j for j in live if j < stop]),
            prefix_time=evaluate(prefix, p.keep).time / prefix_full))
    return rows
