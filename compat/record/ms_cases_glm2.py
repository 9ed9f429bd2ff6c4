# ruff: noqa: E501  (a table of case sources, one line each)
"""Cases for the MindSpore names mindformers' GLM2 uses beyond Llama's: ``SplitWithSize``,
``Stack``, ``Tril``, ``Equal``, ``Less`` (values and input gradients), ``Mul``/``Add`` on a
uint8 mask (MindSpore wraps ``mask * -10000`` to 240), ``Tensor.type`` and ``Tensor.to``.

Same form as ms_cases.py (its inputs are in scope); recorded by
``record_cases.py --cases ms_cases_glm2 compat/tests/recorded/l_glm2_cases.json``.
"""

from __future__ import annotations

from ms_cases import inputs  # noqa: F401  (the recorder's namespace)
from ms_cases_mindformers import _GRAD

_MASK = "M = Tensor(np.array([[0, 1, 1], [0, 0, 1]], np.uint8))\n"

PRIMITIVES = {
    "split_with_size": _GRAD + "from mindspore.ops import auto_generate as g\nresult = vg(lambda x: g.SplitWithSize()(x, (1, 3), 1)[1] * 2 + 0, X)",
    "stack": _GRAD + "result = vg(lambda x, y: P.Stack(axis=-1)((x, y)), X, Y)",
    "stack_axis0": _GRAD + "result = vg(lambda x, y: P.operations.Stack()((x, y)), X, Y)",
    "tril": _GRAD + "result = vg(lambda x: P.Tril()(x), X)",
    "tril_diagonal": _GRAD + "result = vg(lambda x: P.operations.Tril(diagonal=1)(x), X)",
    "tril_uint8": _MASK + "from mindspore import ops as P\nresult = P.Tril()(Tensor(np.ones((2, 3, 3), np.uint8)))",
    "equal": _GRAD + "result = (P.Equal()(X, Y), P.Equal()(X, X2))",
    "less": _GRAD + "result = (P.Less()(X, Y), P.operations.Less()(X, 0.5))",
    "less_int_with_float": "from mindspore import ops as P\nt = Tensor(np.tril(np.ones((1, 3, 3))), ms.int32)\nresult = (P.Less()(t, 0.5), P.Add()(t, 0.5), P.Mul()(t, 0.25))",
    "mul_uint8_mask": _MASK + "from mindspore import ops as P\nr = P.Mul()(M, -10000)\nresult = (r, P.Add()(Tensor(np.zeros((2, 3), np.float32)), r))",
    "tensor_type_and_to": _MASK + "x = Tensor(np.array([1.5, -2.0], np.float32))\nresult = (x.type(), x.type(ms.int32), x.to(ms.float16), M.type())",
    "inference_kernels_construct": "from mindspore import ops\nfrom mindspore.ops import auto_generate as g\nresult = [type(k).__name__ for k in (ops.ApplyRotaryPosEmb(3), g.PagedAttention(4, 0.5, 2), g.PagedAttentionMask(4, 0.5, 2), g.ReshapeAndCache())]",
}

# MindSpore 2.10 (CPU, PyNative) computes a wrong input gradient here: the pieces of a split along
# the last axis, fed to Concat, get their gradients as contiguous runs of the output's gradient
# (row 0 of the input's gradient reads [-1, -0.82, -0.64, -1]; the right one is
# [-0.82, -0.64, -0.45, -1]). The forward values are right. The layer computes the right gradient;
# compat/tests/test_ms_glm2_names.py checks both facts.
VIEW_GRADIENT = {
    "split_with_size_concat": _GRAD + "from mindspore.ops import auto_generate as g\nresult = vg(lambda x: P.Concat(1)(g.SplitWithSize()(x, (3, 1), -1)[::-1]), X)",
}

GROUPS = {"prim": PRIMITIVES, "view_gradient": VIEW_GRADIENT}
