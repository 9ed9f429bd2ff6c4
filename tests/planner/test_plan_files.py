"""Saved plans and profiles: bad files, another model, another Paddle version, and plans
made from a saved profile (NOTE [ Saved structure ] in ``_planner/profile/files.py``)."""

from __future__ import annotations

import contextlib
import json
import warnings

import numpy as np
import paddle
import pytest

import paddle_recompute as pr
from paddle_recompute._core.forwards import restore_forward, swap_forward
from paddle_recompute.planner import Plan, Profile

H = 16
KINDS = ["keep", "full", "sub", "policy:selective", "policy:masks"]


def _model(h: int = H, depth: int = 3, act=paddle.nn.Tanh) -> paddle.nn.Sequential:
    def block():
        return paddle.nn.Sequential(paddle.nn.Linear(h, h), act(), paddle.nn.Linear(h, h), act())

    return paddle.nn.Sequential(*[block() for _ in range(depth)])


def _input(batch: int = 8, h: int = H) -> paddle.Tensor:
    x = paddle.randn([batch, h])
    x.stop_gradient = False
    return x


@pytest.fixture
def made(tmp_path):
    """A model, its input, its profile and a plan, both saved."""
    model, x = _model(), _input()
    prof = pr.planner.profile(model, x)
    # every kind but ``ops``, whose operator graphs a saved profile leaves out
    plan = pr.planner.plan(model, x, budget=0.5, profile=prof, final_rounds=0, options=KINDS)
    assert plan.choices, "the plan recomputes nothing: these tests need one that does"
    prof.save(tmp_path / "profile.json")
    plan.save(tmp_path / "plan.json")
    return model, x, prof, plan, tmp_path


# ------------------------------------------------------------------------ bad files


LOADERS = [(Plan.load, "Plan.load", "plan.json"), (Profile.load, "Profile.load", "profile.json")]


@pytest.mark.parametrize("load, api, name", LOADERS, ids=["plan", "profile"])
def test_not_json_names_the_file_and_the_problem(made, load, api, name):
    path = made[-1] / "notes.json"
    path.write_text("budget: half\n")
    with pytest.raises(ValueError, match=rf"{api}: cannot read '.*notes\.json': it is not JSON "
                                         r"\(Expecting value: line 1, column 1\)"):
        load(path)


@pytest.mark.parametrize("load, api, name", LOADERS, ids=["plan", "profile"])
def test_truncated_file_says_it_ends_early(made, load, api, name):
    text = (made[-1] / name).read_text()
    cut = made[-1] / f"cut_{name}"
    for end in (len(text) // 2, len(text) // 3, len(text) - 2):  # inside a string, a number...
        cut.write_text(text[:end])
        with pytest.raises(ValueError, match=rf"{api}: cannot read '.*cut_{name}': it ends early "
                                             r"\(truncated\?\)"):
            load(cut)
    cut.write_text("")
    with pytest.raises(ValueError, match=rf"{api}: cannot read '.*cut_{name}': it is empty"):
        load(cut)


@pytest.mark.parametrize("load, api, name", LOADERS, ids=["plan", "profile"])
def test_the_other_kind_of_file_is_refused(made, load, api, name):
    other = {"plan.json": "profile.json", "profile.json": "plan.json"}[name]
    what = api.split(".")[0]
    with pytest.raises(ValueError, match=rf"{api}: '.*{other}' is not a {what.lower()} saved by "
                                         rf"{what}\.save \(expected format 'paddle_recompute\."):
        load(made[-1] / other)


@pytest.mark.parametrize("load, api, name", LOADERS, ids=["plan", "profile"])
def test_a_damaged_file_names_the_missing_field(made, load, api, name):
    data = json.loads((made[-1] / name).read_text())
    field = {"plan.json": "budget", "profile.json": "total_bytes"}[name]
    del data[field]
    (made[-1] / name).write_text(json.dumps(data))
    with pytest.raises(ValueError, match=rf"{api}: '.*{name}' is damaged \(missing field "
                                         rf"'{field}'\); write it again"):
        load(made[-1] / name)


@pytest.mark.parametrize("load, api, name", LOADERS, ids=["plan", "profile"])
def test_another_paddle_version_warns_and_says_what_may_differ(made, load, api, name):
    path = made[-1] / name
    data = json.loads(path.read_text())
    assert data["paddle"] == paddle.__version__
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the same version: no warning
        load(path)
    path.write_text(json.dumps({**data, "paddle": "2.6.0"}))
    with pytest.warns(UserWarning, match=rf"{api}: '.*{name}' was made with Paddle 2\.6\.0, this "
                                         rf"is Paddle {paddle.__version__}: the bytes saved for "
                                         r"backward and the times it records may differ"):
        loaded = load(path)
    original = made[3] if name == "plan.json" else made[2]
    assert loaded.baseline_bytes == original.baseline_bytes if name == "plan.json" \
        else loaded.total_bytes == original.total_bytes


# ------------------------------------------------------------------- another model


@pytest.mark.parametrize("other, problem", [
    (lambda: _model(h=8), r"parameter '0\.0\.weight' is float32 of shape \[8, 8\] here, float32 "
                          r"of shape \[16, 16\] there"),
    (lambda: _model(depth=2), r"layer '2' is missing here \(a Sequential there\)"),
    (lambda: _model(depth=4), r"layer '3' \(a Sequential\) is not in it"),
    (lambda: _model(act=paddle.nn.ReLU), r"layer '0\.1' is a ReLU here, a Tanh there"),
], ids=["shape", "fewer_layers", "more_layers", "layer_type"])
def test_a_plan_for_another_model_names_the_first_difference(made, other, problem):
    path = made[-1] / "plan.json"
    model = other()
    with pytest.raises(ValueError, match=rf"Plan\.load: '.*plan\.json' was made for another "
                                         rf"model: {problem}; profile and plan this model"):
        Plan.load(path, model)
    loaded = Plan.load(path)  # without a model: checked when applied
    with pytest.raises(ValueError, match=rf"apply_plan: .*{problem}|apply_plan: the plan "
                                         r"recomputes|apply_plan: layer .* is a"):
        loaded.apply(model)
    assert not loaded._applied


def test_a_plan_for_another_model_of_the_same_layer_types_is_refused_on_apply(made):
    # the planned layers are all there with their types: only the shapes tell them apart
    loaded = Plan.load(made[-1] / "plan.json")
    with pytest.raises(ValueError, match=r"apply_plan: the plan was made for another model: "
                                         r"parameter '0\.0\.weight' is float32 of shape \[8, 8\]"):
        loaded.apply(_model(h=8))


def test_a_plan_saved_before_structures_were_recorded_still_applies(made):
    model, x, _prof, plan, tmp = made
    data = json.loads((tmp / "plan.json").read_text())
    for key in ("structure", "paddle"):
        del data[key]
    (tmp / "old.json").write_text(json.dumps(data))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loaded = Plan.load(tmp / "old.json", _model(h=8))  # nothing to check it against
    assert loaded.to_dict() == {**plan.to_dict(), "structure": None}
    with loaded.apply(model):
        model(x).sum().backward()


# ------------------------------------------------------------ plans from a profile


def _grads(model, x, plan=None):
    for p in model.parameters():
        p.clear_gradient()
    x.clear_gradient()
    handle = plan.apply(model) if plan is not None else None
    try:
        loss = model(x).sum()
        loss.backward()
    finally:
        if handle is not None:
            handle.remove()
    return [loss.numpy()] + [p.grad.numpy() for p in model.parameters()] + [x.grad.numpy()]


@contextlib.contextmanager
def _leaf_forwards(model):
    """Leaf layer name -> calls of its own forward while inside.  The forwards themselves,
    not forward hooks: a run of calls reruns its members' forwards, and their hooks run once,
    at the caller's call (NOTE [ Runs of calls ] in ``_planner/options/apply_calls.py``)."""
    leaves = {name: layer for name, layer in model.named_sublayers() if not layer.sublayers()}
    counts = dict.fromkeys(leaves, 0)

    def counted(name, forward):
        def run(*args, **kwargs):
            counts[name] += 1
            return forward(*args, **kwargs)

        return run

    for name, layer in leaves.items():
        swap_forward(layer, counted(name, layer.forward))
    try:
        yield counts
    finally:
        for layer in leaves.values():
            restore_forward(layer, None)


def _inside(name: str, plan) -> bool:
    """Whether layer ``name`` is in one of ``plan``'s regions."""
    return any(not t or name == t or name.startswith(t + ".")
               for c in plan.choices for t in c.targets)


def test_a_loaded_profile_plans_without_profiling_again(made, monkeypatch):
    model, x, prof, plan, tmp = made
    loaded = Profile.load(tmp / "profile.json")
    assert loaded.to_dict() == prof.to_dict()
    assert loaded.structure["inputs"] == [[[8, H], "float32"]]

    def no_profile(*args, **kwargs):
        raise AssertionError("plan profiled again")

    monkeypatch.setattr("paddle_recompute._planner.plan.make.run_profile", no_profile)
    again = pr.planner.plan(model, x, budget=0.5, profile=loaded, final_rounds=0, options=KINDS)
    assert again.to_dict() == plan.to_dict()
    # the plan made from the file recomputes (layers in its regions run again in backward,
    # no other), and trains exactly as no recompute does.  Which layers rerun is not
    # asserted: the regions are chosen by measured times (whole blocks, a run of a block's
    # Linear, Tanh, Linear, ...: each plan is right), and a rerun stops once it has what
    # backward needs (NOTE [ Early stop ] in ``_core/stop.py``)
    with _leaf_forwards(model) as forwards:
        reference = _grads(model, x)
        plain = dict(forwards)
        forwards.update(dict.fromkeys(forwards, 0))
        recomputed = _grads(model, x, again)
    assert list(plain.values()) == [1] * 12  # 6 Linears, 6 Tanhs, once each
    reran = {name for name, n in forwards.items() if n == 2}
    assert reran and all(_inside(name, again) for name in reran), (reran, str(again))
    assert all(forwards[name] == 1 for name in forwards if name not in reran), forwards
    for got, want in zip(recomputed, reference, strict=True):
        np.testing.assert_array_equal(got, want)


def test_a_profile_of_other_inputs_or_another_model_is_refused(made):
    model, _x, _prof, _plan, tmp = made
    loaded = Profile.load(tmp / "profile.json")
    with pytest.raises(ValueError, match=r"plan: the profile given was made for other inputs: "
                                         r"input '0' is float32 of shape \[4, 16\] here, float32 "
                                         r"of shape \[8, 16\] there"):
        pr.planner.plan(model, _input(batch=4), budget=0.5, profile=loaded)
    with pytest.raises(ValueError, match=r"plan: the profile given was made for another model: "
                                         r"layer '0\.1' is a ReLU here, a Tanh there"):
        pr.planner.plan(_model(act=paddle.nn.ReLU), _input(), budget=0.5, profile=loaded)
    with pytest.raises(ValueError, match=r"input '0' is float64 of shape \[8, 16\] here"):
        pr.planner.plan(model, _input().astype("float64"), budget=0.5, profile=loaded)


def test_a_saved_profile_keeps_the_operator_graphs_and_their_measured_points(made):
    model, x, prof, _plan, tmp = made
    first = pr.planner.plan(model, x, budget=0.5, profile=prof, final_rounds=0,
                            options=["keep", "ops"])
    assert prof.op_profiles and any(k.startswith("ops:") for c in prof.policy_costs.values()
                                    for k in c)
    prof.save(tmp / "with_ops.json")
    loaded = Profile.load(tmp / "with_ops.json")
    assert loaded.op_profiles == prof.op_profiles
    assert loaded.policy_costs == prof.policy_costs
    # blocks alike share one graph in memory and in the file (written once)
    saved = json.loads((tmp / "with_ops.json").read_text())
    assert len(saved["op_graphs"]) == len({id(g) for g in prof.op_profiles.values()}) == 1
    assert len({id(g) for g in loaded.op_profiles.values()}) == 1
    # a plan on the loaded profile neither records nor measures: no forward runs at all
    forwards = []
    hooks = [layer.register_forward_pre_hook(lambda layer, args: forwards.append(1))
             for layer in model.sublayers()]
    try:
        again = pr.planner.plan(model, x, budget=0.5, profile=loaded, final_rounds=0,
                                options=["keep", "ops"])
    finally:
        for hook in hooks:
            hook.remove()
    assert forwards == []
    assert again.to_dict() == first.to_dict()
