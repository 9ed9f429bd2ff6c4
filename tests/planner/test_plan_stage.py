"""plan_stage / stage_budget: a pipeline stage's share of one device budget (NOTE [ Micro-batches
in flight ]), checked arguments, and plans that tighten with the micro-batches a stage holds.
The two-process run under 1F1B is tests/interop/test_pipeline_plan.py."""

import numpy as np
import paddle
import pytest
from paddle import nn
from paddle.base import core

import paddle_recompute as pr
from paddle_recompute._planner.plan.pipeline import in_flight

planner = pr.planner


@pytest.mark.parametrize(("stages", "micro_batches", "expected"), [
    (4, 8, [4, 3, 2, 1]),  # 1F1B: p - i
    (4, 2, [2, 2, 2, 1]),  # fewer micro-batches than stages: at most m
    (1, 3, [1]),
])
def test_in_flight_under_1f1b(stages, micro_batches, expected):
    assert [in_flight(i, stages, micro_batches) for i in range(stages)] == expected


def test_in_flight_under_fthenb_is_every_micro_batch():
    assert [in_flight(i, 3, 5, "FThenB") for i in range(3)] == [5, 5, 5]


def test_stage_budget_splits_what_is_left_by_the_micro_batches_in_flight():
    split = [planner.stage_budget(1000, 200, 10, stage=i, stages=2, micro_batches=4)
             for i in range(2)]
    assert split == [800 // 2 - 10, 800 - 10]
    assert planner.stage_budget(1000, 200, 10, stage=0, stages=2, micro_batches=1) == 790
    assert planner.stage_budget(1000, 200, 0, stage=0, stages=2, micro_batches=4,
                                schedule="FThenB") == 200
    # exactly enough for the fixed memory and the buffers leaves 0 for activations
    assert planner.stage_budget(220, 200, 10, stage=0, stages=2, micro_batches=4) == 0
    # the backward's working memory comes out once, before the split
    assert planner.stage_budget(1000, 200, 10, stage=0, stages=2, micro_batches=4,
                                working_bytes=100) == 700 // 2 - 10


@pytest.mark.parametrize(("kwargs", "error", "names"), [
    ({"stages": 0}, ValueError, "`stages` must be an int >= 1, got 0"),
    ({"stages": 2.0}, ValueError, "`stages`"),
    ({"micro_batches": 0}, ValueError, "`micro_batches` must be an int >= 1"),
    ({"stage": 2}, ValueError, "`stage` must be an int in [0, 2) for stages=2"),
    ({"stage": -1}, ValueError, "`stage` must be an int in [0, 2)"),
    ({"schedule": "VPP"}, ValueError, "`schedule` must be one of ['1F1B', 'FThenB']"),
    ({"budget": 0.5}, TypeError, "`budget` must be bytes, an int >= 0, got 0.5 (a fraction"),
    ({"fixed_bytes": -1}, TypeError, "`fixed_bytes` must be bytes"),
    ({"budget": 199}, ValueError, "`budget` 199 bytes leaves nothing for stage 0's activations: "
                                  "its fixed memory (`fixed_bytes`, 200)"),
    ({"budget": 215}, ValueError, "plus 2 micro-batch(es) in flight times their input and "
                                  "output buffers (10 bytes each) need 220"),
    ({"working_bytes": 50}, ValueError, "(`fixed_bytes`, 200) plus the backward's working memory "
                                        "(50) plus 2 micro-batch(es)"),
    ({"working_bytes": -1}, TypeError, "`working_bytes` must be bytes"),
])
def test_stage_budget_names_the_bad_argument(kwargs, error, names):
    args = {"budget": 1000, "fixed_bytes": 200, "buffer_bytes": 10, "stage": 0, "stages": 2,
            "micro_batches": 4, **kwargs}
    budget, fixed, buffers = args.pop("budget"), args.pop("fixed_bytes"), args.pop("buffer_bytes")
    if "working_bytes" in kwargs and kwargs["working_bytes"] > 0:
        budget = 250
    with pytest.raises(error) as info:
        planner.stage_budget(budget, fixed, buffers, **args)
    assert str(info.value).startswith("plan_stage: ") and names in str(info.value), str(info.value)


class Block(nn.Layer):
    """``(h, mask) -> (h', mask)`` as pipeline stages pass them (the mask as it is); counts
    its forwards."""

    calls = 0

    def __init__(self):
        super().__init__()
        self.up, self.down = nn.Linear(16, 64), nn.Linear(64, 16)
        self.drop = nn.Dropout(0.2)

    def forward(self, args):
        Block.calls += 1
        h, mask = args
        return h + self.down(self.drop(paddle.tanh(self.up(h)))) * mask, mask


@pytest.fixture
def stage():
    model = nn.Sequential(Block(), Block())
    h = paddle.randn([8, 16])
    h.stop_gradient = False
    mask = paddle.ones([8, 1])
    return model, (h, mask)


# The plans here use the ``full`` option alone and no final measurement: the share is what is
# under test, and the other kinds' measurements would take seconds.


def _bytes(*tensors):
    return sum(t.size * t.element_size() for t in tensors)


def test_each_stage_plans_at_its_share_and_the_first_recomputes_more(stage):
    model, args = stage
    params = _bytes(*model.parameters())
    buffers = _bytes(*args) + _bytes(args[0])  # input h and mask, output h (mask passed on)
    budget = 2 * params + 2 * planner.profile(model, args, repeats=1).total_bytes
    plans = [planner.plan_stage(model, args, stage=i, stages=2, micro_batches=4, budget=budget,
                                working_bytes=0, final_rounds=0, options=["full"])
             for i in range(2)]
    # default fixed memory: parameters and their gradients (every one takes a gradient here)
    assert [p.budget for p in plans] == [
        planner.stage_budget(budget, 2 * params, buffers, stage=i, stages=2, micro_batches=4)
        for i in range(2)]
    assert plans[0].predicted_bytes <= plans[0].budget < plans[1].budget
    assert plans[0].predicted_bytes < plans[1].predicted_bytes == plans[1].baseline_bytes


def test_fixed_bytes_given_replaces_the_parameter_estimate(stage):
    model, args = stage
    budget = 10 * _bytes(*model.parameters())
    got = planner.plan_stage(model, args, stage=1, stages=2, micro_batches=4, budget=budget,
                             fixed_bytes=budget // 2, working_bytes=0, final_rounds=0,
                             options=["full"])
    buffers = _bytes(*args) + _bytes(args[0])
    assert got.budget == budget - budget // 2 - buffers


def test_default_fixed_bytes_count_gradients_of_trainable_parameters_only(stage):
    model, args = stage
    frozen = model[0].up.weight
    frozen.stop_gradient = True
    params = _bytes(*model.parameters())
    budget = 10 * params
    got = planner.plan_stage(model, args, stage=1, stages=2, micro_batches=4, budget=budget,
                             working_bytes=0, final_rounds=0, options=["full"])
    fixed = 2 * params - _bytes(frozen)
    assert got.budget == budget - fixed - _bytes(*args) - _bytes(args[0])


def test_planning_a_stage_leaves_the_random_state_as_it_was(stage):
    """Its one forward for the buffers' bytes runs dropout with the state put back."""
    model, args = stage
    paddle.seed(5)
    planner.plan_stage(model, args, stage=0, stages=2, micro_batches=2, budget=1 << 30,
                       final_rounds=0, options=["full"])
    after = model(args)[0].numpy()
    paddle.seed(5)
    np.testing.assert_array_equal(after, model(args)[0].numpy())


def test_bad_stage_arguments_fail_before_any_forward(stage):
    model, args = stage
    Block.calls = 0
    with pytest.raises(ValueError, match=r"plan_stage: `stage` must be an int in \[0, 2\)"):
        planner.plan_stage(model, args, stage=2, stages=2, micro_batches=4, budget=1 << 20)
    with pytest.raises(TypeError, match="plan_stage: `budget` must be bytes"):
        planner.plan_stage(model, args, stage=0, stages=2, micro_batches=4, budget=0.5)
    assert Block.calls == 0
    with pytest.raises(ValueError, match="plan_stage: `budget` .* leaves nothing"):
        planner.plan_stage(model, args, stage=0, stages=2, micro_batches=4, budget=100)
    assert Block.calls == 2  # the buffers' forward (two blocks) only: no profile, no plan


# The backward's working memory (NOTE [ Backward working memory ]): measured, taken out of the
# budget, and with it a stage's allocator peak over a 1F1B step fits the device budget.


def _allocated() -> int:
    return core.host_memory_stat_current_value("Allocated", 0)


def _one_f_one_b(model, batches) -> tuple[int, list]:
    """Stage 0 of two under 1F1B with four micro-batches (F0 F1 B0 F2 B1 F3 B2 B3), each
    micro-batch's input made at its forward as a pipeline receives it: the allocator's peak
    beyond what was allocated at the start (parameters, gradients), and the losses."""
    outs, losses = {}, []
    paddle.seed(11)  # the same dropout masks every step
    before = _allocated()
    core.host_memory_stat_reset_peak_value("Allocated", 0)
    for op, k in [("F", 0), ("F", 1), ("B", 0), ("F", 2), ("B", 1), ("F", 3), ("B", 2), ("B", 3)]:
        if op == "F":
            h, mask = (paddle.to_tensor(a) for a in batches[k])
            outs[k] = model((h, mask))[0]
        else:
            out = outs.pop(k)
            losses.append(float(out.sum()))
            out.backward(paddle.ones_like(out))
    return core.host_memory_stat_peak_value("Allocated", 0) - before, losses


class Wide(nn.Layer):
    """A block whose weights are large next to its activations: its backward's gradient
    temporaries (a fresh gradient per weight before it is added into ``.grad``) are most of
    its working memory."""

    def __init__(self):
        super().__init__()
        self.up, self.down = nn.Linear(16, 256), nn.Linear(256, 16)
        self.drop = nn.Dropout(0.2)

    def forward(self, args):
        h, mask = args
        return h + self.down(self.drop(paddle.tanh(self.up(h)))) * mask, mask


def _wide_stage():
    paddle.seed(7)
    model = nn.Sequential(Wide(), Wide())
    rs = np.random.RandomState(0)
    batches = [(rs.standard_normal((32, 16)).astype("float32"), np.ones((32, 1), "float32"))
               for _ in range(4)]
    return model, batches


def test_a_stage_planned_with_the_device_budget_alone_peaks_within_it():
    """Given the device budget only (fixed memory: parameters and gradients, the default),
    the first stage's allocator peak over a 1F1B step fits it.  A plan that fills the share
    without taking the working memory out (``working_bytes=0``) recomputes too, yet exceeds
    it, and so does no plan.  Losses and gradients equal no recompute's, bit for bit."""
    model, batches = _wide_stage()
    sample = tuple(paddle.to_tensor(a) for a in batches[0])
    fixed = 2 * _bytes(*model.parameters())
    _one_f_one_b(model, batches)  # gives every parameter its ``.grad``
    model.clear_gradients(set_to_zero=True)
    plain, plain_losses = _one_f_one_b(model, batches)
    plain_grads = [p.grad.numpy() for p in model.parameters()]
    budget = fixed + plain * 3 // 4
    peaks = {}
    for name, working in (("measured", None), ("share alone", 0)):
        got = planner.plan_stage(model, sample, stage=0, stages=2, micro_batches=4, budget=budget,
                                 working_bytes=working, final_rounds=0, options=["full"])
        assert got.predicted_bytes < got.baseline_bytes, name  # both recompute
        model.clear_gradients(set_to_zero=True)
        with got.apply():
            peaks[name], losses = _one_f_one_b(model, batches)
        assert losses == plain_losses, name
        for p, g in zip(model.parameters(), plain_grads, strict=True):
            np.testing.assert_array_equal(p.grad.numpy(), g, err_msg=name)
    assert plain > budget - fixed
    assert peaks["measured"] <= budget - fixed, (peaks, budget - fixed)
    assert peaks["share alone"] > budget - fixed, (peaks, budget - fixed)


def test_measuring_the_working_memory_puts_gradients_and_random_state_back():
    """The measurement runs backwards (a parameter's gradient hook fires: twice when no
    parameter has a ``.grad`` yet, the first to make them), then leaves ``.grad`` as it was."""
    model, batches = _wide_stage()
    sample = tuple(paddle.to_tensor(a) for a in batches[0])
    backwards = []
    model[0].up.weight.register_hook(lambda g: backwards.append(1))
    assert all(p.grad is None for p in model.parameters())
    planner.plan_stage(model, sample, stage=0, stages=2, micro_batches=4, budget=1 << 30,
                       final_rounds=0, options=["full"])
    assert len(backwards) == 2
    assert all(p.grad is None for p in model.parameters())  # none made, none left
    model(sample)[0].sum().backward()
    grads = [p.grad.numpy() for p in model.parameters()]
    paddle.seed(5)
    planner.plan_stage(model, sample, stage=0, stages=2, micro_batches=4, budget=1 << 30,
                       final_rounds=0, options=["full"])
    after = model(sample)[0].numpy()
    assert len(backwards) == 4  # one measured backward: the gradients were there
    for p, g in zip(model.parameters(), grads, strict=True):
        np.testing.assert_array_equal(p.grad.numpy(), g)  # not accumulated into
    paddle.seed(5)
    np.testing.assert_array_equal(after, model(sample)[0].numpy())


def test_the_working_memory_taken_out_is_the_backwards(stage):
    """No recompute at this budget: the reserve is the working memory measured without it,
    at least the largest gradient temporary (``up.weight``, 16x64 floats) and the output's
    gradient."""
    model, args = stage
    kept = planner.plan_stage(model, args, stage=1, stages=2, micro_batches=4, budget=1 << 30,
                              working_bytes=0, final_rounds=0, options=["full"])
    got = planner.plan_stage(model, args, stage=1, stages=2, micro_batches=4, budget=1 << 30,
                             final_rounds=0, options=["full"])
    assert got.choices == kept.choices
    reserve = kept.budget - got.budget
    assert reserve >= _bytes(model[0].up.weight) + _bytes(args[0]), reserve
    assert reserve < 1 << 20


def test_without_allocator_statistics_it_names_the_fix(stage, monkeypatch):
    from paddle_recompute._planner.plan import working

    model, args = stage
    monkeypatch.setattr(working._Host, "current", lambda self: 0)
    with pytest.raises(pr.RecomputeError, match="plan_stage: the host allocator keeps no "
                       "statistics .* FLAGS_enable_host_memory_stat=1 .* `working_bytes=`"):
        planner.plan_stage(model, args, stage=0, stages=2, micro_batches=4, budget=1 << 30,
                           final_rounds=0, options=["full"])
    got = planner.plan_stage(model, args, stage=0, stages=2, micro_batches=4, budget=1 << 30,
                             working_bytes=1000, final_rounds=0, options=["full"])
    assert got.budget == planner.stage_budget(1 << 30, 2 * _bytes(*model.parameters()),
                                              _bytes(*args) + _bytes(args[0]), stage=0, stages=2,
                                              micro_batches=4, working_bytes=1000)


def test_a_step_that_never_fits_ends_in_an_error_naming_the_numbers(stage, monkeypatch):
    """Measurements that exceed the room by a byte however much is reserved: the rounds
    stop, each planning again with the excess reserved, and the error names the bytes."""
    from paddle_recompute._planner.plan import pipeline

    model, args = stage
    budget, fixed = 1 << 20, 2 * _bytes(*model.parameters())
    inputs = _bytes(*args)
    measured = []

    def too_much(api, call, roots, params):
        measured.append(api)
        held = 50_000  # two in flight, each its inputs and this, plus the working memory
        return held, budget - fixed - 2 * (inputs + held) + 1

    monkeypatch.setattr(pipeline, "measure_working", too_much)
    with pytest.raises(pr.RecomputeError, match=r"plan_stage: no plan fit the budget after 6 "
                       r"rounds: .* exceeded the .* bytes left by the fixed memory by 1; raise"):
        planner.plan_stage(model, args, stage=0, stages=2, micro_batches=4, budget=budget,
                           final_rounds=0, options=["full"])
    assert 1 <= len(measured) <= 7  # the plain measurement, then one per plan that recomputes


def _released_1f1b(model, batches) -> tuple[list, list]:
    """Stage 0 of two under 1F1B, as ``PipelineParallel`` runs it: each micro-batch's input
    made at its forward, and the stage's outputs freed once sent (``_release_output``), the
    mask the blocks pass on as it is among them.  The outputs' values and the gradients."""
    from paddle.distributed.fleet.meta_parallel.pipeline_parallel import PipelineParallel

    outs, values = {}, []
    paddle.seed(11)  # the same dropout masks every step
    for op, k in [("F", 0), ("F", 1), ("B", 0), ("F", 2), ("B", 1), ("F", 3), ("B", 2), ("B", 3)]:
        if op == "F":
            h, mask = (paddle.to_tensor(a) for a in batches[k])
            h.stop_gradient = False
            outs[k] = out = model((h, mask))
            assert out[1] is mask  # passed on as it is
            values.append(out[0].numpy())
            PipelineParallel._release_output(None, out)  # reads no field of the pipeline's
            assert not mask._is_initialized()
        else:  # as the pipeline does: the freed output has lost its shape
            paddle.autograd.backward([outs.pop(k)[0]], [paddle.ones(values[k].shape)])
    return values, [p.grad.numpy() for p in model.parameters()]


def test_a_stage_that_passes_its_mask_on_as_it_is_trains_as_without_recompute(stage):
    """NOTE [ Inputs as aliases ]: the pipeline frees a stage's outputs once sent, the mask
    each block passes on as it is included; the stage's plan recomputes, and its reruns
    read their own aliases of the mask, so losses and gradients are plain's, bit for bit."""
    model, args = stage
    rs = np.random.RandomState(0)
    batches = [(rs.standard_normal((8, 16)).astype("float32"), (rs.rand(8, 1) > 0.3).astype("float32"))
               for _ in range(4)]
    # half the bytes saved without recompute: whole blocks recomputed, each region taking the mask
    budget = 2 * _bytes(*model.parameters()) + planner.profile(model, args, repeats=1).total_bytes // 2
    got = planner.plan_stage(model, args, stage=0, stages=2, micro_batches=4, budget=budget,
                             working_bytes=0, final_rounds=0, options=["full"])
    assert any(c.types == ("Block",) for c in got.choices), got.choices
    plain_values, plain_grads = _released_1f1b(model, batches)
    model.clear_gradients(set_to_zero=False)
    Block.calls = 0
    with got.apply():
        values, grads = _released_1f1b(model, batches)
    assert Block.calls > 2 * 4  # reruns in the backward: more forwards than two blocks x four
    for v, ref in zip(values, plain_values, strict=True):
        np.testing.assert_array_equal(v, ref)
    for g, ref in zip(grads, plain_grads, strict=True):
        np.testing.assert_array_equal(g, ref)
