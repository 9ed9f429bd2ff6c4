# ruff: noqa: E501  (a table of case sources, one line each)
"""Cases for the MindSpore names mindformers' Qwen3 training-graph path uses that MindSpore's
CPU build computes: the generated ``AddExt``/``SubExt`` (with ``alpha``), ``Muls``, ``SumExt``,
``Cos``, ``Sin``, ``Split``, ``ArgMaxWithValue``, ``Minimum``, ``InplaceCopy`` (values and
input gradients) and ``Generator._step``. (``RmsNorm``, ``Outer``, ``FlashAttentionScore``,
``StackExt``, ``OneHotExt``, ``ZerosLikeExt`` and ``mint.nn.functional.embedding`` have no CPU
kernel: compat/tests/test_ms_qwen3_names.py checks those against their documented formulas.)

Same form as ms_cases.py (its inputs are in scope); recorded by
``record_cases.py --cases ms_cases_qwen3 compat/tests/recorded/m_qwen3_cases.json``.
"""

from __future__ import annotations

from ms_cases import inputs  # noqa: F401  (the recorder's namespace)
from ms_cases_mindformers import _GRAD

_G = _GRAD + "from mindspore.ops import auto_generate as g\n"

PRIMITIVES = {
    "add_ext": _G + "result = vg(lambda x, y: g.AddExt()(x, y), X, Y)",
    "add_ext_alpha": _G + "result = vg(lambda x, y: g.AddExt()(x, y, 2.5), X, Y)",
    "sub_ext_alpha": _G + "result = vg(lambda x, y: g.SubExt()(x, y, 0.5), X, Y)",
    "sub_ext": _G + "result = vg(lambda x, y: g.SubExt()(x, y), X, Y)",
    "muls": _G + "result = vg(lambda x: g.Muls()(x, 0.75), X)",
    "sum_ext_all": _G + "result = vg(lambda x: g.SumExt()(x), X)",
    "sum_ext_dim": _G + "result = vg(lambda x: g.SumExt()(x, 1), X)",
    "sum_ext_dim_keepdim": _G + "result = vg(lambda x: g.SumExt()(x, (0,), True), X)",
    "cos": _G + "result = vg(lambda x: g.Cos()(x), X)",
    "sin": _G + "result = vg(lambda x: g.Sin()(x), X)",
    "split": _G + "result = vg(lambda x: g.Split(1, 2)(x)[1] * 2 + g.Split(1, 2)(x)[0], X)",
    "split_pieces": _G + "result = g.Split(axis=-1, output_num=4)(X)",
    "argmax_with_value": _G + "result = (g.ArgMaxWithValue(axis=1)(X), vg(lambda x: g.ArgMaxWithValue(axis=1)(x)[1], X))",
    "argmax_with_value_keep_dims": _G + "result = (g.ArgMaxWithValue(axis=0, keep_dims=True)(X), vg(lambda x: g.ArgMaxWithValue(0, True)(x)[1], X))",
    "minimum": _G + "result = vg(lambda x, y: g.Minimum()(x, y), X, Y)",
    "minimum_scalar": _G + "idx = Tensor(np.array([3, 7, 1], np.int32))\nresult = g.Minimum()(idx, 4)",
    "inplace_copy": _G + "t = Tensor(np.zeros((3, 4), np.float32))\nr = g.InplaceCopy()(t, Y)\nresult = (r, t)",
    "inplace_copy_broadcast": _G + "t = Tensor(np.zeros((3, 4), np.float32))\ng.InplaceCopy()(t, Tensor(np.array([1.0, 2.0, 3.0, 4.0], np.float32)))\nresult = t",
    "inplace_copy_grad": _G + "result = vg(lambda x, y: g.InplaceCopy()(x * 2, y) * 1, X, Y)",
    "inplace_copy_grad_broadcast": _G + "result = vg(lambda x, y: g.InplaceCopy()(x * 2, y[0]) * 1, X, Y)",
    "generator_step": "from mindspore.common.generator import Generator\ngen = Generator()\nstep = lambda n: [int(t) for t in gen._step(Tensor(n, ms.int64))]\na = step(1)\nb = step(3)\ngen.manual_seed(7)\nc = step(2)\nd = step(1)\nresult = (a, b, c, d, gen.initial_seed())",
    "generator_step_dtype": "from mindspore.common.generator import Generator\nresult = Generator()._step(Tensor(1, ms.int64))",
}

GROUPS = {"prim": PRIMITIVES}
