"""mindcv's own optimizers (``mindcv.create_optimizer``: adamw, adan, lion, nadam), which define
``construct`` on MindSpore's ``nn.Optimizer`` Cell interface, and ``nn.Conv1dTranspose``, against
real MindSpore 2.10.

Cases: compat/record/ms_cases_mindcv.py; record: recorded/i_mindcv_cases.json. The sources
``import mindcv``, so they run under the runner's import alias. Tolerance 1e-5 for the optimizer
cases, as in test_ms_training_cases.py (three float32 steps whose sums accumulate in another
order); 1e-6 otherwise.
"""

from __future__ import annotations

import numpy as np
import pytest
from _ms_cases import compare, recorded, run_case

import paddle_mindspore as ms

CASES = recorded("i_mindcv_cases.json")["cases"]


@pytest.mark.parametrize("name", sorted(CASES))
def test_case_matches_mindspore(name, alias):
    case = CASES[name]
    atol = 1e-5 if name.startswith("mindcv_optim/") else 1e-6
    compare(case["result"], run_case(case["source"]), name, atol=atol)


def test_state_parameters_are_updated_in_place(alias):
    """``self.beta1_power = beta1_power`` in AdamW's construct writes into the Parameter, which
    stays the optimizer's state (MindSpore's ``set_data``)."""
    source = CASES["mindcv_optim/adamw"]["source"].split("losses = []")[0]
    opt = run_case(source + "result = opt")
    power = opt.beta1_power
    grads = tuple(ms.ops.ones_like(p) for p in opt.parameters)
    opt(grads)
    opt(grads)
    assert opt.beta1_power is power and abs(float(power.numpy()[0]) - 0.81) < 1e-7
    names = [name for name, _ in opt.parameters_and_names()]
    assert names[:2] == ["global_step", "learning_rate"] and names[-2:] == ["beta1_power", "beta2_power"]


def test_state_monitor_trains_as_in_mindspore(alias, tmp_path):
    """mindcv's StateMonitor in Model.train (compat/record/state_monitor_train.py): Model enters it
    as a context manager (its SummaryRecord), and its logged losses and rates, the epoch table,
    the final weights, the files it writes and the optimizer checkpoint's entries are MindSpore's."""
    import importlib.util

    from _ms_helpers import COMPAT

    path = COMPAT / "record" / "state_monitor_train.py"
    spec = importlib.util.spec_from_file_location("state_monitor_train", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    expected = recorded("state_monitor.json")
    ms.set_seed(1)
    actual = module.run(str(tmp_path))
    for key in ("files", "summary_files", "epoch_accuracy", "global_step", "best_ckpt"):
        assert actual[key] == expected[key], key
    assert sorted(actual["optim_ckpt"]) == sorted(expected["optim_ckpt"])
    # 12 float32 AdamW steps, summed in another order; the logs print six decimals
    for key in ("weight", "bias"):
        np.testing.assert_allclose(actual[key], expected[key], rtol=0, atol=1e-6, err_msg=key)
    for key in ("logged_loss", "logged_lr", "epoch_loss"):
        np.testing.assert_allclose(actual[key], expected[key], rtol=0, atol=1.01e-6, err_msg=key)
    for name, values in expected["optim_ckpt"].items():
        np.testing.assert_allclose(actual["optim_ckpt"][name], values, rtol=1e-5, atol=1e-6, err_msg=name)


def test_model_checkpoint_saves_a_mindcv_optimizers_state(alias, tmp_path):
    """ModelCheckpoint writes the training network with the optimizer's Parameters: for mindcv's
    AdamW the entries MindSpore's own checkpoint of that network holds (state_monitor.json)."""
    import mindcv

    net = ms.nn.Dense(3, 2)
    rates = [0.1, 0.05, 0.02, 0.01]
    opt = mindcv.create_optimizer(net.trainable_params(), "adamw", lr=rates, weight_decay=0.01)
    rng = np.random.RandomState(0)
    data = ms.dataset.NumpySlicesDataset((rng.standard_normal((16, 3)).astype(np.float32),
                                          (rng.rand(16) * 2).astype(np.int32)), ["x", "y"], shuffle=False)
    config = ms.train.CheckpointConfig(save_checkpoint_steps=4)
    saver = ms.train.ModelCheckpoint(prefix="dense", directory=str(tmp_path), config=config)
    ms.Model(net, mindcv.create_loss("CE"), opt).train(1, data.batch(4), callbacks=[saver])
    saved = ms.load_checkpoint(str(tmp_path / "dense-1_4.ckpt"))
    assert sorted(saved) == recorded("state_monitor.json")["best_ckpt"]
    assert saved["global_step"].numpy().tolist() == [4]
    np.testing.assert_array_equal(saved["adam_m.weight"].numpy(), opt.moments1[0].numpy())


@pytest.mark.parametrize("grouped", [False, True])
def test_assigning_the_learning_rate_parameter_changes_the_rate(grouped):
    """MindSpore's learning-rate callbacks write ``optimizer.learning_rate``; the layer's own
    optimizers read a constant rate from that Parameter each step."""
    net = ms.nn.Dense(3, 2)
    params = [{"params": net.trainable_params(), "lr": 0.5}] if grouped else net.trainable_params()
    opt = ms.nn.SGD(params, learning_rate=0.1)
    grads = tuple(ms.ops.ones_like(p) for p in net.trainable_params())
    before = net.weight.numpy().copy()
    rate = opt.learning_rate[0] if grouped else opt.learning_rate
    ms.ops.assign(rate, ms.Tensor(np.float32(0.25)))
    opt(grads)
    np.testing.assert_array_equal(net.weight.numpy(), before - np.float32(0.25))



@pytest.mark.parametrize("args", ["2", "2, -1"])
def test_repeat_refuses_what_mindspore_documents_as_runtime_errors(args):
    """Fewer repeats than dimensions, or a negative one: MindSpore documents RuntimeError (its
    CPU build cannot run ``repeat``, so these two are not recorded)."""
    error = run_case(f"result = Tensor(A).repeat({args})")
    assert isinstance(error, RuntimeError) and "For 'repeat'" in str(error)
