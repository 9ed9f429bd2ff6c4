"""The GPT (value_and_grad + AdamWeightDecay) and LeNet (WithLossCell + TrainOneStepCell + Momentum)
programs against MindSpore 2.10's record, and recompute against no recompute.

Dropout off, the recorded weights: losses, outputs, gradients and parameters after training
within 1e-5 of MindSpore's (absolute). Why not exact: MindSpore's CPU kernels (MatMul,
BatchMatMul, LayerNorm, Conv2D, the reductions) accumulate in another order than Paddle's,
and the differences grow through a few training steps (largest seen: 4.1e-6 on the GPT's
third loss, 1.6e-6 on a GPT weight after training, 2.7e-7 on a LeNet gradient).
Recompute against no recompute: bit-for-bit, with dropout on as well.
"""

from __future__ import annotations

import runpy
import sys

import numpy as np
import pytest
from _ms_helpers import COMPAT, ORIGINALS
from _ms_models import PROGRAMS, first_step, loaded, trained

import paddle_mindspore as ms  # this module is MindSpore code: p.name is MindSpore's name
from paddle_mindspore import _runner

TOL = 1e-5  # see the module docstring
BATCHNORM_STATS = ("moving_mean", "moving_variance")


@pytest.fixture(scope="module", params=sorted(PROGRAMS))
def program(request):
    spec = PROGRAMS[request.param]
    return spec, spec.load()


def test_parameter_names_are_mindspore_names(program):
    spec, prog = program
    pairs = list(loaded(spec, prog, True).parameters_and_names())
    assert [n for n, _ in pairs] == spec.meta()["parameter_names"]
    assert all(p.name == n for n, p in pairs)  # Parameter.name as MindSpore names it


@pytest.mark.parametrize("recompute", [True, False])
def test_first_step_matches_mindspore(program, recompute):
    spec, prog = program
    ref = spec.reference()
    loss, out, grads = first_step(spec, prog, loaded(spec, prog, recompute))
    np.testing.assert_allclose(loss.asnumpy(), ref["recompute/loss0" if recompute else "plain/loss0"],
                               rtol=0, atol=TOL)
    np.testing.assert_allclose(out.asnumpy(), ref["out0"], rtol=0, atol=TOL)
    assert sorted(grads) == sorted(k[len("grad/"):] for k in ref.files if k.startswith("grad/"))
    for name, grad in grads.items():
        np.testing.assert_allclose(grad.asnumpy(), ref[f"grad/{name}"], rtol=0, atol=TOL, err_msg=name)


def test_training_matches_mindspore(program):
    spec, prog = program
    ref = spec.reference()
    losses, after = trained(spec, prog, recompute=True)
    np.testing.assert_allclose(losses, ref["recompute/losses"], rtol=0, atol=TOL)
    np.testing.assert_allclose(losses, ref["plain/losses"], rtol=0, atol=TOL)
    for name, value in after.items():
        if not name.endswith(BATCHNORM_STATS):
            np.testing.assert_allclose(value, ref[f"after/{name}"], rtol=0, atol=TOL, err_msg=name)


def test_batchnorm_statistics_match_mindspore_without_its_second_update():
    """MindSpore PyNative updates BatchNorm's moving statistics again when it recomputes a cell
    (recorded: they end differently with and without recompute); here they are updated once,
    so they match MindSpore's run without recompute, the moving variance included (MindSpore
    moves it toward the batch's unbiased variance, and so does the layer)."""
    spec = PROGRAMS["f_lenet"]
    ref = spec.reference()
    assert sorted(spec.meta()["differ_without_recompute"]) == sorted(
        f"stage{i}.1.{s}" for i in (1, 2) for s in BATCHNORM_STATS)
    _, after = trained(spec, spec.load(), recompute=True)
    for stage in ("stage1.1", "stage2.1"):
        assert not np.allclose(ref[f"after/{stage}.moving_mean"], ref[f"plain/after/{stage}.moving_mean"])
        for stat in BATCHNORM_STATS:
            np.testing.assert_allclose(after[f"{stage}.{stat}"], ref[f"plain/after/{stage}.{stat}"],
                                       rtol=0, atol=TOL, err_msg=f"{stage}.{stat}")


@pytest.mark.parametrize("dropout", [0.0, 0.1])
def test_recompute_is_bit_identical_to_no_recompute(program, dropout):
    spec, prog = program
    if dropout and spec.key != "e_gpt":
        pytest.skip("LeNet has no dropout")
    calls = {"n": 0}

    def count(*_):
        calls["n"] += 1

    with_losses, with_params = _counted(spec, prog, True, dropout, count)
    recomputed_calls = calls["n"]
    calls["n"] = 0
    without_losses, without_params = _counted(spec, prog, False, dropout, count)
    np.testing.assert_array_equal(with_losses, without_losses)
    assert with_params.keys() == without_params.keys()
    for name in with_params:
        np.testing.assert_array_equal(with_params[name], without_params[name], err_msg=name)
    assert recomputed_calls == 2 * calls["n"] > 0  # every recomputed block ran twice per step
    if dropout:  # the masks took effect
        assert not np.allclose(with_losses, trained(spec, prog, recompute=False)[0], rtol=0, atol=1e-4)


def _counted(spec, prog, recompute, dropout, count):
    """``trained`` with a forward pre-hook counting the calls of the recomputed blocks."""
    ms.set_seed(0)
    net = loaded(spec, prog, recompute, dropout)
    blocks = list(net.blocks) if spec.key == "e_gpt" else [net.stage1, net.stage2]
    hooks = [b.register_forward_pre_hook(lambda layer, args: count()) for b in blocks]
    try:
        losses = prog.train(net, spec.batches(prog, net), 3)
    finally:
        for hook in hooks:
            hook.remove()
    return losses, {n: p.asnumpy() for n, p in net.parameters_and_names()}


@pytest.mark.parametrize("key", sorted(PROGRAMS))
def test_unmodified_original_runs_under_the_runner_like_its_port(key, monkeypatch, capsys):
    """The original (``import mindspore``) under the runner prints what the port prints, and with
    the recorded weights its losses are MindSpore's (within TOL, printed to 6 decimals)."""
    spec = PROGRAMS[key]
    argv = ["--steps", "3", "--weights", spec.weights]
    monkeypatch.setattr(sys, "argv", list(sys.argv))
    monkeypatch.setattr(sys, "path", list(sys.path))
    assert _runner.main([str(ORIGINALS / "models" / f"{spec.module}.py"), *argv]) == 0
    original = capsys.readouterr().out
    sys.argv = [str(COMPAT / f"{spec.module}.py"), *argv]
    runpy.run_path(str(COMPAT / f"{spec.module}.py"), run_name="__main__")
    assert original == capsys.readouterr().out
    printed = [float(line.rsplit(" ", 1)[1]) for line in original.splitlines() if line.startswith("step ")]
    np.testing.assert_allclose(printed, spec.reference()["recompute/losses"], rtol=0, atol=TOL + 5e-7)


def test_the_new_originals_differ_from_their_ports_in_imports_only():
    for spec in PROGRAMS.values():
        original = (ORIGINALS / "models" / f"{spec.module}.py").read_text().splitlines()
        ported = (COMPAT / f"{spec.module}.py").read_text().splitlines()
        differing = [(a, b) for a, b in zip(original, ported, strict=True) if a != b]
        imports = f"import {spec.imports}"
        assert differing == [("import mindspore as ms", "import paddle_mindspore as ms"),
                             (f"from mindspore {imports}", f"from paddle_mindspore {imports}")]


def test_recorded_files_are_all_used_and_the_readme_quotes_them():
    from _ms_models import RECORDED

    kinds = ("weights.npz", "reference.npz", "reference.json")
    used = {f"{key}_{kind}" for key in PROGRAMS for kind in kinds}
    used |= {"g_cases_reference.json", "g_tensor_api.json", "README.md"}  # test_ms_recorded_cases, _surface
    used |= {"ckpt", "e2e", "metrics.json", "datasets", "errors.json", "zoo"}  # issue 18 (recorded/README.md)
    used |= {"h_training_cases.json", "summary"}  # mindcv's training path: test_ms_training_cases, _summary
    used |= {"i_mindcv_cases.json", "state_monitor.json"}  # mindcv's optimizers: test_ms_mindcv_optim
    used |= {"j_script_cases.json", "mindcv_script"}  # mindcv's train.py: test_ms_mindcv_train_script
    used |= {"k_grad_hook_cases.json"}  # register_hook, Cell.set_grad: test_ms_grad_hooks
    used |= {"mindcv_api_presence.json"}  # the names MindSpore has: test_ms_api_audit
    used |= {"mindformers_api_presence.json", "mindformers_llama_imports.json",  # test_ms_api_audit
             "ms_cell_primitive_methods.json"}
    used |= {"softmax_grad_after_size_one.json"}  # MindSpore's softmax gradient: test_ms_softmax_grad
    used |= {"batchnorm.json"}  # MindSpore's BatchNorm arithmetic: test_ms_batchnorm_arithmetic
    used |= {"l_mindformers_cases.json", "mindformers_llama"}  # test_ms_mindformers_names, _llama
    used |= {"l_glm2_cases.json", "mindformers_glm2"}  # test_ms_glm2_names, test_ms_mindformers_glm2
    # test_ms_qwen3_names; test_ms_mindformers_qwen3 (mindformers_qwen3/: init.npz, grads.npz, run.json)
    used |= {"m_qwen3_cases.json", "mindformers_qwen3"}
    used |= {"step_memory.json"}  # a training step's peak memory: test_ms_step_memory
    used |= {"grad_position.json"}  # what grad / value_and_grad return: test_ms_grad_position
    used |= {"primitive_marks.json"}  # PyNative ignores Primitive.recompute(): test_ms_dropout_mark
    used |= {"ops_primitive_names.json"}  # where ops / ops.operations expose classes: test_ms_ops_exposure
    assert sorted(p.name for p in RECORDED.iterdir()) == sorted(used)
    readme = (RECORDED / "README.md").read_text()
    for spec in PROGRAMS.values():
        assert all(repr(loss) in readme for loss in spec.meta()["losses_recompute"])
        assert spec.meta()["losses_recompute"] == spec.meta()["losses_plain"]
