"""The rerun of a policy region: skips the operators whose outputs were kept.

See NOTE [ Selective recompute ] in ``_selective/frame.py``.
"""

from __future__ import annotations

from .._core.nonreentrant import Recomputation
from .._core.stop import StopRecompute
from .oprecord import Inputs

__all__ = ["PolicyRecomputation"]


class PolicyRecomputation(Recomputation):
    """Rerun of a policy region: skips the operators whose outputs were kept."""

    __slots__ = ("op_index", "skipped", "rebuilt")

    def __init__(self, frame, needed: set):
        super().__init__(frame, needed)
        self.op_index = 0
        self.skipped = 0
        self.rebuilt = 0  # dropout outputs rebuilt from their kept masks

    def observe_op(self, name, fn, args, kwargs):
        k = self.op_index
        self.op_index = k + 1
        try:
            return self._observe(k, name, fn, args, kwargs)
        except BaseException:
            self.op_index = k  # a call that raised was not numbered in forward either
            raise

    def _observe(self, k: int, name, fn, args, kwargs):
        ops = self.frame.ops
        op = ops[k] if k < len(ops) else None
        # A different operator or pack count: the rerun took another path; let the checks report it.
        if op is None or op.name != name or self.count != op.first:
            return fn(*args, **kwargs)
        if op.skippable and op.unchanged():
            self._fill_slots(op, args, kwargs)
            self.skipped += 1
            return op.replay()
        if op.stops_before_running(self.last):  # its slots up to the last needed are at hand
            self._fill_slots(op, args, kwargs)  # raises StopRecompute at the last one
        if op.rebuildable() and not kwargs:
            out = op.rebuild(args)
            if out is not None:  # else called otherwise than in forward: run it
                self._fill_slots(op, args, kwargs)
                self.rebuilt += 1
                return out
        return fn(*args, **kwargs)

    def _fill_slots(self, op, args: tuple, kwargs: dict) -> None:
        inputs = Inputs(args, kwargs)
        for source in op.slots:
            self._fill(source, inputs)

    def _fill(self, source, inputs) -> None:
        """What this slot's pack call would have done in a rerun of the operator.

        Runs in the operator wrapper, outside Paddle's hooks, so an early stop raises here.
        """
        if self.stopper.stopped:
            raise StopRecompute
        index = self.count
        self.count = index + 1
        if index in self.needed:  # never a kept slot: those are not needed
            self.frame.storage[index] = inputs()[source.position].detach()
        if index == self.last:
            self.stopper.stop_here()
