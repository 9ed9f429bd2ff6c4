# ruff: noqa: E501  (a table of case sources, one line each)
"""Cases for the MindSpore names mindformers' Llama uses beyond mindcv's: the primitives its
layers build (values and gradients), ``mint`` functions, ``Primitive.shard`` and ``Layout``,
``Cell.set_comm_fusion``, the auto-parallel context and its readers, ``_checkparam``'s checks,
each with MindSpore's error texts where MindSpore refuses.

Same form as ms_cases.py (its inputs are in scope); recorded by
``record_cases.py --cases ms_cases_mindformers compat/tests/recorded/l_mindformers_cases.json``.
"""

from __future__ import annotations

from ms_cases import inputs  # noqa: F401  (the recorder's namespace)

# value and input gradients of sum(out * dout) for a primitive on float inputs X, Y (3x4)
_GRAD = ("from mindspore import ops as P\n"
         "XA = np.array([[0.5, -1.25, 2.0, 3.0], [1.5, 1.5, -0.75, 0.25], [4.0, -2.0, 0.125, 1.0]], np.float32)\n"
         "X, X2, POS = Tensor(XA), Tensor(XA.copy()), Tensor(np.abs(XA) + 0.5)\n"
         "Y = Tensor(np.array([[1.0, -1.25, 0.5, 3.0], [2.0, 1.5, -1.0, 0.5], [4.0, 1.0, 0.25, -3.0]], np.float32))\n"
         "def vg(f, *xs):\n    out = f(*xs)\n    dout = Tensor(np.linspace(-1, 1, int(np.prod(out.shape))).reshape(out.shape).astype(np.float32))\n"
         "    pos = 0 if len(xs) == 1 else tuple(range(len(xs)))\n    g = ms.grad(lambda *a: (f(*a) * dout).sum(), pos)(*xs)\n    return out, g\n")

PRIMITIVES = {
    "gather_axis0": _GRAD + "idx = Tensor(np.array([[2, 0], [2, 2]], np.int32))\nresult = vg(lambda x: P.Gather()(x, idx, 0), X)",
    "gather_axis1": _GRAD + "idx = Tensor(np.array([3, 1, 3], np.int32))\nresult = vg(lambda x: P.Gather()(x, idx, 1), X)",
    "gatherd": _GRAD + "idx = Tensor(np.array([[0, 0], [2, 1], [3, 3]], np.int64))\nresult = vg(lambda x: P.GatherD()(x, 1, idx), X)",
    "strided_slice": _GRAD + "result = vg(lambda x: P.StridedSlice()(x, (0, 1), (3, 4), (2, 2)), X)",
    "reduce_max_ties": _GRAD + "result = vg(lambda x: P.ReduceMax(keep_dims=True)(x, 1), X)",
    "reduce_max_all": _GRAD + "result = vg(lambda x: P.ReduceMax()(x), X)",
    "log": _GRAD + "result = vg(lambda x: P.Log()(x), POS)",
    "rsqrt": _GRAD + "result = vg(lambda x: P.Rsqrt()(x), POS)",
    "silu": _GRAD + "from mindspore.ops import auto_generate as g\nresult = (vg(lambda x: g.SiLU()(x), X), hasattr(P, 'SiLU'), hasattr(P.operations, 'SiLU'))",
    "silu_inner": _GRAD + "result = vg(lambda x: P.operations._inner_ops.SiLU()(x), X)",
    "pow_scalar": _GRAD + "result = vg(lambda x: P.Pow()(x, 3.0), X)",
    "pow_tensor": _GRAD + "result = vg(lambda x, y: P.Pow()(x, y), POS, Y)",
    "maximum_ties": _GRAD + "result = vg(lambda x, y: P.Maximum()(x, y), X, Y)",
    "addcmul": _GRAD + "result = vg(lambda a, b, c: P.Addcmul()(a, b, c, Tensor(np.float32(0.5))), X, Y, X2)",
    "less_equal": _GRAD + "result = P.LessEqual()(X, Y)",
    "not_equal": _GRAD + "result = P.NotEqual()(X, Y)",
    "auto_generate_same_classes": "from mindspore.ops import auto_generate as g\nfrom mindspore.ops import operations as O\nresult = [getattr(g, n) is getattr(O, n) for n in ('Gather', 'Rsqrt', 'StridedSlice', 'Reshape', 'MatMul', 'Cast')]",
}

MINT = {
    "zeros": "from mindspore import mint\nresult = (mint.zeros((2, 3)), mint.zeros(2, dtype=ms.int32))",
    "unary": "from mindspore import mint\nx = Tensor(np.array([0.5, 1.25, 2.5], np.float32))\nresult = (mint.log(x), mint.exp(x), mint.sin(x), mint.cos(x), mint.ceil(x), mint.pow(x, 2.0))",
}

_SHARD_ERR = "try:\n    {0}\nexcept Exception as e:\n    result = (type(e).__name__, str(e))\n"

SHARD = {
    "tuple_strategy": "from mindspore import ops as P\nm = P.MatMul()\nr = m.shard(((1, 1), (1, 1)))\nresult = (r is m, m.attrs.get('in_strategy'), 'out_strategy' in m.attrs)",
    "in_and_out": "from mindspore import ops as P\nm = P.MatMul()\nm.shard(((2, 1), (1, 1)), ((2, 1),))\nresult = (m.attrs.get('in_strategy'), m.attrs.get('out_strategy'))",
    "none_returns_self": "from mindspore import ops as P\nm = P.Add()\nresult = (m.shard() is m, 'in_strategy' in m.attrs)",
    "layout": "from mindspore import ops as P\nfrom mindspore import Layout\nlay = Layout((2, 2, 2), ('dp', 'sp', 'mp'))\nm = P.MatMul()\nm.shard((lay('dp', 'sp'), lay('sp', 'None')))\nresult = str(m.attrs['in_layout'])",
    "layout_to_dict": "from mindspore.parallel.shard import Layout\nlay = Layout((2, 4), ('dp', 'mp'))\nresult = str(lay(('dp', 'mp'), 'None').to_dict())",
    "not_tuple": "from mindspore import ops as P\n" + _SHARD_ERR.format("P.Add().shard([[1, 1], [1, 1]])"),
    "float_value": "from mindspore import ops as P\n" + _SHARD_ERR.format("P.Add().shard(((1.0, 1), (1, 1)))"),
    "out_without_in": "from mindspore import ops as P\n" + _SHARD_ERR.format("P.MatMul().shard(None, ((1, 1),))"),
    "layout_bad_axis": "from mindspore import Layout\n" + _SHARD_ERR.format("Layout((2, 2), ('dp', 'mp'))('dp', 'xx')"),
    "layout_repeat_axis": "from mindspore import Layout\n" + _SHARD_ERR.format("Layout((2, 2), ('dp', 'mp'))('dp', 'dp')"),
    "layout_none_name": "from mindspore import Layout\n" + _SHARD_ERR.format("Layout((2, 2), ('dp', 'None'))"),
    "layout_length": "from mindspore import Layout\n" + _SHARD_ERR.format("Layout((2, 2), ('dp',))"),
}

CELL = {
    "set_comm_fusion": "net = nn.SequentialCell([nn.Dense(2, 3), nn.Dense(3, 1)])\nr = net.set_comm_fusion(3)\nresult = (r is net, [(p.name, p.comm_fusion) for p in net.trainable_params()])",
    "set_comm_fusion_not_recursive": "class N(nn.Cell):\n    def __init__(self):\n        super().__init__()\n        self.w = Parameter(Tensor(np.ones(2, np.float32)), name='w')\n        self.d = nn.Dense(2, 2)\nnet = N()\nnet.set_comm_fusion(2)\nnet.set_comm_fusion(5, recurse=False)\nresult = [(p.name, p.comm_fusion) for p in net.trainable_params()]",
    "set_comm_fusion_negative": _SHARD_ERR.format("nn.Dense(2, 2).set_comm_fusion(-1)"),
    "set_comm_fusion_float": _SHARD_ERR.format("nn.Dense(2, 2).set_comm_fusion(1.5)"),
    "cls_name": "result = nn.Dense(2, 2).cls_name",
    "cells_dict": "class N(nn.Cell):\n    def __init__(self):\n        super().__init__()\n        self.a = nn.Dense(2, 2)\n        self.seq = nn.SequentialCell([nn.Dense(2, 2), nn.ReLU()])\n        self.lst = nn.CellList([nn.ReLU()])\nnet = N()\nresult = (list(net._cells.keys()), list(net.seq._cells.keys()), list(net.lst._cells.keys()), type(net._cells['a']).__name__, len(net.seq))",
    "bprop_replaces_autodiff": "class Twice(nn.Cell):\n    def construct(self, x):\n        return x * x\n    def bprop(self, x, out, dout):\n        return (dout * 3.0,)\nnet = Twice()\nx = Tensor(np.array([1.0, -2.0, 0.5], np.float32))\nresult = (net(x), ms.grad(lambda x: (net(x) * Tensor(np.array([1.0, 2.0, 3.0], np.float32))).sum())(x))",
    "bprop_tuple_output_and_label": "from mindspore import ops as P\nclass LS(nn.Cell):\n    def construct(self, logits, label):\n        return P.Exp()(logits), P.OneHot()(label, 3, Tensor(1.0, ms.float32), Tensor(0.0, ms.float32))\n    def bprop(self, logits, label, out, dout):\n        return dout[0] + dout[1], P.ZerosLike()(label)\nnet = LS()\nlogits = Tensor(np.array([[0.5, -1.0, 2.0], [1.0, 0.0, -0.5]], np.float32))\nlabel = Tensor(np.array([2, 0], np.int32))\nw = Tensor(np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], np.float32))\nresult = ms.grad(lambda z: (net(z, label)[0] * w).sum())(logits)",
}

CONTEXT = {
    "defaults": "keys = ['device_num', 'global_rank', 'parallel_mode', 'full_batch', 'pipeline_stages', 'enable_parallel_optimizer', 'search_mode', 'sharding_propagation', 'pipeline_scheduler', 'pipeline_interleave', 'gradients_mean', 'dataset_strategy', 'optimizer_weight_shard_size', 'strategy_ckpt_save_file', 'dump_local_norm_path']\nresult = [ms.get_auto_parallel_context(k) for k in keys]",
    "parallel_mode_names": "from mindspore.context import ParallelMode\nresult = (ParallelMode.STAND_ALONE, ParallelMode.DATA_PARALLEL, ParallelMode.HYBRID_PARALLEL, ParallelMode.SEMI_AUTO_PARALLEL, ParallelMode.AUTO_PARALLEL, ParallelMode.MODE_LIST, ms.ParallelMode is ParallelMode)",
    "set_and_read": "from mindspore.parallel import _utils as u\nms.set_auto_parallel_context(parallel_mode='semi_auto_parallel', full_batch=True)\nr = (u._get_parallel_mode(), u._is_in_auto_parallel_mode(), u._get_full_batch(), u._get_device_num(), u._is_sharding_propagation())\nms.reset_auto_parallel_context()\nresult = (r, u._get_parallel_mode(), u._is_in_auto_parallel_mode(), u._get_full_batch())",
    "sharding_propagation": "from mindspore.parallel import _utils as u\nms.set_auto_parallel_context(parallel_mode='auto_parallel', search_mode='sharding_propagation')\nr = u._is_sharding_propagation()\nms.reset_auto_parallel_context()\nresult = r",
    "unknown_get": _SHARD_ERR.format("ms.get_auto_parallel_context('bogus')"),
    "unknown_set": _SHARD_ERR.format("ms.set_auto_parallel_context(bogus=1)"),
    "bad_mode": _SHARD_ERR.format("ms.set_auto_parallel_context(parallel_mode='bogus')"),
    "context_module": "from mindspore import context\nresult = (context.get_auto_parallel_context('parallel_mode'), context.ParallelMode.AUTO_PARALLEL)",
    "algo_parameters": "from mindspore.parallel import set_algo_parameters\nset_algo_parameters(fully_use_devices=False)\n" + _SHARD_ERR.format("set_algo_parameters(bogus=1)"),
}

CHECKPARAM = {
    "positive_int": "from mindspore import _checkparam as V\nout = []\nfor v in (3, 0, 2.0, True):\n    try:\n        out.append(V.check_positive_int(v, 'n', 'Op'))\n    except Exception as e:\n        out.append((type(e).__name__, str(e)))\nresult = out",
    "value_type": "from mindspore import _checkparam as V\nout = []\nfor v in (3, True, 'a', 1.5):\n    try:\n        out.append(V.check_value_type('x', v, [int, float], 'Op'))\n    except Exception as e:\n        out.append((type(e).__name__, str(e)))\nresult = out",
    "bool_and_range": "from mindspore import _checkparam as V\nout = []\nfor f in (lambda: V.check_bool(1, 'flag'), lambda: V.check_float_range(1.5, 0.0, 1.0, V.INC_LEFT, 'p', 'Op'), lambda: V.check_float_range(0.5, 0.0, 1.0, V.INC_BOTH, 'p'), lambda: V.check_string('c', ['a', 'b'], 'mode', 'Op'), lambda: V.check_non_negative_float(-1.0, 'eps'), lambda: V.check_int(2, 3, V.GE, 'k', 'Op')):\n    try:\n        out.append(f())\n    except Exception as e:\n        out.append((type(e).__name__, str(e)))\nresult = out",
    "args_type_check": "from mindspore._checkparam import args_type_check\n@args_type_check(a=int, b=(str, list))\ndef f(a, b=None):\n    return (a, b)\nout = [f(1), f(2, 'x')]\ntry:\n    f('1')\nexcept Exception as e:\n    out.append((type(e).__name__, str(e)))\nresult = out",
    "no_validator_class": "from mindspore import _checkparam as V\nresult = (hasattr(V, 'Validator'), hasattr(V, 'Rel'))",
}

# MindSpore 2.10's CPU build has no kernel for these; recorded last, since the failed launch
# surfaces again in MindSpore's next operation
NO_CPU_KERNEL = {
    "argmax": "from mindspore import mint\nx = Tensor(np.array([[1.0, 3.0, 3.0], [5.0, 0.0, 2.0]], np.float32))\nresult = (mint.argmax(x), mint.argmax(x, 1), mint.argmax(x, 0, True))",
    "cumsum": "from mindspore import mint\nresult = mint.cumsum(Tensor(np.array([[1, 2, 3], [4, 5, 6]], np.int32)), 1)",
}

GROUPS = {"prim": PRIMITIVES, "mint": MINT, "shard": SHARD, "cell": CELL, "context": CONTEXT,
          "checkparam": CHECKPARAM, "no_cpu_kernel": NO_CPU_KERNEL}
