"""The planner's side of the selective frame: what a policy region held and how long its
rerun took, for the measured policy options (``options/policies.py``).

:class:`MeasuredFrame` is a ``PolicyFrame`` built through its override points (NOTE [
Non-reentrant frames ]): it counts the buffers behind the saved tensors its handles carry
(``kept_slot``), times its reruns (``recompute``) and counts their operator calls
(``recomputation``), and joins the list it was given when its forward ends (``finish``).
:func:`measured_regions` makes this thread's policy regions such frames for the body
(``_entry.recompute.policy_frames``), so regions outside a measurement pay for none of it.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator
from dataclasses import dataclass

from ..._entry.recompute import policy_frames
from ..._selective.frame import PolicyFrame
from ..harness import clock

__all__ = ["MeasuredFrame", "RerunCounts", "measured_regions", "buffer_of", "add_buffer"]


@dataclass(frozen=True)
class RerunCounts:
    """The operator calls of one rerun of a policy region.

    Each call the rerun numbered is counted in exactly one of ``ran``, ``skipped``,
    ``rebuilt`` and ``left_out``: ``observed`` is their sum.  A call that raised (and was
    caught by the region) is in none, as in the forward's numbering.

    Attributes:
        observed: calls the rerun numbered (it stops after the last saved tensor it needs;
            the call that handed that tensor over is numbered).
        ran: calls whose kernel ran, the one at which the rerun stopped included.
        skipped: calls replayed from their kept outputs.
        rebuilt: dropout outputs rebuilt from their kept masks.
        left_out: calls no needed tensor depends on, not run.
    """

    observed: int
    ran: int
    skipped: int
    rebuilt: int
    left_out: int


class MeasuredFrame(PolicyFrame):
    """A policy region that reports its held bytes, its rerun time and its reruns' operator
    calls (``reruns``: a :class:`RerunCounts` per rerun, in order)."""

    __slots__ = ("finished", "slot_bytes", "rerun_ns", "held", "reruns", "_running")

    def __init__(self, finished: list, policy, function, args, kwargs, **fields):
        super().__init__(policy, function, args, kwargs, **fields)
        self.finished = finished
        self.slot_bytes: dict[int, int] = {}  # buffer start -> bytes, of saved tensors handles carry
        self.rerun_ns = 0  # by the planner's clock (NOTE [ Planning clock ] in harness.py)
        self.held = 0  # held_bytes(), counted when the forward ends
        self.reruns: list[RerunCounts] = []
        self._running: list = []  # the recomputations of the rerun under way

    def kept_slot(self, tensor) -> None:
        add_buffer(self.slot_bytes, tensor)

    def finish(self, early_stop: bool) -> None:
        super().finish(early_stop)
        # counted now: the frame may let go of its inputs and kept outputs later
        # (NOTE [ Inputs only for a rerun ])
        self.held = self._count_held()
        self.finished.append(self)

    def recomputation(self, needed: set):
        rec = super().recomputation(needed)
        self._running.append(rec)
        return rec

    def recompute(self):
        start = clock()
        try:
            rec = super().recompute()
        finally:
            running, self._running = self._running, []
        self.rerun_ns += round((clock() - start) * 1e9)
        self.reruns.extend(RerunCounts(r.op_index, r.ran, r.skipped, r.rebuilt, r.left_out)
                           for r in running)  # two when stand-ins escaped (NOTE in frame.py)
        return rec

    def held_bytes(self) -> int:
        """Device bytes this region held for backward when its forward ended, besides its
        inputs, parameters and buffers: the allocations behind kept saved tensors, kept
        outputs and masks, each once (a kept view holds its whole buffer; offloaded ones are
        on the host and not counted).  Counted then: a backward lets go of the kept outputs
        (NOTE [ Inputs only for a rerun ])."""
        return self.held

    def _count_held(self) -> int:
        sizes = dict(self.slot_bytes)
        for op in self.ops:
            for t, place in zip(op.held, op.places, strict=True):
                if t is not None and place is None:
                    add_buffer(sizes, t)
            if op.mask is not None and op.mask[1] is None:
                add_buffer(sizes, op.mask[0])
        for t in self._alive_anyway():
            if t._is_initialized():
                sizes.pop(buffer_of(t)[0], None)
        return _covered(sizes)

    def _alive_anyway(self):
        """Inputs, parameters and buffers: kept views of them (``mask[:s, :s]``) cost nothing,
        as the planner counts the inputs held by whatever made them."""
        yield from self.leaves
        for layer in self.state.layers:
            yield from layer.parameters(include_sublayers=False)
            yield from layer.buffers(include_sublayers=False)


@contextlib.contextmanager
def measured_regions() -> Iterator[list]:
    """In the body, this thread's policy regions are :class:`MeasuredFrame` objects, each
    appended to the list yielded when its forward ends (nested regions before the one
    around them); another thread's regions are not measured."""
    finished: list = []
    with policy_frames(functools.partial(MeasuredFrame, finished)):
        yield finished


def _covered(sizes: dict) -> int:
    """Bytes covered by the spans ``[ptr, ptr + n)``: views inside one buffer count once."""
    total, end = 0, -1
    for start, n in sorted(sizes.items()):
        if start + n > end:
            total += start + n - max(start, end)
            end = start + n
    return total


def buffer_of(t) -> tuple[int, int]:
    """(start, bytes) of the allocation behind ``t``: a view keeps all of it alive."""
    return t.data_ptr() - t._offset(), t._holder_size()


def add_buffer(sizes: dict, t) -> None:
    """Count the allocation behind ``t`` in ``sizes`` (start -> bytes), once."""
    if t._is_initialized():
        start, n = buffer_of(t)
        sizes[start] = max(sizes.get(start, 0), n)
