"""The rerun of a policy region: skips the operators whose outputs were kept, and leaves out
the ones no needed tensor depends on.

See NOTE [ Selective recompute ] in ``_selective/frame.py`` and NOTE [ Dead operators ] in
``_selective/liveness.py``.
"""

from __future__ import annotations

import gc
import weakref

import paddle
from paddle import _C_ops

from .._core import ops as _ops
from .._core.errors import RecomputeError
from .._core.identity import detached
from .._core.nonreentrant import Recomputation
from .._core.stop import StopRecompute
from .oprecord import FromInput, Inputs

__all__ = ["PolicyRecomputation"]

_API = "recompute(policy=...)"


class PolicyRecomputation(Recomputation):
    """Rerun of a policy region: skips the operators whose outputs were kept, leaves out the
    dead ones; ``ran``, ``skipped``, ``rebuilt`` and ``left_out`` count operator calls."""

    __slots__ = ("op_index", "skipped", "rebuilt", "left_out", "ran", "stand_ins", "strayed")

    def __init__(self, frame, needed: set):
        super().__init__(frame, needed)
        self.op_index = 0
        self.skipped = 0
        self.rebuilt = 0  # dropout outputs rebuilt from their kept masks
        self.left_out = 0  # dead operators not run (NOTE [ Dead operators ])
        self.ran = 0
        self.stand_ins = {}  # data pointer -> weak ref of a stand-in made for a dead operator
        self.strayed = False  # met an operator other than the recorded one: run all from there

    def observe_op(self, name, fn, args, kwargs):
        """Number the call and run, skip, rebuild or leave it out: ``op_index`` counts the
        calls that are one of these (``ran + skipped + rebuilt + left_out``)."""
        k = self.op_index
        self.op_index = k + 1
        done = self.ran + self.skipped + self.rebuilt + self.left_out
        try:
            return self._observe(k, name, fn, args, kwargs)
        except BaseException:
            # A call that raised was not numbered in forward either; but a stop raised by a
            # Python frame around a kernel that ran (NOTE [ Early stop ]) ends a counted call.
            if self.ran + self.skipped + self.rebuilt + self.left_out == done:
                self.op_index = k
            raise

    def observe_read(self, tensor) -> None:
        """Python reads ``tensor``'s values: never a stand-in's."""
        if self.stand_ins and self._stand_in(tensor):
            raise RecomputeError(
                f"{_API}: the rerun read the values of a tensor it did not recompute "
                f"(operator #{self.op_index}); the forward did not read it there, so the "
                f"region ran differently in its rerun")

    def _observe(self, k: int, name, fn, args, kwargs):
        ops = self.frame.ops
        op = ops[k] if k < len(ops) else None
        # A different operator or pack count: the rerun took another path; let the checks report it.
        if op is None or op.name != name or self.count != op.first:
            # Run it first: a call that raises (``x[3]`` ending ``q, k, v = x``) was not
            # numbered in forward either, and raises alike on a stand-in of the same shape.
            out = self._kernel(fn, args, kwargs)
            self.strayed = True
            self._check_inputs(k, name, args, kwargs)
            return out
        if op.skippable and op.unchanged():
            self._fill_slots(op, args, kwargs)
            self.skipped += 1
            return op.replay()
        if op.dead and not self.strayed:
            self._fill_slots(op, args, kwargs)
            self.left_out += 1
            out, made = op.stand_ins(_empty)
            for t in made:
                if t._is_initialized():
                    self.stand_ins[t.data_ptr()] = weakref.ref(t)
            return out
        if op.stops_before_running(self.last):  # its slots up to the last needed are at hand
            self._fill_slots(op, args, kwargs)  # raises StopRecompute at the last one
        if op.rebuildable() and not kwargs:
            self._check_inputs(k, name, args, kwargs)
            out = op.rebuild(args)
            if out is not None:  # else called otherwise than in forward: run it
                self._fill_slots(op, args, kwargs)
                self.rebuilt += 1
                return out
        return self._run(k, name, fn, args, kwargs)

    def _run(self, k: int, name, fn, args, kwargs):
        self._check_inputs(k, name, args, kwargs)
        return self._kernel(fn, args, kwargs)

    def _kernel(self, fn, args, kwargs):
        """Run ``fn``, counted in ``ran`` unless it raised.  A stop coming out of it ends a call
        that ran: it is raised by a Python frame around the kernel (a timer, a stand-in in
        ``paddle._C_ops``) after the kernel handed over the last needed tensor.  Counted
        before the call: once the stop is armed, the next line of this frame would raise it."""
        self.ran += 1
        try:
            return fn(*args, **kwargs)
        except StopRecompute:
            raise
        except BaseException:
            self.ran -= 1  # the kernel failed (``x[3]`` ending ``q, k, v = x``)
            raise

    def _check_inputs(self, k: int, name, args, kwargs) -> None:
        if not self.stand_ins:
            return
        for t in Inputs(args, kwargs)():
            if self._stand_in(t):
                raise RecomputeError(
                    f"{_API}: operator #{k} {name!r} ran in the rerun on a stand-in for the "
                    f"output of an operator the rerun left out (NOTE [ Dead operators ]); the "
                    f"region's rerun used a value its forward did not show it using")

    def stand_ins_escaped(self) -> bool:
        """After the rerun: is a stand-in still alive? Only the region's code can hold one
        then (an attribute or a global set inside it); see NOTE [ Escaped stand-ins ]."""
        if not any(ref() is not None for ref in self.stand_ins.values()):
            return False
        gc.collect()  # garbage in a reference cycle is not kept by anyone
        return any(ref() is not None for ref in self.stand_ins.values())

    def _stand_in(self, t) -> bool:
        if not t._is_initialized():
            return False
        ref = self.stand_ins.get(t.data_ptr())
        return ref is not None and ref() is not None  # alive: the buffer is its own

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
            if not isinstance(source, FromInput):
                raise RecomputeError(f"{_API}: saved tensor {index} is needed but its operator "
                                     f"was not run (internal error: NOTE [ Dead operators ])")
            t = inputs()[source.position]
            if self.stand_ins and self._stand_in(t):
                raise RecomputeError(f"{_API}: saved tensor {index} would be a stand-in for an "
                                     f"operator the rerun left out (NOTE [ Dead operators ])")
            self.frame.storage[index] = detached(t)
        if index == self.last:
            self.stopper.stop_here()


def _empty(meta):
    """A stand-in: no operator of the region (``paddle.Tensor()`` runs ``_C_ops.empty`` too)."""
    with _ops.unobserved():
        if meta is None:  # the output held no data (einsum's unused intermediates, a 0-size result)
            return paddle.Tensor()
        return _C_ops.empty(*meta)
