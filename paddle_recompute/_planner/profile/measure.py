"""``profile``: bytes saved for backward, forward and recompute time, per block and sublayer.

NOTE [ Counting saved bytes ]: the forward runs with a counting frame on the saved-tensor
hook stack (``_hooks``), so every tensor an operator saves for backward passes through
it, on any device.  A saved tensor counts the bytes of the buffer behind it, once: a
view keeps its whole buffer alive (RoPE's transposed ``q``, ``x[:, 0]``), so a second save
of any view of the same buffer is not counted again, and a tensor whose memory lies inside
a parameter, a buffer or an input of the profiled call is not counted at all (that memory
is alive anyway).  Tensors Paddle saves without their data (``no_need_buffer``) never reach the
hooks and cost nothing.  The tensor is attributed to every layer running when it is saved.
Inside an active recompute region the region packs, so its tensors are not seen: profile
a model without recompute applied.

NOTE [ Shared block inputs ]: each block's ``input_bytes`` count every input a region around
it holds, so an input several blocks take (the RoPE tables and the mask every decoder layer
of PaddleFormers' Llama takes) is counted by each, yet regions around all of them hold it
once: at hidden 512, seq 256, 1.5 MiB counted four times put a plan's prediction 5.8 MiB
(2% of no recompute's activations) above what it held, and that part of the budget went
unspent.  The blocks stay additive for the solvers; the profile lists such inputs
(``Profile.shared_inputs``) and the plan credits, for a solution, each one's bytes times the
number of chosen regions around whole blocks that take it, less one (``plan._credit``,
``Profile.shared_input_credit``): a
sound bound, as those regions hold it once at most.  The solver is then run again with the
budget raised by that credit, and its answer kept when it still fits after its own credit.

The clock is the harness's (NOTE [ Planning clock ] in ``_planner/harness.py``).
"""

from __future__ import annotations

import functools
import statistics
from collections.abc import Callable, Sequence
from typing import Any

import paddle

from ..._core import hooks as _hooks
from ..._core import ops
from ..._core import tree as _tree
from ..._core.amp import grad_enabled, set_grad_enabled
from ..._core.layers import find_roots
from ..._core.state import ForwardState
from ..._entry.routing import Applied, route_forwards
from ..harness import clock, sync
from .alike import call_key, capture, share_times, stand_ins_of
from .blocks import layer_table, resolve_blocks
from .calls import call_rows, shared_call_inputs
from .counter import Counter, spans, tensor_key
from .files import structure_of
from .result import LayerProfile, Profile

__all__ = ["profile", "profile_calls", "nbytes_of"]


def nbytes_of(tree: Any, alive_anyway: Callable[[int], bool] | None = None) -> int:
    """Bytes of the tensors inside ``tree`` (tuples, lists, dicts), each distinct one once,
    leaving out those whose data pointer ``alive_anyway`` accepts."""
    seen, total = set(), 0
    for t in _tree.flatten(tree)[0]:
        if not t._is_initialized() or (alive_anyway and alive_anyway(t.data_ptr())):
            continue
        if t.data_ptr() not in seen:
            seen.add(t.data_ptr())
            total += t.size * t.element_size()
    return total


class _Discard:
    """Packer for timing re-runs, whose graph is never used."""

    def pack(self, tensor):
        return self


class _Instrumented:
    """Context manager: wrap each named layer's ``forward`` to time it and track the
    running call; every layer is also re-run once per call to time a recompute, but a call
    alike to one already re-run in this run takes that one's time, and a block call with a
    stand-in is not run (NOTE [ Alike calls ] in ``profile/alike.py``)."""

    def __init__(self, layers: dict, consumers: set, blocks: list, record: bool,
                 stand_ins: dict | None = None):
        self.layers, self.consumers, self.blocks = layers, consumers, set(blocks)
        self.record = record  # the run that counts bytes: it also notes the blocks' calls
        # block call -> (its first alike's call, its output in the counting run): the call
        # is not run, its alike's time stands for it (NOTE [ Alike calls ])
        self.stand_ins = stand_ins or {}
        self.skipped_s = 0.0  # stand-ins' time so far: enclosing layers' forward time adds it
        self.block_outs: dict = {}  # (counting run) block call -> (call key, output)
        self.captured: dict = {}  # (counting run) block -> (call key, its call when the first)
        self.block_inputs: list = []  # (call of a block or part, keys of its inputs), in call order
        self.counter: Counter | None = None
        self.times: dict[str, list[float]] = {}  # per name: [forward, recompute, calls, in, out]
        # per call id: [layer, index, parent call, forward, recompute, [(input key, bytes)],
        # link]; link: (id of its sole positional tensor input or None, operators run before
        # it, id of its output when one tensor or None, operators run by its end)
        self.calls: dict[str, list] = {}
        self.counts: dict[str, int] = {}  # per name: calls so far
        self.held: list = []  # every call's input tensors, until the run ends
        self.paused = False
        self.rerun_s = 0.0  # re-run time so far: enclosing layers' forward time excludes it
        self.alike_reruns: dict = {}  # call key -> the rerun seconds of its first call this run
        self.block_calls = 0  # block calls entered so far (stand-ins included)
        self.enclosing: list = []  # calls around a block, as they end: NOTE [ Reruns around blocks ]
        self.applied = Applied()

    def __enter__(self) -> _Instrumented:
        self.applied = route_forwards((layer, functools.partial(self._wrap, name, layer))
                                      for name, layer in self.layers.items())
        return self

    def __exit__(self, *exc: object) -> None:
        self.applied.remove()

    def _wrap(self, name: str, layer, original: Callable) -> Callable:
        def forward(*args, **kwargs):
            if self.paused:
                return original(*args, **kwargs)
            if name in self.blocks:
                self.block_calls += 1
            stand_in = self._stand_in(name)
            if stand_in is not None:
                return stand_in
            blocks_in = self.block_calls
            key = call_key(layer, args, kwargs)
            if self.record and name in self.blocks and name not in self.captured:
                self.captured[name] = (key, capture((args, kwargs), self.captured, key))
            call, inputs = self._enter(name, args, kwargs)
            ops_in = self.counter.ops
            state = ForwardState(True, (layer,))
            sync()
            start, reruns, skipped = clock(), self.rerun_s, self.skipped_s
            try:
                out = original(*args, **kwargs)
                sync()
            finally:
                self.counter.stack.pop()
            seconds = clock() - start - (self.rerun_s - reruns) + (self.skipped_s - skipped)
            if self.record and name in self.blocks:
                self.block_outs[call] = (key, out)
            row = self.times.setdefault(name, [0.0, 0.0, 0, 0, 0])
            row[0] += seconds
            row[2] += 1
            row[3] += sum(n for _, n in inputs)
            row[4] += nbytes_of(out)
            rerun = 0.0
            if self.block_calls != blocks_in:  # blocks ran inside (a block nests none)
                self.enclosing.append(call)  # NOTE [ Reruns around blocks ]
            elif self.calls[call][2] is not None or name in self.consumers:
                # any call inside the model can be a region; the model's own call is one only
                # as a block (NOTE [ Region tree ])
                rerun = self._alike_rerun(key, original, state, args, kwargs)
            row[1] += rerun
            self.calls[call][3:5] = [seconds, rerun]
            self.calls[call].append(_link(args, kwargs, ops_in, out, self.counter.ops))
            self.held.append(out)  # alive to the end of the run: its id stays its own
            return out

        return forward

    def _stand_in(self, name: str):
        """The output standing in for this call of block ``name`` when it has a stand-in
        (the call then counts as made, with its first alike's time this run), else None."""
        if name not in self.blocks:
            return None
        index = self.counts.get(name, -1) + 1
        found = self.stand_ins.get(f"{name}@{index}" if index else name)
        if found is None:
            return None
        first, out = found
        self.counts[name] = index
        self.skipped_s += self.calls[first][3]
        return out

    def _enter(self, name: str, args, kwargs) -> tuple[str, list]:
        """Number the call, note its inputs (key, bytes; not alive anyway) and push it."""
        index = self.counts[name] = self.counts.get(name, -1) + 1
        call = f"{name}@{index}" if index else name
        tensors = [t for t in _tree.flatten((args, kwargs))[0] if t._is_initialized()]
        if name in self.consumers:  # blocks and their parts: NOTE [ Counting saved bytes ]
            self.block_inputs.append((call, [tensor_key(t) for t in tensors]))
        inputs = list({tensor_key(t): t._holder_size() for t in tensors
                       if not self.counter.alive_anyway(t.data_ptr())}.items())
        parent = self.counter.stack[-1] if self.counter.stack else None
        self.calls[call] = [name, index, parent, 0.0, 0.0, inputs]
        self.counter.stack.append(call)
        self.held.append(tensors)  # alive to the end of the run: no other tensor takes their keys
        for key, _ in inputs:
            self.counter.use(key, tuple(self.counter.stack))
        return call, inputs

    def _alike_rerun(self, key, original, state, args, kwargs) -> float:
        """The rerun seconds of the call: its first alike's in this run, else its own
        (NOTE [ Alike calls ] in ``profile/alike.py``)."""
        if key is not None and key in self.alike_reruns:
            return self.alike_reruns[key]
        seconds = self._rerun(original, state, args, kwargs)
        if key is not None:
            self.alike_reruns[key] = seconds
        return seconds

    def _rerun(self, original, state, args, kwargs) -> float:
        self.paused = True
        try:
            with state.replayed(), _hooks.pushed(_Discard()):
                sync()
                start = clock()
                original(*args, **kwargs)
                sync()
                seconds = clock() - start
            self.rerun_s += seconds
            return seconds
        finally:
            self.paused = False


def _link(args, kwargs, ops_in: int, out, ops_out: int) -> tuple:
    """What tells whether a call took the previous call's output straight (a run of calls,
    NOTE [ Region tree ]): ``(id of the sole positional tensor argument or None, operators run
    before the call, id of the output when it is one tensor or None, operators run by its end)``."""
    sole = args[0] if len(args) == 1 and not kwargs and isinstance(args[0], paddle.Tensor) else None
    return (None if sole is None else id(sole), ops_in,
            id(out) if isinstance(out, paddle.Tensor) else None, ops_out)


def profile(
    model_or_fn: Callable[..., Any],
    *inputs: Any,
    blocks: Sequence[paddle.nn.Layer | str] | None = None,
    repeats: int = 3,
    **kwargs: Any,
) -> Profile:
    """Measure what recompute would save and cost: per block and sublayer, the bytes saved
    for backward, the forward time and the time of a recompute (a re-run of the forward).

    Runs ``model_or_fn(*inputs, **kwargs)`` ``repeats`` times with grad enabled (no
    backward); random states and stateful-layer buffers are put back afterwards, so the
    profile changes nothing.  Bytes are counted as NOTE [ Counting saved bytes ] says, in
    the first run; blocks alike are timed on the first of them, which alone of them runs
    after the first run (NOTE [ Alike calls ]).

    Args:
        model_or_fn: a ``paddle.nn.Layer`` or a function (its Layers are found as
            ``recompute`` finds them).
        *inputs: positional arguments of the call.
        blocks: the blocks to report (Layers or sublayer names); ``None`` detects the
            longest ``LayerList``/``Sequential`` of same-type layers; ``[]`` for none.
        repeats: forward runs; times are medians over them.
        **kwargs: keyword arguments of the call.

    Returns:
        A :class:`Profile` (``str()`` is a table, ``.to_json()`` the data).

    Raises:
        TypeError: ``model_or_fn`` is not callable, or ``repeats`` is not an int.
        ValueError: ``repeats < 1``; a block is unknown, not called, or nested in another.

    Example:
        >>> import paddle, paddle_recompute as pr
        >>> model = paddle.nn.Sequential(*[paddle.nn.Linear(8, 8) for _ in range(3)])
        >>> x = paddle.randn([4, 8])
        >>> print(pr.planner.profile(model, x).blocks)
        ['0', '1', '2']
    """
    if not callable(model_or_fn):
        raise TypeError(f"profile: `model_or_fn` must be a Layer or a function, got "
                        f"{type(model_or_fn).__name__}")
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise ValueError(f"profile: `repeats` must be an int >= 1, got {repeats!r}")
    return profile_calls(model_or_fn, inputs, kwargs, blocks, repeats)[0]


def profile_calls(model_or_fn, inputs: tuple, kwargs: dict, blocks, repeats: int = 3) -> tuple:
    """:func:`profile` (arguments checked there), and the blocks' calls it captured: block ->
    (call key, its ``(args, kwargs)`` when the first call of its key, else None), which
    ``options/alike.py`` measures blocks alone on."""
    roots = find_roots(model_or_fn, inputs, kwargs)
    layers = layer_table(model_or_fn, roots, blocks)
    block_names = resolve_blocks(model_or_fn, layers, blocks)
    consumers = _consumers(layers, block_names)
    runs = []
    stand_ins: dict = {}
    grad = grad_enabled()
    try:
        set_grad_enabled(True)
        for r in range(repeats):
            run, inst = _one_run(model_or_fn, inputs, kwargs, roots, layers, consumers,
                                 block_names, r == 0, stand_ins)
            if r == 0 and blocks is None and any(b not in inst.counts for b in block_names):
                # detected among layers the function reaches but does not run (a teacher
                # model beside the student): detected again among those it ran
                block_names = resolve_blocks(model_or_fn, _ran(layers, inst), None)
                consumers = _consumers(layers, block_names)
                run, inst = _one_run(model_or_fn, inputs, kwargs, roots, layers, consumers,
                                     block_names, True, stand_ins)
            runs.append(run)
            if r == 0:  # the later runs time one block of each kind (NOTE [ Alike calls ])
                stand_ins, captured = stand_ins_of(inst, layers, block_names), inst.captured
                enclosing = inst.enclosing
    finally:
        set_grad_enabled(grad)
    result = _assemble(runs, layers, block_names, repeats)
    share_times(result, stand_ins)
    _sum_enclosing(result, enclosing)
    result.structure = structure_of(layers, (inputs, kwargs))
    return result, captured


def _consumers(layers: dict, block_names: list) -> set:
    """The blocks and their direct sublayers (whose inputs a region around them holds)."""
    return set(block_names) | {c for b in block_names for c in _children(layers, b)}


def _ran(layers: dict, inst: _Instrumented) -> dict:
    """The layers of ``layers`` the run called."""
    return {name: layer for name, layer in layers.items() if name in inst.counts}


def _sum_enclosing(prof: Profile, enclosing: list) -> None:
    """NOTE [ Reruns around blocks ]: a call with blocks inside (a decoder stack, the model
    under a loss function) is not rerun to time it: that rerun would run every block again,
    in every profile run, so profiling would grow with depth where blocks alike are timed
    once (NOTE [ Alike calls ]).  Its rerun time is its own time outside its child calls
    plus their rerun times, summed on the profile's rows (times shared among alike calls
    included), innermost first; its layer's is the sum over its calls."""
    for call in enclosing:  # an inner call ends, and is noted, first
        row = prof.calls[call]
        kids = [prof.calls[c] for c in row.children]
        row.recompute_s = (max(row.forward_s - sum(k.forward_s for k in kids), 0.0)
                           + sum(k.recompute_s for k in kids))
    for name in dict.fromkeys(prof.calls[c].layer for c in enclosing):
        if prof.layers[name].recompute_s is not None:
            prof.layers[name].recompute_s = sum(c.recompute_s for c in prof.calls.values()
                                                if c.layer == name)


def _children(layers: dict, name: str) -> list[str]:
    prefix = f"{name}." if name else ""
    return [n for n in layers if n.startswith(prefix) and n != name and "." not in n[len(prefix):]]


def _alive_anyway(layers: dict, inputs, kwargs) -> list:
    """Spans of parameters, buffers and inputs, taken inside the replay: there stateful
    layers (BatchNorm) run on copies of their statistics, which BatchNorm then saves."""
    return spans([p for layer in layers.values() for p in layer.parameters(include_sublayers=False)]
                 + [b for layer in layers.values() for b in layer.buffers(include_sublayers=False)]
                 + _tree.flatten((inputs, kwargs))[0])


def _one_run(fn, inputs, kwargs, roots, layers, consumers, blocks, record, stand_ins) -> tuple:
    with _Instrumented(layers, consumers, blocks, record, stand_ins) as inst, \
            ForwardState(True, roots).replayed():
        counter = inst.counter = Counter(_alive_anyway(layers, inputs, kwargs), record)
        with _hooks.pushed(counter), ops.installed():
            sync()
            start = clock()
            out = fn(*inputs, **kwargs)
            sync()
            seconds = clock() - start - inst.rerun_s + inst.skipped_s
        del out
    counter.resolve_uses()
    inst.held.clear()
    for block, keys in inst.block_inputs:
        counter.give_to_consumer(block, keys)
    counter.give_to_outside({c for c, row in inst.calls.items() if row[0] in inst.blocks})
    return (counter, inst.times, seconds, inst.calls), inst


def _assemble(runs, layers, block_names, repeats) -> Profile:
    counter = runs[0][0]
    by_layer = counter.by_layer()
    inside = {row[0] for row in runs[0][3].values() if row[2] is not None}  # re-run: a region
    rows = {}
    for name, layer in layers.items():
        inclusive, own = by_layer.get(name, (0, 0))
        # the runs it ran in: a block with a stand-in runs in the first only
        per_run = [times[name] for _, times, _, _ in runs if name in times] or [[0.0, 0.0, 0, 0, 0]]
        first = runs[0][1].get(name, [0.0, 0.0, 0, 0, 0])
        rows[name] = LayerProfile(
            name=name, type=type(layer).__name__, depth=name.count(".") + (name != ""),
            calls=first[2], saved_bytes=inclusive, self_bytes=own, input_bytes=first[3],
            output_bytes=first[4], forward_s=statistics.median(r[0] for r in per_run),
            recompute_s=statistics.median(r[1] for r in per_run)
            if name in inside or name in block_names else None,
            is_block=name in block_names, children=_children(layers, name))
    for b in block_names:
        if rows[b].calls == 0:
            raise ValueError(f"profile: block {b!r} was not called by the forward")
    return Profile(total_bytes=counter.total,
                   forward_s=statistics.median(s for _, _, s, _ in runs), layers=rows,
                   blocks=list(block_names), saved=counter.saved(), repeats=repeats,
                   calls=call_rows(counter, [calls for *_, calls in runs]),
                   shared_inputs=_shared_inputs(runs[0][3], set(block_names)),
                   shared_call_inputs=shared_call_inputs(counter, runs[0][3]))


def _shared_inputs(calls: dict, blocks: set) -> list:
    """(bytes, blocks) of each input several blocks took (NOTE [ Shared block inputs ])."""
    takers: dict = {}
    for layer, _index, _parent, _f, _r, inputs, *_ in calls.values():
        if layer in blocks:
            for key, n in inputs:
                takers.setdefault(key, [n, []])[1].append(layer)
    return [(n, tuple(dict.fromkeys(names))) for n, names in takers.values()
            if len(set(names)) > 1]
