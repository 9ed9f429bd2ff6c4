"""Every error path of the compatibility layer; MindSpore's own texts where it has them.

The expected texts are read from data/d_semantics_pynative.txt (recorded from MindSpore 2.10);
its observations that are not errors are checked in test_ms_reference_data.py.
"""

from __future__ import annotations

import contextlib
import inspect
import re
import sys

import numpy as np
import paddle
import pytest
from _ms_helpers import error_text, semantics

import paddle_mindspore as ms
from paddle_mindspore import nn, ops


class Inner(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(3, 3)

    def construct(self, x):
        return self.fc(x)


_KINDS = {"TypeError": TypeError, "ValueError": ValueError}


def _raises(label: str):
    """pytest.raises for the exception type and exact message MindSpore gave for ``label``."""
    kind, message = error_text(label)
    return pytest.raises(_KINDS[kind], match="^" + re.escape(message) + "$")


# --- Cell.recompute -------------------------------------------------------------------------

def test_cell_recompute_unknown_keyword_has_mindspores_text():
    with _raises("Cell.recompute(bad kwarg)"):
        Inner().recompute(foo=1)


def test_cell_recompute_non_bool_option_has_mindspores_text():
    with _raises("Cell.recompute(mp_comm_recompute='yes')"):
        Inner().recompute(mp_comm_recompute="yes")


def test_cell_recompute_is_keyword_only():
    with _raises("Cell.recompute(True) positional"):
        Inner().recompute(True)


def test_cell_recompute_non_bool_flag_has_mindspores_text():
    with _raises("Cell.recompute(output_recompute=1)"):
        Inner().recompute(output_recompute=1)
    for flag in ("use_reentrant", "early_stop"):
        with pytest.raises(TypeError, match="^The input value must be a bool, but got int.$"):
            Inner().recompute(**{flag: 1})


def test_cell_recompute_context_fn_needs_non_reentrant():
    with _raises("recompute(Cell, use_reentrant=True, context_fn=...)"):
        Inner().recompute(context_fn=lambda: (contextlib.nullcontext(), contextlib.nullcontext()))


def test_cell_recompute_accepts_the_parallel_keys_and_returns_none():
    cell = Inner()
    assert cell.recompute(mp_comm_recompute=False, parallel_optimizer_comm_recompute=True,
                          recompute_slice_activation=True) is None
    assert cell._ms_recompute.options == {"mp_comm_recompute": False,
                                          "parallel_optimizer_comm_recompute": True,
                                          "recompute_slice_activation": True}
    assert cell.recompute() is None  # twice is fine, as in MindSpore


def test_context_fn_must_return_two_context_managers():
    cell = Inner()
    cell.recompute(use_reentrant=False, context_fn=lambda: None)
    with pytest.raises(TypeError, match="context_fn must return a tuple of two context managers"):
        cell(paddle.ones([2, 3]))
    with pytest.raises(TypeError, match="context_fn must be callable"):
        Inner().recompute(use_reentrant=False, context_fn=3)


# --- Primitive.recompute --------------------------------------------------------------------

@pytest.mark.parametrize("label,value", [("Primitive.recompute('yes')", "yes"),
                                         ("Primitive.recompute(1)", 1)])
def test_primitive_recompute_non_bool_has_mindspores_text(label, value):
    with _raises(label):
        ops.ReLU().recompute(value)


def test_primitive_recompute_returns_self_and_records_the_attribute():
    relu = ops.ReLU()
    assert relu.attrs == {}
    assert relu.recompute() is relu and relu.attrs["recompute"] is True
    assert relu.recompute(mode=False) is relu and relu.attrs["recompute"] is False


# --- mindspore.recompute --------------------------------------------------------------------

def test_recompute_of_a_lambda_needs_a_cell_when_reentrant():
    with _raises("recompute(lambda) default use_reentrant=True"):
        ms.recompute(lambda x: x * 2, paddle.ones([2, 3]))


def test_recompute_of_a_bound_cell_method_needs_a_cell_when_reentrant():
    cell = Inner()
    with _raises("recompute(bound Cell method) default"):
        ms.recompute(cell.construct, paddle.ones([2, 3]))


def test_recompute_context_fn_needs_non_reentrant():
    with _raises("recompute(Cell, use_reentrant=True, context_fn=...)"):
        ms.recompute(Inner(), paddle.ones([2, 3]),
                     context_fn=lambda: (contextlib.nullcontext(), contextlib.nullcontext()))


def test_recompute_non_bool_flags():
    with pytest.raises(TypeError, match="^The input value must be a bool, but got int.$"):
        ms.recompute(Inner(), paddle.ones([2, 3]), use_reentrant=1)


def test_recompute_of_a_plain_function_works_when_non_reentrant():
    expected = semantics()["recompute(plain function) use_reentrant=False"]
    x = ms.Tensor(np.ones((2, 3), np.float32))
    out = ms.recompute(lambda t: t * 2, x, use_reentrant=False)
    assert "OK: " + str(out.numpy().tolist()) == expected


def test_recompute_non_callable_block():
    with pytest.raises(TypeError, match="must be callable"):
        ms.recompute(3, paddle.ones([1]), use_reentrant=False)


# --- signatures --------------------------------------------------------------------------------

def _plain(signature: inspect.Signature) -> str:
    """The signature as MindSpore prints it: no annotations, MindSpore's dtype names."""
    params = [p.replace(annotation=p.empty) for p in signature.parameters.values()]
    text = str(signature.replace(parameters=params, return_annotation=signature.empty))
    return text.replace(repr(paddle.float32), "mindspore.float32")


@pytest.mark.parametrize("label,obj", [
    ("sig.mindspore.recompute", ms.recompute),
    ("sig.Cell.recompute", nn.Cell.recompute),
    ("sig.Primitive.recompute", ops.Primitive.recompute),
    ("sig.ops.Dropout.__init__", ops.Dropout.setup),
    ("sig.ops.dropout", ops.dropout),
    ("sig.nn.Dropout.__init__", nn.Dropout.__init__),
    ("sig.nn.Conv2d.__init__", nn.Conv2d.__init__),
    ("sig.nn.Dense.__init__", nn.Dense.__init__),
])
def test_signatures_match_mindspore(label, obj):
    ours = _plain(inspect.signature(obj))
    assert "OK: " + ours == semantics()[label]


# --- operators and layers -----------------------------------------------------------------

def test_dropout_rejects_p_with_mindspores_text():
    with _raises("ops.Dropout(p=0.1)"):
        ops.Dropout(p=0.1)


def test_dropout_accepts_any_keep_prob_at_construction_and_checks_at_call():
    for label, keep in (("ops.Dropout(keep_prob=0.0)", 0.0), ("ops.Dropout(keep_prob=1.5)", 1.5)):
        prim = ops.Dropout(keep_prob=keep)
        assert "OK: " + repr(prim) == semantics()[label]
        with pytest.raises(ValueError, match=r"keep_prob' must be in range \(0, 1\]"):
            prim(paddle.ones([2]))


def test_primitive_constructor_binding_errors():
    with pytest.raises(TypeError, match="^too many positional arguments$"):
        ops.Softmax(-1, 2)
    with pytest.raises(TypeError, match="^got an unexpected keyword argument 'keepdims'$"):
        ops.ReduceMean(keepdims=True)


def test_layer_argument_errors():
    with pytest.raises(ValueError, match="pad_mode"):
        nn.Conv2d(2, 2, 2, pad_mode="circular")
    with pytest.raises(ValueError, match="'pad' must be zero"):
        nn.Conv2d(2, 2, 2, padding=1)
    with pytest.raises(ValueError, match="divisible by 'group'"):
        nn.Conv2d(3, 2, 2, group=2)
    with pytest.raises(ValueError, match="'in_channels' must be a positive int"):
        nn.Dense(0, 2)
    with pytest.raises(ValueError, match=r"'p' must be a number in range \[0, 1\)"):
        nn.Dropout(p=1.0)
    with pytest.raises(ValueError, match=r"'keep_prob' must be a number in range \(0, 1\]"):
        nn.Dropout(keep_prob=0.0)
    with pytest.raises(ValueError, match="'momentum' must be in range"):
        nn.BatchNorm2d(2, momentum=2.0)
    with pytest.raises(ValueError, match="reduction"):
        nn.SoftmaxCrossEntropyWithLogits(reduction="avg")
    with pytest.raises(TypeError, match="each item must be a Cell"):
        nn.SequentialCell([ops.ReLU()])
    with pytest.raises(ValueError, match="'divisor_override' must be > 0"):
        nn.AvgPool2d(2, divisor_override=0)
    with pytest.raises(ValueError, match="initializer 'glorot' is not provided"):
        nn.Dense(2, 2, weight_init="glorot")


def test_not_provided_options_raise_instead_of_approximating():
    with pytest.raises(NotImplementedError, match="data_format='NHWC'"):
        nn.Conv2d(2, 2, 2, data_format="NHWC")
    # grouped parameters are provided since issue 17; gradient centralization is not
    with pytest.raises(NotImplementedError, match=r"Momentum\(grad_centralization=True\)"):
        nn.Momentum([{"params": Inner().trainable_params(), "grad_centralization": True}], 0.1, 0.9)
    with pytest.raises(NotImplementedError, match="set_context\\(save_graphs=...\\)"):
        ms.set_context(save_graphs=True)
    with pytest.raises(NotImplementedError, match="return_ids=True"):
        ms.grad(lambda x: x, return_ids=True)
    with pytest.raises(NotImplementedError, match=r"nn.AvgPool2d\(ceil_mode=True\)"):
        nn.AvgPool2d(2, ceil_mode=True)
    with pytest.raises(NotImplementedError, match="return_indices=True"):
        nn.MaxPool2d(2, return_indices=True)
    with pytest.raises(NotImplementedError, match=r"ops.Softmax over several axes"):
        ops.Softmax((0, 1))


def test_binary_ops_need_a_tensor():
    with pytest.raises(TypeError, match="For 'Add', at least one of the inputs must be a Tensor"):
        ops.Add()(1.0, 2.0)


def test_context_validation():
    with pytest.raises(ValueError, match="'mode' should be"):
        ms.set_context(mode=3)
    with pytest.raises(ValueError, match="device_target"):
        ms.set_context(device_target="Ascend")
    with pytest.raises(ValueError, match="keyword foo is not recognized"):
        ms.get_context("foo")
    ms.set_context(mode=ms.GRAPH_MODE)
    assert ms.get_context("mode") == ms.GRAPH_MODE
    ms.set_context(mode=ms.PYNATIVE_MODE)


def test_grad_argument_errors():
    with pytest.raises(ValueError, match="can not be None at the same time"):
        ms.value_and_grad(lambda x: x, None, None)
    with pytest.raises(TypeError, match="grad_position"):
        ms.grad(lambda x: x, grad_position="0")
    with pytest.raises(TypeError, match="weights"):
        ms.grad(lambda x: x, weights=3)
    with pytest.raises(ValueError, match="has_aux"):
        ms.grad(lambda x: x * 2, has_aux=True)(paddle.ones([2]))
    # MindSpore's RuntimeError and text (recorded/grad_position.json, ``past_end``)
    with pytest.raises(RuntimeError, match="Position index 3 is exceed input size"):
        ms.grad(lambda x: x * 2, grad_position=3)(paddle.ones([2]))
    with pytest.raises(TypeError, match="must be a Tensor"):
        ms.grad(lambda x: x * 2)(2.0)
    with pytest.raises(ValueError, match="'weights' must be given"):
        ops.GradOperation(get_by_list=True)(lambda x: x)


def test_seed_and_tensor_argument_errors():
    with pytest.raises(ValueError, match="non-negative integer"):
        ms.set_seed(-1)
    with pytest.raises(ValueError, match="'input_data' must be given"):
        ms.Tensor()
    with pytest.raises(TypeError, match="ParameterTuple input should be Parameter"):
        ms.ParameterTuple([paddle.ones([1])])
    with pytest.raises(TypeError, match="default_input"):
        ms.Parameter(object())


# --- APIs not provided --------------------------------------------------------------------

@pytest.mark.parametrize("module,name", [(ms, "export"), (nn, "LSTM"), (ms.numpy, "fft"),
                                         (ms.dataset.vision, "RandAugment"), (ops, "GatherNd"),
                                         (ms.common, "Generator"), (ops.operations, "GatherNd")])
def test_missing_api_names_itself(module, name):
    with pytest.raises(ms.MissingAPIError, match=rf"mindspore\S* {name}|\.{name} is not provided"):
        getattr(module, name)
    assert not hasattr(module, name)  # still an AttributeError for hasattr()


def test_row_tensor_holds_rows_and_matches_its_registrations():
    """mindcv's train_step imports RowTensor and registers ("Tensor", "RowTensor") functions."""
    indices, values = ms.Tensor(np.array([0, 2], np.int32)), ms.Tensor(np.ones((2, 3), np.float32))
    row = ms.RowTensor(indices, values, (4, 3))
    assert row.dense_shape == (4, 3) and row.indices is indices and row.values is values
    assert ms.RowTensor(row_tensor=row).dense_shape == (4, 3)
    scale = ops.MultitypeFuncGraph("scale")
    scale.register("Tensor", "RowTensor")(lambda s, g: "rows")
    scale.register("Tensor", "Tensor")(lambda s, g: "dense")
    assert scale(values, row) == "rows" and scale(values, values) == "dense"
    with pytest.raises(ValueError, match="'indices' must be 1-D"):
        ms.RowTensor(indices, values, (4,))


def test_from_import_of_a_missing_api_fails_and_names_it():
    with pytest.raises(ImportError, match="cannot import name 'LSTM' from 'paddle_mindspore.nn'"):
        exec("from paddle_mindspore.nn import LSTM", {})


def test_alias_refuses_to_shadow_a_real_mindspore(monkeypatch):
    monkeypatch.setitem(sys.modules, "mindspore", type(sys)("mindspore"))
    with pytest.raises(RuntimeError, match="a real 'mindspore' is already imported"):
        ms.install_import_alias()
    assert not ms.import_alias_installed()
