"""Checkpoint I/O (``mindspore.train.serialization``) against files real MindSpore 2.10 wrote.

``compat/record/record_checkpoints.py`` saved the network of ``compat/record/ckpt_net.py`` with
MindSpore (``recorded/ckpt/``) and loaded ``from_paddle.ckpt``, a file this layer wrote, back
into MindSpore. Files written here must equal MindSpore's byte for byte (so MindSpore reads
them), and MindSpore's files must load here with MindSpore's names, dtypes and return values.
"""

from __future__ import annotations

import importlib.util
import json
import os

import numpy as np
import pytest
from _ms_helpers import COMPAT

import paddle_mindspore as ms

DATA = COMPAT / "tests" / "recorded" / "ckpt"
REF = json.loads((DATA / "reference.json").read_text())
ARRAYS = np.load(DATA / "reference.npz")


@pytest.fixture(scope="module")
def nets():
    """``compat/record/ckpt_net.py`` (MindSpore code) imported with ``mindspore`` aliased to the layer."""
    ms.install_import_alias()
    try:
        spec = importlib.util.spec_from_file_location("ckpt_net", COMPAT / "record" / "ckpt_net.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        ms.uninstall_import_alias()
    return module


def _net(nets, scale=1.0, wrapped=False):
    net = nets.Wrapped() if wrapped else nets.Net()
    values = nets.weights()
    prefix = "backbone." if wrapped else ""
    for name, param in net.parameters_and_names():
        param.set_data(ms.Tensor(values[name[len(prefix) :]] * np.float32(scale)))
    return net.set_train(False)


_MS_NAMES = {"float32": "Float32", "float16": "Float16", "int64": "Int64", "int32": "Int32"}


def _describe(loaded):
    """MindSpore's ``(dtype name, shape)`` per entry; strs as themselves."""
    return {
        k: v if isinstance(v, str) else [_MS_NAMES[str(v.dtype).split(".")[-1]], list(v.shape)]
        for k, v in loaded.items()
    }


@pytest.mark.parametrize(
    "file, kwargs, build",
    [
        ("net.ckpt", {}, lambda n: _net(n)),
        (
            "net_extra.ckpt",
            {"append_dict": {"epoch_num": 3, "lr": 0.5, "tag": "v1"}, "crc_check": True},
            lambda n: _net(n),
        ),
        ("net.safetensors", {"format": "safetensors"}, lambda n: _net(n)),
        ("wrapped.ckpt", {}, lambda n: _net(n, 2.0, wrapped=True)),
        (
            "list.ckpt",
            {"choice_func": lambda name: name.startswith("conv")},
            lambda n: _net(n).trainable_params(),
        ),
    ],
)
def test_saved_files_equal_mindspores_bytes(nets, tmp_path, file, kwargs, build):
    ms.save_checkpoint(build(nets), str(tmp_path / file), **kwargs)
    assert (tmp_path / file).read_bytes() == (DATA / file).read_bytes()
    assert not os.access(tmp_path / file, os.W_OK) or os.geteuid() == 0  # read-only, as MindSpore leaves it


def test_file_name_gains_the_format_suffix(nets, tmp_path):
    ms.save_checkpoint(_net(nets), str(tmp_path / "plain"))
    assert (tmp_path / "plain.ckpt").read_bytes() == (DATA / "net.ckpt").read_bytes()


@pytest.mark.parametrize(
    "file, kwargs, key",
    [
        ("net.ckpt", {}, None),
        ("net_extra.ckpt", {}, None),
        ("list.ckpt", {}, None),
        ("net.safetensors", {"format": "safetensors"}, "load_safetensors"),
        ("net.ckpt", {"filter_prefix": "conv"}, "load_filter_conv"),
        ("net.ckpt", {"specify_prefix": ["bn"]}, "load_specify_bn"),
    ],
)
def test_mindspore_files_load_with_mindspores_names_and_dtypes(file, kwargs, key):
    loaded = ms.load_checkpoint(str(DATA / file), **kwargs)
    expected = REF["load"][file] if key is None else REF[key]
    assert _describe(loaded) == expected
    if file == "net.ckpt" and not kwargs:
        assert list(loaded) == REF["order"]  # file order, as MindSpore's dict
        for name, value in loaded.items():
            np.testing.assert_array_equal(value.numpy(), ARRAYS[f"w/{name}"])


def test_network_loaded_from_mindspore_gives_mindspores_output(nets):
    net = nets.Net()
    assert ms.load_checkpoint(str(DATA / "net.ckpt"), net=net)
    net.set_train(False)
    # MindSpore's CPU conv and matmul kernels sum in another order than Paddle's: float32 rounding
    np.testing.assert_allclose(net(ms.Tensor(ARRAYS["x"])).numpy(), ARRAYS["y"], rtol=1e-5, atol=1e-6)


def test_file_written_here_loads_in_mindspore_with_its_values(nets, tmp_path):
    ms.save_checkpoint(_net(nets, 3.0), str(tmp_path / "from_paddle.ckpt"))
    assert (tmp_path / "from_paddle.ckpt").read_bytes() == (DATA / "from_paddle.ckpt").read_bytes()
    assert REF["from_paddle_not_loaded"] == [[], []]
    y = _net(nets, 3.0)(ms.Tensor(ARRAYS["x"])).numpy()
    np.testing.assert_allclose(y, ARRAYS["y_from_paddle"], rtol=1e-5, atol=1e-6)  # kernels: as above


@pytest.mark.parametrize(
    "source, target, strict, key",
    [
        ("net.ckpt", "wrapped", False, "into_wrapped"),
        ("wrapped.ckpt", "plain", False, "wrapped_into_plain"),
        ("wrapped.ckpt", "plain", True, "wrapped_into_plain_strict"),
    ],
)
def test_load_param_into_net_returns_mindspores_lists(nets, source, target, strict, key):
    net = nets.Wrapped() if target == "wrapped" else nets.Net()
    result = ms.load_param_into_net(net, ms.load_checkpoint(str(DATA / source)), strict_load=strict)
    assert [list(r) for r in result] == REF[key]
    if key == "wrapped_into_plain":  # loaded through the prefix MindSpore strips
        net.set_train(False)
        np.testing.assert_allclose(
            net(ms.Tensor(ARRAYS["x"])).numpy(), ARRAYS["y_wrapped_into_plain"], rtol=1e-5, atol=1e-6
        )  # kernels: as above


def test_str_and_scalar_entries_round_trip(tmp_path):
    ms.save_checkpoint(
        {"w": ms.Parameter(ms.Tensor(np.ones((2, 2), np.float16)), name="w")},
        str(tmp_path / "d.ckpt"),
        append_dict={"step": 7, "note": "ok"},
    )
    loaded = ms.load_checkpoint(str(tmp_path / "d.ckpt"))
    assert loaded["note"] == "ok" and int(loaded["step"].numpy()) == 7
    assert str(loaded["w"].dtype) == "paddle.float16" and loaded["w"].name == "w"


def test_float_dtype_converts_unless_strict(nets, tmp_path):
    half = {k: ms.Parameter(ms.Tensor(v.astype(np.float16)), name=k) for k, v in nets.weights().items()}
    net = nets.Net()
    assert ms.load_param_into_net(net, half) == ([], [])
    expected = nets.weights()["fc.weight"].astype(np.float16).astype(np.float32)
    np.testing.assert_array_equal(net.fc.weight.numpy(), expected)
    with pytest.raises(RuntimeError, match="should have the same type"):
        ms.load_param_into_net(nets.Net(), half, strict_load=True)


@pytest.mark.parametrize(
    "call, error, text",
    [
        (
            lambda d, n: ms.save_checkpoint(n, str(d / "x.ckpt"), format="pt"),
            ValueError,
            "'safetensors' or 'ckpt'",
        ),
        (lambda d, n: ms.save_checkpoint(3, str(d / "x.ckpt")), TypeError, "must be nn.Cell, list or dict"),
        (lambda d, n: ms.save_checkpoint(n, 5), TypeError, "'ckpt_file_name' must be string"),
        (lambda d, n: ms.save_checkpoint(n, str(d)), IsADirectoryError, "is a directory"),
        (lambda d, n: ms.load_checkpoint(str(d / "none.ckpt")), ValueError, "does not exist"),
        (
            lambda d, n: ms.load_checkpoint(str(DATA / "net.ckpt"), format="safetensors"),
            ValueError,
            "must same with",
        ),
        (
            lambda d, n: ms.load_checkpoint(str(DATA / "net.ckpt"), filter_prefix=["conv", "bn", "fc"]),
            ValueError,
            "dict is empty",
        ),
        (lambda d, n: ms.load_param_into_net(n, [1]), TypeError, "should be a dict"),
        (
            lambda d, n: ms.load_param_into_net(n, {"fc.weight": ms.Parameter(ms.Tensor(np.ones((2, 2))))}),
            RuntimeError,
            "should have the same shape",
        ),
    ],
)
def test_bad_arguments_raise_mindspores_error_types(nets, tmp_path, call, error, text):
    with pytest.raises(error, match=text):
        call(tmp_path, nets.Net())


def test_corrupt_file_is_a_value_error(tmp_path):
    (tmp_path / "bad.ckpt").write_bytes(b"\xff\xff\xff garbage")
    with pytest.raises(ValueError, match="cannot be parsed"):
        ms.load_checkpoint(str(tmp_path / "bad.ckpt"))
