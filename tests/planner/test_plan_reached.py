"""Profiling and planning a function that reaches its model as a module global or through a
holder object: the same bytes as the Layer itself, and a plan of regions; a function that
reaches no layer is refused with the fix named."""

import functools
import types

import numpy as np
import paddle
import pytest
from paddle import nn

from paddle_recompute import planner

MODEL = None  # read by the functions below; each test installs its model


def global_loss(x):
    return MODEL(x).sum()  # sum saves nothing for backward: the bytes are the model's


class Holder:
    """Not a Layer: a model, its blocks listed before it, and a loss method."""

    def __init__(self, model):
        self.blocks = list(model)
        self.model = model

    def loss(self, x):
        return self.model(x).sum()


def _model():
    global MODEL
    paddle.seed(0)
    MODEL = nn.Sequential(*[nn.Sequential(nn.Linear(16, 64), nn.GELU(), nn.Linear(64, 16))
                            for _ in range(4)])
    return MODEL


def _x():
    paddle.seed(1)
    x = paddle.randn([8, 16])
    x.stop_gradient = False
    return x


@pytest.mark.parametrize("reach", ["global_function", "holder_method"])
def test_profile_counts_what_the_layer_counts(reach):
    model = _model()
    function = global_loss if reach == "global_function" else Holder(model).loss
    layer = planner.profile(model, _x(), repeats=1)
    reached = planner.profile(function, _x(), repeats=1)
    # the parameters are alive anyway: not activations, in either profile
    assert reached.total_bytes == layer.total_bytes
    assert reached.blocks == [f"roots[0].{b}" for b in layer.blocks] == [
        "roots[0].0", "roots[0].1", "roots[0].2", "roots[0].3"]
    for b in layer.blocks:
        assert reached.layers[f"roots[0].{b}"].saved_bytes == layer.layers[b].saved_bytes > 0


@pytest.mark.parametrize("reach", ["global_function", "holder_method"])
def test_plan_of_a_function_chooses_regions(reach):
    model = _model()
    function = global_loss if reach == "global_function" else Holder(model).loss
    x = _x()
    p = planner.plan(function, x, budget=0.5, final_rounds=0)
    assert p.choices and all(c.block.startswith("roots[0]") and c.option == "run"
                             for c in p.choices)
    assert p.predicted_bytes <= p.budget < p.baseline_bytes
    ref = global_loss(x)
    ref.backward()
    ref_grads = [x.grad.numpy()] + [q.grad.numpy() for q in model.parameters()]
    x.clear_gradient()
    model.clear_gradients()
    with p.apply():
        loss = function(x)
        loss.backward()
    np.testing.assert_array_equal(loss.numpy(), ref.numpy())
    for a, b in zip(ref_grads, [x.grad.numpy()] + [q.grad.numpy() for q in model.parameters()],
                    strict=True):
        np.testing.assert_array_equal(a, b)


def test_plan_of_a_function_reaching_no_layer_names_the_fix():
    model = _model()
    module = types.ModuleType("models_module")
    module.model = model  # a module attribute is not searched

    def through_module(x):
        return module.model(x).sum()

    with pytest.raises(ValueError, match=r"plan: no paddle.nn.Layer is reachable from "
                                         r"`model_or_fn` \(.*through_module\).*functools.partial"):
        planner.plan(through_module, _x(), budget=0.5, final_rounds=0)
    # the fix the message names
    p = planner.plan(functools.partial(lambda m, x: m(x).sum(), model), _x(), budget=0.5,
                     final_rounds=0)
    assert p.choices


class _Distill:
    """Not a Layer: a student it runs and a deeper teacher it reaches but does not run."""

    def __init__(self):
        paddle.seed(0)
        self.student = nn.Sequential(*[nn.Sequential(nn.Linear(16, 16), nn.Tanh())
                                       for _ in range(3)])
        self.teacher = nn.Sequential(*[nn.Sequential(nn.Linear(16, 16), nn.Tanh())
                                       for _ in range(6)])
        self.teacher_calls = 0
        self.teacher.register_forward_pre_hook(lambda *a: setattr(self, "teacher_calls", 1))

    def loss(self, x):
        return self.student(x).sum()


def test_blocks_are_detected_among_the_layers_the_function_runs():
    # the teacher's longer Sequential would be detected first; it does not run, so the
    # blocks are detected again among the layers that did (the student's)
    holder = _Distill()
    x = paddle.randn([8, 16])
    prof = planner.profile(holder.loss, x)
    student = [n for n, _ in holder.student.named_children()]
    assert len(prof.blocks) == 3 and [b.rsplit(".", 1)[-1] for b in prof.blocks] == student
    p = planner.plan(holder.loss, x, budget=0.5, final_rounds=0)
    targets = {id(layer) for layer in p.layers.values()}
    assert targets and targets <= {id(s) for s in holder.student.sublayers(include_self=True)}
    assert holder.teacher_calls == 0
