# ruff: noqa: E501  (a table of case sources, one line each)
"""Cases run by real MindSpore (record_cases.py) and by the compatibility layer (tests).

Each case is Python source run with ``ms``, ``nn``, ``ops``, ``Tensor``, ``Parameter`` and
``np`` in scope, plus the fixed inputs of :func:`inputs`; it sets ``result``. The recorder
stores what MindSpore 2.10 gives (values, shape, dtype, Python type, or the exception type);
the tests run the same source on ``paddle_mindspore`` and compare.
"""

from __future__ import annotations

import numpy as np


def inputs() -> dict:
    rng = np.random.RandomState(0)
    return {
        "A": rng.standard_normal((2, 3)).astype(np.float32),
        "B": rng.standard_normal((2, 3, 4)).astype(np.float32),
        "C": rng.standard_normal((4, 5)).astype(np.float32),
        "I": rng.standard_normal((2, 3, 8, 8)).astype(np.float32),
        "S": rng.standard_normal((2, 3, 10)).astype(np.float32),
        "W3": rng.standard_normal((4, 3, 3)).astype(np.float32) * 0.3,
        "G": rng.standard_normal((5, 3)).astype(np.float32),
        "LBL": np.array([1, 0, 2, 1, 0], np.int32),
        "PRB": np.full((5, 3), 1 / 3, np.float32),
    }


TENSOR = {
    # attributes
    "shape": "result = Tensor(B).shape",
    "shape_type": "result = type(Tensor(B).shape).__name__",
    "dtype_str": "result = str(Tensor(B).dtype)",
    "dtype_eq": "result = Tensor(B).dtype == ms.float32",
    "ndim": "result = Tensor(B).ndim",
    "size": "result = Tensor(B).size",
    "len": "result = len(Tensor(B))",
    "astype": "result = Tensor(B).astype(ms.int32)",
    "astype_str": "result = Tensor(A).astype('float64')",
    "infer_float": "result = Tensor([1.0, 2.0])",
    "infer_int": "result = Tensor([1, 2])",
    "infer_bool": "result = Tensor([True, False])",
    "infer_np": "result = Tensor(np.array([1, 2], np.int32))",
    # shape methods
    "reshape_varargs": "result = Tensor(B).reshape(4, 6)",
    "reshape_tuple": "result = Tensor(B).reshape((4, -1))",
    "reshape_list": "result = Tensor(B).reshape([6, 4])",
    "view_varargs": "result = Tensor(B).view(2, 12)",
    "view_tuple": "result = Tensor(B).view((24,))",
    "view_minus1": "result = Tensor(B).view(-1)",
    "transpose_perm": "result = Tensor(B).transpose(1, 0, 2)",
    "transpose_tuple": "result = Tensor(B).transpose((2, 0, 1))",
    "transpose_swap": "result = Tensor(B).transpose(0, 2)",
    "transpose_2d": "result = Tensor(A).transpose(1, 0)",
    "permute_varargs": "result = Tensor(B).permute(2, 0, 1)",
    "permute_tuple": "result = Tensor(B).permute((1, 2, 0))",
    "swapaxes": "result = Tensor(B).swapaxes(-2, -1)",
    "expand_dims": "result = Tensor(B).expand_dims(1)",
    "expand_dims_neg": "result = Tensor(B).expand_dims(-1)",
    "unsqueeze": "result = Tensor(B).unsqueeze(0)",
    "squeeze_all": "result = Tensor(B[:1, :, :1]).squeeze()",
    "squeeze_axis": "result = Tensor(B[:1, :, :1]).squeeze(0)",
    "squeeze_tuple": "result = Tensor(B[:1, :, :1]).squeeze((0, 2))",
    "squeeze_noop": "result = Tensor(B).squeeze(1)",
    "flatten": "result = Tensor(B).flatten()",
    "flatten_start": "result = Tensor(B).flatten(1)",
    "flatten_kw": "result = Tensor(B).flatten(start_dim=0, end_dim=1)",
    "T": "result = Tensor(A).T",
    # reductions
    "mean_all": "result = Tensor(B).mean()",
    "mean_axis": "result = Tensor(B).mean(1)",
    "mean_pos_keep": "result = Tensor(B).mean(1, True)",
    "mean_keep_dims": "result = Tensor(B).mean(axis=2, keep_dims=True)",
    "mean_tuple": "result = Tensor(B).mean((0, 2))",
    "mean_dim_kw": "result = Tensor(B).mean(dim=1, keepdim=True)",
    "sum_all": "result = Tensor(B).sum()",
    "sum_axis": "result = Tensor(B).sum(2)",
    "sum_pos_keep": "result = Tensor(B).sum(1, True)",
    "sum_keepdims": "result = Tensor(B).sum(axis=1, keepdims=True)",
    "sum_dtype": "result = Tensor(B).sum(dtype=ms.float64)",
    "max_all": "result = Tensor(B).max()",
    "max_axis_kw": "result = Tensor(B).max(axis=1)",
    "max_axis_keepdims": "result = Tensor(B).max(axis=1, keepdims=True)",
    "max_dim_pos": "result = Tensor(B).max(1)",
    "max_dim_keep": "result = Tensor(B).max(2, keepdim=True)",
    "max_return_indices": "result = Tensor(B).max(axis=0, return_indices=True)",
    "min_all": "result = Tensor(B).min()",
    "min_all_keepdims": "result = (Tensor(B).min(keepdims=True), Tensor(B).max(axis=None, keepdims=True))",
    "mean_sum_all_keepdims": "result = (Tensor(B).mean(keep_dims=True), Tensor(B).sum(keepdims=True), Tensor(B).var(keepdims=True))",
    "reductions_negative_axis": "result = (Tensor(B).mean(-1), Tensor(B).sum((-2, -1)), Tensor(B).max(axis=-2), Tensor(B).std(-1))",
    "std_var_ddof2": "result = (Tensor(B).std(axis=(0, 2), ddof=2), Tensor(B).var(1, 2))",
    "min_axis_kw": "result = Tensor(B).min(axis=2)",
    "min_dim_pos": "result = Tensor(B).min(0)",
    "std_all": "result = Tensor(B).std()",
    "std_axis": "result = Tensor(B).std(1)",
    "std_ddof": "result = Tensor(B).std(axis=2, ddof=1)",
    "std_pos": "result = Tensor(B).std(0, 1, True)",
    "std_keepdims": "result = Tensor(B).std(keepdims=True)",
    "var_all": "result = Tensor(B).var()",
    "var_axis_keep": "result = Tensor(B).var(axis=1, keepdims=True)",
    "var_ddof": "result = Tensor(B).var(ddof=1)",
    "argmax": "result = Tensor(B).argmax()",
    "argmax_axis": "result = Tensor(B).argmax(2)",
    "cumsum": "result = Tensor(B).cumsum(1)",
    "abs_exp": "result = Tensor(A).abs().exp()",
    "clip": "result = Tensor(A).clip(-0.5, 0.5)",
    # more methods MindSpore code uses
    "split_size": "result = Tensor(S).split(4, 2)",
    "split_sections_axis": "result = Tensor(S).split([2, 3, 5], axis=-1)",
    "split_dim": "result = Tensor(B).split(2, dim=2)",
    "chunk": "result = (Tensor(S).chunk(3, 2), Tensor(B).chunk(2, axis=1))",
    "softmax": "result = (Tensor(B).softmax(-1), Tensor(B).softmax(axis=1))",
    "where": "a = Tensor(A)\nresult = a.where(a > 0, Tensor(A * 0 - 1))",
    "expand_as": "result = Tensor(A[:1]).expand_as(Tensor(A))",
    "tril_triu": "result = (Tensor(C).tril(), Tensor(C).triu(1), Tensor(C).tril(-1))",
    "masked_select": "a = Tensor(A)\nresult = a.masked_select(a > 0)",
    "flip": "result = (Tensor(B).flip((0, 2)), Tensor(B).flip([1]))",
    "t_mm": "result = (Tensor(C).t(), Tensor(A).mm(Tensor(C[:3])), Tensor(A[0]).outer(Tensor(A[1])))",
    "narrow_unbind": "result = (Tensor(B).narrow(2, 1, 2), Tensor(B).unbind(1))",
    # indexing
    "getitem_int": "result = Tensor(B)[1]",
    "getitem_slice": "result = Tensor(B)[:, 1:3, ::2]",
    "getitem_neg": "result = Tensor(B)[-1, :, -1]",
    "getitem_none": "result = Tensor(A)[None, :, None]",
    "getitem_ellipsis": "result = Tensor(B)[..., 0]",
    "getitem_bool": "t = Tensor(A)\nresult = t[t > 0]",
    "getitem_tensor": "result = Tensor(B)[Tensor(np.array([1, 0, 1], np.int32))]",
    "getitem_list": "result = Tensor(B)[[1, 0]]",
    "setitem_int": "t = Tensor(A)\nt[0] = 5.0\nresult = t",
    "setitem_slice": "t = Tensor(B)\nt[:, 1:, 2] = -1.0\nresult = t",
    "setitem_tensor": "t = Tensor(A)\nt[1] = Tensor(np.ones(3, np.float32))\nresult = t",
    "setitem_bool": "t = Tensor(A)\nt[t < 0] = 0.0\nresult = t",
    # conversion
    "copy_independent": "t = Tensor(A)\nc = t.copy()\nc[0, 0] = 7.0\nresult = (t, c)",
    "copy_grad": "def f(x):\n    return (x.copy() * x).sum()\nresult = ms.grad(f)(Tensor(A))",
    "item": "result = Tensor(A)[1, 2].item()",
    "item_type": "result = type(Tensor(np.array([3], np.int32)).item()).__name__",
    "tolist": "result = Tensor(A).tolist()",
    "tolist_int": "result = Tensor(np.array([[1, 2]], np.int32)).tolist()",
    "asnumpy": "a = Tensor(A).asnumpy()\nresult = (type(a).__name__, str(a.dtype), a.tolist())",
    "float_int": "result = (float(Tensor(A)[0, 0]), int(Tensor(np.array(3, np.int32))))",
    "str": "result = str(Tensor(A))",
    "str_scalar": "result = str(Tensor(A)[0, 1])",
    "repr_float": "result = repr(Tensor(A))",
    "repr_int": "result = repr(Tensor(np.array([[1, 2], [3, 4]], np.int32)))",
    "repr_bool": "result = repr(Tensor(np.array([True, False])))",
    "repr_scalar": "result = repr(Tensor(np.float32(2.5)))",
    "repr_1d": "result = repr(Tensor(np.array([0.5, -1.0, 3.0], np.float32)))",
    "format": "result = f'{Tensor(A)[0, 0].asnumpy():.4f}'",
    "format_tensor": "result = (f'{Tensor(A)}', f'{Tensor(A)[0, 1]}', f'{Tensor(np.array([1, 2], np.int32))}')",
    # arithmetic and comparisons
    "arith": "a, b = Tensor(A), Tensor(A[::-1].copy())\nresult = (a + b, a - 2, 3 * a, a / b, -a, a ** 2, a @ Tensor(C[:3]))",
    "compare": "a = Tensor(A)\nresult = (a > 0, a == a, a != 0.5)",
    # parameters
    "param_name": "p = Parameter(Tensor(A), name='w')\nresult = (p.name, p.requires_grad)",
    "param_default_name": "p = Parameter(Tensor(A))\nresult = p.name.startswith('Parameter')",
    "param_requires_grad_set": "p = Parameter(Tensor(A), name='w')\np.requires_grad = False\nresult = p.requires_grad",
    "param_no_grad": "p = Parameter(Tensor(A), name='w', requires_grad=False)\nresult = p.requires_grad",
    "param_clone": "p = Parameter(Tensor(A), name='w', requires_grad=False)\nc = p.clone()\nresult = (c.name, c.requires_grad, c is p, type(c).__name__, c)",
    "param_set_data": "p = Parameter(Tensor(A), name='w')\nr = p.set_data(Tensor(A * 2))\nresult = (r is p, p)",
    "param_set_data_shape": "p = Parameter(Tensor(A), name='w')\np.set_data(Tensor(C))\nresult = p",
    "param_set_data_dtype": "p = Parameter(Tensor(A), name='w')\np.set_data(Tensor(A.astype(np.float64)))\nresult = p",
    "param_init_data": "p = Parameter(Tensor(A), name='w')\nresult = (p.init_data() is p, p)",
    "param_repr": "result = repr(Parameter(Tensor(A), name='w'))",
    "param_is_tensor": "result = isinstance(Parameter(Tensor(A), name='w'), Tensor)",
}

_NET = """
class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(3, 4, weight_init=Tensor(C[:, :3].copy()), bias_init=Tensor(C[0, :4].copy()))
        self.norm = nn.LayerNorm((4,))
        self.head = nn.Dense(4, 2, weight_init=Tensor(C[:2, :4].copy()), bias_init='zeros')
    def construct(self, x):
        return self.head(self.norm(self.fc(x)))
net = Net()
params = net.trainable_params()
def loss_fn(x):
    return (net(x) ** 2).mean()
grad_fn = ms.value_and_grad(loss_fn, None, params)
"""

_NESTED = """
class In(nn.Cell):
    def __init__(self):
        super().__init__()
        self.a = Parameter(Tensor(np.ones(2, np.float32)), name="explicit")
        self.b = Parameter(Tensor(np.ones(2, np.float32)))
        self.d = nn.Dense(2, 2)
    def construct(self, x):
        return x
class Out(nn.Cell):
    def __init__(self):
        super().__init__()
        self.inner = In()
        self.lst = nn.CellList([In()])
    def construct(self, x):
        return x
class Out2(nn.Cell):
    def __init__(self):
        super().__init__()
        self.o = Out()
    def construct(self, x):
        return x
"""


def _optimizer_case(make: str) -> str:
    return _NET + f"opt = {make}\nlosses = []\n" + (
        "for _ in range(3):\n    loss, grads = grad_fn(Tensor(G))\n    opt(grads)\n    losses.append(loss)\n"
        "result = (losses, [(p.name, p) for p in params])")


NN = {
    "dense": "d = nn.Dense(3, 4, weight_init=Tensor(C[:, :3].copy()), bias_init=Tensor(C[0, :4].copy()))\nresult = (d(Tensor(B[..., :3].copy())), d(Tensor(A)), d.weight.shape)",
    "layernorm": "ln = nn.LayerNorm((4,))\nresult = ln(Tensor(B))",
    "layernorm_eps": "ln = nn.LayerNorm((4,), epsilon=1e-5)\nresult = ln(Tensor(B))",
    "layernorm_2axes": "ln = nn.LayerNorm((3, 4), begin_norm_axis=1, begin_params_axis=1)\nresult = (ln(Tensor(B)), ln.gamma.shape)",
    "layernorm_params": "ln = nn.LayerNorm((4,), gamma_init=Tensor(C[0, :4]), beta_init=Tensor(C[1, :4]))\nresult = ln(Tensor(B))",
    "layernorm_grad": "ln = nn.LayerNorm((4,), gamma_init=Tensor(C[0, :4]), beta_init=Tensor(C[1, :4]))\n"
                      "def f(x):\n    return (ln(x) * Tensor(B)).sum()\nresult = ms.value_and_grad(f, 0, ln.trainable_params())(Tensor(B * 2))",
    "gelu_default": "result = nn.GELU()(Tensor(B))",
    "gelu_exact": "result = nn.GELU(approximate=False)(Tensor(B))",
    "silu": "result = nn.SiLU()(Tensor(B))",
    "softmax": "result = nn.Softmax()(Tensor(B))",
    "softmax_axis": "result = nn.Softmax(axis=1)(Tensor(B))",
    "dropout_p0_train": "d = nn.Dropout(p=0.0)\nd.set_train()\nresult = d(Tensor(B))",
    "dropout_eval": "d = nn.Dropout(p=0.5)\nresult = d(Tensor(B))",
    "dropout_keep_prob": "d = nn.Dropout(keep_prob=1.0)\nd.set_train()\nresult = d(Tensor(B))",
    "dropout_train_stats": "d = nn.Dropout(p=0.25)\nd.set_train()\ny = d(Tensor(np.ones((400, 400), np.float32))).asnumpy()\n"
                           "result = (sorted(set(np.round(y.ravel(), 5).tolist())), bool(abs((y == 0).mean() - 0.25) < 0.01))",
    "embedding": "e = nn.Embedding(5, 3, embedding_table=Tensor(G))\nresult = (e(Tensor(np.array([[0, 4], [2, 2]], np.int32))), e.embedding_table.shape)",
    "embedding_grad": "e = nn.Embedding(5, 3, embedding_table=Tensor(G))\ndef f(i):\n    return (e(i) ** 2).sum()\n"
                      "result = ms.grad(f, None, e.trainable_params())(Tensor(np.array([[0, 4], [2, 2]], np.int32)))",
    "conv1d": "c = nn.Conv1d(3, 4, 3, pad_mode='valid', has_bias=True, weight_init=Tensor(W3), bias_init=Tensor(C[0, :4]))\nresult = c(Tensor(S))",
    "conv1d_same": "c = nn.Conv1d(3, 4, 3, weight_init=Tensor(W3))\nresult = c(Tensor(S))",
    "conv1d_pad_stride": "c = nn.Conv1d(3, 4, 3, stride=2, pad_mode='pad', padding=1, weight_init=Tensor(W3))\nresult = c(Tensor(S))",
    "conv2d": "c = nn.Conv2d(3, 2, 3, pad_mode='pad', padding=1, has_bias=True, weight_init='ones', bias_init='zeros')\nresult = c(Tensor(I))",
    "batchnorm1d_train": "bn = nn.BatchNorm1d(3)\nbn.set_train()\ny = bn(Tensor(G))\nresult = (y, bn.moving_mean, bn.moving_variance)",
    "batchnorm1d_eval": "bn = nn.BatchNorm1d(3, moving_mean_init=Tensor(G[0]), moving_var_init=Tensor(np.abs(G[1]) + 0.5))\nresult = bn(Tensor(G))",
    "batchnorm2d_train": "bn = nn.BatchNorm2d(3, momentum=0.8)\nbn.set_train()\ny = bn(Tensor(I))\nresult = (y, bn.moving_mean, bn.moving_variance)",
    "maxpool2d": "result = nn.MaxPool2d(kernel_size=2, stride=2)(Tensor(I))",
    "avgpool2d": "result = nn.AvgPool2d(kernel_size=3, stride=2, pad_mode='same')(Tensor(I))",
    "flatten_cell": "result = nn.Flatten()(Tensor(I))",
    "sequential": "s = nn.SequentialCell([nn.Dense(3, 5, weight_init='ones', bias_init='zeros'), nn.ReLU(), nn.Dense(5, 2, weight_init='ones', bias_init='zeros')])\n"
                  "result = (s(Tensor(A)), len(s), [n for n, _ in s.parameters_and_names()])",
    "celldict": "d = nn.CellDict({'a': nn.Dense(3, 2, weight_init='ones', bias_init='zeros'), 'b': nn.ReLU()})\n"
                "result = (sorted(d.keys()), len(d), 'a' in d, d['a'](Tensor(A)), [n for n, _ in d.parameters_and_names()])",
    "celllist": "l = nn.CellList([nn.Dense(3, 3), nn.ReLU()])\nl.append(nn.Dense(3, 1))\nresult = (len(l), [n for n, _ in l.parameters_and_names()])",
    "mseloss": "result = (nn.MSELoss()(Tensor(A), Tensor(A[::-1].copy())), nn.MSELoss(reduction='none')(Tensor(A), Tensor(A * 0)))",
    "l1loss": "result = (nn.L1Loss()(Tensor(A), Tensor(A[::-1].copy())), nn.L1Loss(reduction='sum')(Tensor(A), Tensor(A * 0)))",
    "ce_index": "result = nn.CrossEntropyLoss()(Tensor(G), Tensor(LBL))",
    "ce_index_none": "result = nn.CrossEntropyLoss(reduction='none')(Tensor(G), Tensor(LBL))",
    "ce_ignore": "result = nn.CrossEntropyLoss(ignore_index=0)(Tensor(G), Tensor(LBL))",
    "ce_smoothing": "result = nn.CrossEntropyLoss(label_smoothing=0.1)(Tensor(G), Tensor(LBL))",
    "ce_weight": "result = nn.CrossEntropyLoss(weight=Tensor(np.array([0.2, 1.0, 3.0], np.float32)))(Tensor(G), Tensor(LBL))",
    "ce_probs": "result = nn.CrossEntropyLoss()(Tensor(G), Tensor(PRB))",
    "ce_grad": "def f(z):\n    return nn.CrossEntropyLoss()(z, Tensor(LBL))\nresult = ms.grad(f)(Tensor(G))",
    "softmax_ce_sparse": "result = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction='mean')(Tensor(G), Tensor(LBL))",
    "softmax_ce_dense": "result = nn.SoftmaxCrossEntropyWithLogits()(Tensor(G), Tensor(PRB))",
    "param_names_nested": _NESTED + "result = ([p.name for p in In().get_parameters()], [p.name for p in Out().get_parameters()], "
                                    "[n for n, _ in Out().parameters_and_names()], [p.name for p in Out2().get_parameters()][:2])",
    "param_names_shared": "class Sh(nn.Cell):\n    def __init__(self, d):\n        super().__init__()\n        self.x = d\n        self.y = d\n"
                          "    def construct(self, x):\n        return x\n"
                          "s = Sh(nn.Dense(2, 2))\nresult = ([p.name for p in s.get_parameters()], [n for n, _ in s.parameters_and_names()])",
    "param_names_auto_prefix_false": _NET + "wl = nn.WithLossCell(net, nn.MSELoss())\nresult = ([p.name for p in wl.trainable_params()], [n for n, _ in wl.parameters_and_names()])",
    "param_names": _NET + "result = [(n, p.name) for n, p in net.parameters_and_names()]",
    "param_lists": _NET + "result = ([p.name for p in net.trainable_params()], [p.name for p in net.get_parameters()], "
                          "[n for n, _ in net.cells_and_names()])",
    "set_train": _NET + "r = net.set_train()\nresult = (r is net, net.training, net.fc.training, net.set_train(False).training)",
    "with_loss_cell": _NET + "wl = nn.WithLossCell(net, nn.MSELoss())\nresult = wl(Tensor(G), Tensor(np.zeros((5, 2), np.float32)))",
    "train_one_step": _NET + "opt = nn.Momentum(net.trainable_params(), 0.1, 0.9)\n"
                             "step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), opt)\nstep.set_train()\n"
                             "losses = [step(Tensor(G), Tensor(np.zeros((5, 2), np.float32))) for _ in range(3)]\n"
                             "result = (losses, [(p.name, p) for p in params])",
    "train_one_step_sens": _NET + "opt = nn.SGD(net.trainable_params(), 0.1)\n"
                                  "step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), opt, sens=2.0, return_grad=True)\n"
                                  "step.set_train()\nloss, grads = step(Tensor(G), Tensor(np.zeros((5, 2), np.float32)))\n"
                                  "result = (loss, type(grads).__name__, [(k, grads[k]) for k in grads], [(p.name, p) for p in params])",
    "opt_adam_loss_scale": _optimizer_case("nn.Adam(params, learning_rate=0.01, weight_decay=0.1, loss_scale=4.0)"),
    "opt_momentum_loss_scale": _optimizer_case("nn.Momentum(params, 0.1, 0.9, weight_decay=0.05, loss_scale=8.0)"),
    "opt_sgd": _optimizer_case("nn.SGD(params, learning_rate=0.1)"),
    "opt_sgd_momentum_wd": _optimizer_case("nn.SGD(params, learning_rate=0.1, momentum=0.9, weight_decay=0.01)"),
    "opt_momentum": _optimizer_case("nn.Momentum(params, learning_rate=0.1, momentum=0.9)"),
    "opt_momentum_wd": _optimizer_case("nn.Momentum(params, learning_rate=0.1, momentum=0.9, weight_decay=0.05)"),
    "opt_momentum_nesterov": _optimizer_case("nn.Momentum(params, 0.1, 0.9, use_nesterov=True)"),
    "opt_adam": _optimizer_case("nn.Adam(params, learning_rate=0.01)"),
    "opt_adam_wd": _optimizer_case("nn.Adam(params, learning_rate=0.01, weight_decay=0.1)"),
    "opt_adamw": _optimizer_case("nn.AdamWeightDecay(params, learning_rate=0.01)"),
    "opt_adamw_wd": _optimizer_case("nn.AdamWeightDecay(params, learning_rate=0.01, weight_decay=0.1)"),
}

OPS = {
    "matmul": "result = ops.matmul(Tensor(B), Tensor(C))",
    "matmul_batched": "result = ops.matmul(Tensor(B), Tensor(B.transpose(0, 2, 1).copy()))",
    "bmm": "result = ops.bmm(Tensor(B), Tensor(B.transpose(0, 2, 1).copy()))",
    "softmax": "result = ops.softmax(Tensor(B), axis=1)",
    "gelu": "result = (ops.gelu(Tensor(B)), ops.gelu(Tensor(B), approximate='tanh'))",
    "silu": "result = ops.silu(Tensor(B))",
    "concat": "result = (ops.concat((Tensor(A), Tensor(A)), axis=1), ops.cat([Tensor(A), Tensor(A)]))",
    "stack": "result = (ops.stack([Tensor(A), Tensor(A * 2)]), ops.stack((Tensor(A), Tensor(A)), axis=-1))",
    "split_size": "result = ops.split(Tensor(S), 4, axis=2)",
    "split_sections": "result = ops.split(Tensor(S), [2, 3, 5], axis=-1)",
    "split_default": "result = ops.split(Tensor(B), 1)",
    "reshape": "result = ops.reshape(Tensor(B), (4, -1))",
    "transpose": "result = ops.transpose(Tensor(B), (2, 0, 1))",
    "permute": "result = ops.permute(Tensor(B), (1, 2, 0))",
    "ones_zeros": "result = (ops.ones((2, 3)), ops.zeros(4), ops.ones((2,), ms.int32), ops.zeros((1, 2), dtype=ms.float16))",
    "like": "result = (ops.ones_like(Tensor(A)), ops.zeros_like(Tensor(A), dtype=ms.int32))",
    "arange": "result = (ops.arange(5), ops.arange(1, 4, dtype=ms.int32), ops.arange(0.0, 1.0, 0.25), ops.arange(0, 1, 0.5))",
    "where": "a = Tensor(A)\nresult = ops.where(a > 0, a, Tensor(A * 0 - 1))",
    "where_scalar": "a = Tensor(A)\nresult = ops.where(a > 0, a, 0.0)",
    "masked_fill": "a = Tensor(A)\nresult = ops.masked_fill(a, a < 0, -9.0)",
    "masked_fill_inf_softmax": "a = Tensor(A)\nresult = ops.softmax(ops.masked_fill(a, Tensor(np.tril(np.ones((2, 3))) == 0), float('-inf')), axis=-1)",
    "cast": "result = (ops.cast(Tensor(A), ms.int32), ops.cast(Tensor(A), ms.float64))",
    "mean": "result = (ops.mean(Tensor(B)), ops.mean(Tensor(B), 1), ops.mean(Tensor(B), (0, 2), True), ops.mean(Tensor(B), axis=2, keep_dims=True))",
    "sum": "result = (ops.sum(Tensor(B)), ops.sum(Tensor(B), 1), ops.sum(Tensor(B), dim=2, keepdim=True), ops.sum(Tensor(B), 1, dtype=ms.float64))",
    "max": "result = (ops.max(Tensor(B)), ops.max(Tensor(B), 1), ops.max(Tensor(B), axis=2, keepdims=True))",
    "min": "result = (ops.min(Tensor(B)), ops.min(Tensor(B), 0))",
    "amax": "result = (ops.amax(Tensor(B)), ops.amax(Tensor(B), 1), ops.amax(Tensor(B), (0, 1), True))",
    "prod": "result = (ops.prod(Tensor(A)), ops.prod(Tensor(A), 1))",
    "std_var": "result = (ops.std(Tensor(B)), ops.std(Tensor(B), 1, 1), ops.var(Tensor(B), axis=2, keepdims=True))",
    "argmax": "result = (ops.argmax(Tensor(B)), ops.argmax(Tensor(B), 2), ops.argmax(Tensor(B), dim=1, keepdim=True))",
    "unary": "a = Tensor(np.abs(A) + 0.1)\nresult = (ops.sqrt(a), ops.exp(a), ops.log(a), ops.pow(a, 2.0), ops.pow(a, Tensor(A)))",
    "dropout": "result = (ops.dropout(Tensor(B), p=0.0), ops.dropout(Tensor(B), p=0.5, training=False))",
    "dropout_stats": "y = ops.dropout(Tensor(np.ones((400, 400), np.float32)), p=0.2).asnumpy()\n"
                     "result = (sorted(set(np.round(y.ravel(), 5).tolist())), bool(abs((y == 0).mean() - 0.2) < 0.01))",
    "tile": "result = (ops.tile(Tensor(A), (2, 1)), ops.tile(Tensor(A), (2, 1, 2)))",
    "broadcast_to": "result = (ops.broadcast_to(Tensor(A[:1]), (4, 3)), ops.broadcast_to(Tensor(A[:1]), (2, -1)))",
    "cumsum": "result = (ops.cumsum(Tensor(B), 1), ops.cumsum(Tensor(B), axis=-1, dtype=ms.float64))",
    "expand_dims_squeeze": "result = (ops.expand_dims(Tensor(A), 0), ops.squeeze(Tensor(B[:1])), ops.squeeze(Tensor(B[:1]), 0))",
    "relu_sigmoid_tanh": "result = (ops.relu(Tensor(A)), ops.sigmoid(Tensor(A)), ops.tanh(Tensor(A)))",
    "stop_gradient": "def f(x):\n    return (x * ops.stop_gradient(x)).sum()\nresult = ms.grad(f)(Tensor(A))",
}

# issue 17: what the mindcv zoo uses (layers, ops, mindspore.numpy, schedules, grouped optimizers, promotion)
ZOO = {
    "conv3d": "c = nn.Conv3d(3, 2, 2, weight_init='ones')\nresult = c(Tensor(I.reshape(2, 3, 2, 4, 8)))",
    "conv3d_pad": "c = nn.Conv3d(3, 2, (1, 3, 3), pad_mode='pad', padding=(0, 0, 1, 1, 2, 2), weight_init='ones', has_bias=True, bias_init='ones')\nresult = c(Tensor(I.reshape(2, 3, 2, 4, 8)))",
    "conv2d_transpose_same": "c = nn.Conv2dTranspose(3, 2, 3, stride=2, weight_init='ones')\nresult = c(Tensor(I))",
    "conv2d_transpose_valid": "c = nn.Conv2dTranspose(3, 2, 3, stride=2, pad_mode='valid', weight_init='ones')\nresult = c(Tensor(I))",
    "conv2d_transpose_pad": "c = nn.Conv2dTranspose(3, 2, 3, stride=1, pad_mode='pad', padding=1, weight_init='ones')\nresult = c(Tensor(I))",
    "groupnorm": "g = nn.GroupNorm(3, 3, gamma_init=Tensor(C[0, :3]), beta_init=Tensor(C[1, :3]))\nresult = (g(Tensor(I)), [p.name for p in g.get_parameters()])",
    "groupnorm_rounding": "x = Tensor((np.random.RandomState(1).standard_normal((2, 32, 2, 2)) * 3 + 0.5).astype(np.float32))\ng = nn.GroupNorm(4, 32, gamma_init=Tensor(np.linspace(0.5, 1.5, 32).astype(np.float32)), beta_init=Tensor(np.linspace(-0.1, 0.1, 32).astype(np.float32)))\nresult = (g(x), ms.grad(lambda t: (g(t) * Tensor(B.reshape(-1)[:16].reshape(1, 1, 4, 4)[:, :, :2, :2])).sum())(x))",
    "batchnorm3d": "b = nn.BatchNorm3d(3)\nb.set_train()\nresult = (b(Tensor(I.reshape(2, 3, 2, 4, 8))), [p.name for p in b.get_parameters()])",
    "activations": "x = Tensor(B * 4)\nresult = (nn.HSigmoid()(x), nn.HSwish()(x), nn.ReLU6()(x), nn.Sigmoid()(x), nn.LogSoftmax()(x), nn.Identity()(x))",
    "onehot_cell": "result = nn.OneHot(depth=4)(Tensor(np.array([0, 3, 1], np.int32)))",
    "pad_constant": "result = nn.Pad(((0, 0), (0, 0), (1, 2), (2, 1)))(Tensor(I))",
    "pad_reflect": "result = nn.Pad(((0, 0), (0, 0), (1, 1), (2, 2)), mode='REFLECT')(Tensor(I))",
    "constantpad2d": "result = nn.ConstantPad2d((1, 0, 2, 1), 0.5)(Tensor(I))",
    "adaptive_avgpool": "result = (nn.AdaptiveAvgPool2d(3)(Tensor(I)), nn.AdaptiveAvgPool2d((1, None))(Tensor(I)))",
    "celllist_append_names": "class Block(nn.Cell):\n    def __init__(self):\n        super().__init__()\n        self.blocks = nn.CellList([nn.Dense(2, 2), nn.Dense(2, 2)])\n    def construct(self, x):\n        return x\nclass Net(nn.Cell):\n    def __init__(self):\n        super().__init__()\n        self.layers = nn.CellList()\n        for _ in range(3):\n            self.layers.append(Block())\n        self.seq = nn.SequentialCell()\n        self.seq.append(nn.Dense(2, 2))\n        self.seq.append(nn.Dense(2, 2))\n    def construct(self, x):\n        return x\nresult = [p.name for p in Net().get_parameters()]",
    "param_setitem": "d = nn.Dense(3, 2, weight_init=Tensor(C[:2, :3].copy()), has_bias=False)\nw = d.weight.data\nw[0, 1] = -1.0\nw[1] = 2.0\nresult = (d.weight, d(Tensor(A)))",
    "param_assign_tensor": "d = nn.Dense(3, 2, weight_init=Tensor(C[:2, :3].copy()), has_bias=False)\nw = d.weight\nd.weight = Tensor(C[2:4, :3].copy())\nresult = (d.weight is w, d.weight.name, d.weight, d(Tensor(A)))",
    "parameter_tuple_attr": "class Net(nn.Cell):\n    def __init__(self):\n        super().__init__()\n        self.pos = ms.ParameterTuple([Parameter(Tensor(A), name='pos.' + str(i)) for i in range(2)])\n        self.fc = nn.Dense(3, 2)\n    def construct(self, x):\n        return x\nresult = [(p.name, p.shape) for p in Net().trainable_params()]",
    "dense_repr": "result = repr(nn.Dense(784, 512))",
    "cell_repr": "class Net(nn.Cell):\n    def __init__(self):\n        super().__init__()\n        self.dense = nn.Dense(784, 512)\n        self.seq = nn.SequentialCell([nn.ReLU(), nn.Dropout(p=0.1), nn.SequentialCell([nn.Identity()])])\n    def construct(self, x):\n        return x\nresult = (repr(Net()), str(nn.ReLU()))",
    "lr_cosine": "result = nn.cosine_decay_lr(0.01, 0.1, 12, 2, 4)",
    "lr_warmup": "result = nn.warmup_lr(0.1, 10, 2, 3)",
    "lr_piecewise": "result = nn.piecewise_constant_lr([2, 5, 6], [0.1, 0.05, 0.01])",
    "lr_exponential": "result = (nn.exponential_decay_lr(0.1, 0.9, 6, 2, 1), nn.exponential_decay_lr(0.1, 0.9, 6, 2, 2, True))",
    "lr_natural_inverse": "result = (nn.natural_exp_decay_lr(0.1, 0.9, 6, 2, 2), nn.inverse_decay_lr(0.1, 0.5, 6, 2, 2))",
    "lr_polynomial": "result = (nn.polynomial_decay_lr(0.1, 0.01, 6, 1, 4, 0.5), nn.polynomial_decay_lr(0.1, 0.01, 6, 1, 2, 2.0, True))",
    "opt_grouped": _optimizer_case("nn.Momentum([{'params': [params[0]], 'weight_decay': 0.1, 'lr': 0.05}, {'params': list(params[1:])}, {'order_params': params}], 0.1, 0.9, weight_decay=0.01)"),
    "opt_lr_list": _optimizer_case("nn.Momentum(params, [0.1, 0.05, 0.02], 0.9)"),
    "opt_lr_tensor": _optimizer_case("nn.SGD(params, Tensor(np.array([0.1, 0.05, 0.02], np.float32)))"),
    "opt_lr_schedule": _optimizer_case("nn.Adam(params, nn.CosineDecayLR(0.01, 0.1, 2))"),
    "opt_lr_warmup_schedule": _optimizer_case("nn.Momentum(params, nn.WarmUpLR(0.1, 2), 0.9)"),
    "promote_eq": "result = Tensor(np.array([1, 2, 3])).argmax(0) == Tensor(np.array(2, np.int32))",
    "promote_cmp": "a = Tensor(np.array([1, 2, 3], np.int64))\nb = Tensor(np.array([1, 5, 0], np.int32))\nf = Tensor(np.array([0.5, 2.0, 9.0], np.float32))\nresult = (a == b, a < b, a + b, b * f, b >= f, a - f, Tensor([True, False, True]) + b)",
    "ops_layernorm": "result = (ops.LayerNorm(1, 1)(Tensor(B), Tensor(C[:3, :4].copy()), Tensor(C[1:4, :4].copy())), ops.LayerNorm(-1, -1, 1e-5)(Tensor(B), Tensor(C[0, :4].copy()), Tensor(C[1, :4].copy())))",
    "ops_conv2d_transpose": "w = Tensor(np.abs(W3[:, :1, :, None] * W3[:, :1, None, :]).reshape(4, 1, 3, 3))\nd = Tensor(I[:, :2, :4, :4].reshape(2, 8, 2, 2).transpose(0, 1, 2, 3).copy().reshape(2, 8, 2, 2)[:, :4])\nresult = ops.Conv2DTranspose(4, 3, pad_mode='pad', pad=(1, 1, 1, 1), stride=2, group=2)(d, w, (2, 2, 4, 4))",
    "ops_conv2d_transpose_types": "w = Tensor(np.ones((4, 1, 3, 3), np.float16))\nresult = ops.Conv2DTranspose(4, 3, pad_mode='pad', pad=(1, 1, 1, 1), stride=2, group=2)(Tensor(I[:, :, :2, :2].copy().reshape(2, 3, 2, 2)[:, :2].repeat(2, 1)), w, (2, 2, 4, 4))",
    "ops_sort": "result = ops.Sort(axis=1, descending=True)(Tensor(A))",
    "ops_unstack": "result = (ops.Unstack(axis=1)(Tensor(A)), ops.unstack(Tensor(B), 2))",
    "ops_gather_elements": "result = ops.gather_elements(Tensor(A), 1, Tensor(np.array([[0, 2], [1, 1]], np.int32)))",
    "ops_interpolate": "x = Tensor(I)\nresult = (ops.interpolate(x, size=(5, 11), mode='bilinear', align_corners=False), ops.interpolate(x, size=(5, 11), mode='bilinear', align_corners=True), ops.interpolate(x, size=(3, 3), mode='nearest'))",
    "ops_resize": "x = Tensor(I)\nresult = (ops.ResizeBilinearV2()(x, (5, 11)), ops.ResizeBilinearV2(half_pixel_centers=True)(x, (5, 11)), ops.ResizeBilinearV2(align_corners=True)(x, (5, 11)), ops.ResizeNearestNeighbor((5, 11))(x))",
    "ops_pad": "x = Tensor(I)\nresult = (ops.pad(x, (1, 2)), ops.pad(x, (1, 1, 2, 0), value=3.0), ops.pad(x, (-1, 2, 0, -2)), ops.pad(x, (2, 1, 1, 2), mode='reflect'), ops.Pad(((0, 0), (1, 0), (0, 1), (2, 2)))(x))",
    "ops_cross_entropy": "x = Tensor(G)\ny = Tensor(LBL)\nresult = (ops.cross_entropy(x, y), ops.cross_entropy(x, y, label_smoothing=0.1), ops.cross_entropy(x, y, reduction='sum', label_smoothing=0.2), ops.cross_entropy(x, y, reduction='none'), ops.cross_entropy(x, Tensor(PRB)), ops.cross_entropy(x, Tensor(PRB), label_smoothing=0.1))",
    "ops_cross_entropy_weight": "x = Tensor(G)\ny = Tensor(LBL)\nw = Tensor(np.array([0.2, 1.0, 3.0], np.float32))\nresult = (ops.cross_entropy(x, y, w), ops.cross_entropy(x, y, w, label_smoothing=0.1))",
    "ops_norms": "x = Tensor(B)\nresult = (ops.L2Normalize(axis=1)(x), ops.LpNorm(axis=[1, 2], p=2)(x), ops.LpNorm(axis=0, p=1, keep_dims=True)(x))",
    "ops_onehot": "i = Tensor(np.array([0, 2, 1], np.int32))\nresult = (ops.OneHot()(i, 3, Tensor(1.0), Tensor(0.0)), ops.one_hot(i, 4, Tensor(2.0), Tensor(-1.0)), ops.OneHot(axis=0)(i, 3, Tensor(1.0), Tensor(0.0)))",
    "ops_scatter_repeat": "x = Tensor(A)\nresult = (ops.tensor_scatter_elements(x, Tensor(np.array([[1, 0]], np.int32)), Tensor(np.array([[9.0, 8.0]], np.float32)), axis=1), ops.repeat_elements(x, 2, 1))",
    "ops_creation": "result = (ops.linspace(Tensor(0.0), Tensor(1.0), 5), ops.eye(2, 3, ms.float32), ops.tuple_to_array((1, 2)), ops.tuple_to_array((1.0, 2.0)), ops.Zeros()((2, 2), ms.float32), ops.Ones()(3, ms.int32))",
    "ops_misc": "x = Tensor(A)\nresult = (ops.mul(x, 2.0), ops.add(x, x), ops.cos(x), ops.sin(x), ops.square(x), ops.Sign()(x), ops.Reciprocal()(x), ops.clip_by_value(x, Tensor(-0.5), Tensor(0.5)), ops.clip_by_global_norm((x, x * 2), 1.0), ops.Tile()(x, (2, 1)), ops.Shape()(x), ops.flatten(Tensor(B)), ops.reduce_sum(Tensor(B), 1))",
    "numpy_creation": "mnp = ms.numpy\nresult = (mnp.arange(5), mnp.arange(0.0, 2.0, 0.5), mnp.arange(1, 7, 2), mnp.ones((2, 3)), mnp.zeros(3), mnp.full((2,), 3), mnp.full((2,), 1.5), mnp.linspace(0, 1, 5), mnp.eye(3), mnp.array([1, 2]), mnp.array([1.0, 2.0]), mnp.ones_like(Tensor(A)))",
    "numpy_ops": "mnp = ms.numpy\nx = Tensor(B)\nresult = (mnp.roll(x, 1, axis=2), mnp.split(x, 2, axis=2), mnp.split(x, [1, 3], axis=2), mnp.tile(Tensor(A), (2, 1)), mnp.tensordot(x, Tensor(C), 1), mnp.mean(x, axis=1), mnp.sum(x), mnp.concatenate((x, x), axis=0), mnp.stack((x, x)), mnp.transpose(x), mnp.expand_dims(x, 0), mnp.where(x > 0, x, 0.0), mnp.maximum(x, 0.1), mnp.clip(x, -0.5, 0.5), mnp.matmul(x, Tensor(C)), mnp.dot(Tensor(A), Tensor(C[:3])))",
    "parameter_copies_its_input": "t = Tensor(A)\np1 = Parameter(t, name='a')\np2 = Parameter(t, name='b')\nops.assign(p1, Tensor(A * 5))\nafter_assign = p2.asnumpy().copy()\np1.set_data(Tensor(A * 7))\nq = Parameter(t, name='c')\nops.assign(t, Tensor(A * 9))\nresult = (Tensor(after_assign), p2, t, q)",
    "conv1d_weight_4d": "c = nn.Conv1d(3, 4, 3, pad_mode='pad', padding=1, weight_init=Tensor(W3), has_bias=True, bias_init='ones')\nresult = (c.weight.shape, c(Tensor(S)))",
    "conv2d_subclass_primitives": "class Std(nn.Conv2d):\n    def construct(self, x):\n        w = self.weight\n        w = (w - w.mean((1, 2, 3), keep_dims=True)) / ops.sqrt(w.var((1, 2, 3), keepdims=True) + 1e-10)\n        return self.conv2d(x, w)\nresult = Std(3, 2, 3, weight_init=Tensor(I[:2, :, :3, :3]))(Tensor(I))",
    "pad_nested_tuple": "result = ops.pad(Tensor(I), ((0, 0), (0, 0), (1, 1), (1, 1)))",
    "init_parameters_data": "net = nn.SequentialCell([nn.Dense(3, 2), nn.BatchNorm1d(2)])\nm = net.init_parameters_data()\nresult = (len(m), all(m[p] is p for p in net.get_parameters()))",
}

GROUPS = {"tensor": TENSOR, "nn": NN, "ops": OPS, "zoo": ZOO}
