# ruff: noqa: E501  (a table of case sources, one line each)
"""Cases for mindcv's own optimizers (``mindcv.create_optimizer``: adamw, adan, lion, nadam, as
Cells on ``nn.Optimizer``), their state parameters, its ``sgd`` (MindSpore's ``nn.SGD``: the
numbers and the optimizer checkpoint's entries), ``nn.Conv1dTranspose``'s 4-D weight, and the
hue shift and expanded rotation of the dataset's vision transforms at fixed parameters.

Same form as ms_cases.py (its inputs are in scope); the sources ``import mindcv`` (under the
runner's import alias here). Recorded by
``record_cases.py --cases ms_cases_mindcv compat/tests/recorded/i_mindcv_cases.json``.
"""

from __future__ import annotations

from ms_cases import _NET, inputs  # noqa: F401  (inputs: the recorder's namespace)

# Adan takes a parameter's first step where its previous gradient sums to exactly 0.0 (mindcv's
# test). Behind the shared net's LayerNorm, gradients sum to 0 up to rounding, and whether the
# float32 sum is exactly 0 depends on the summation order (MindSpore's and Paddle's differ), so
# the Adan cases use the net without that LayerNorm in its path.
_NET_PLAIN = _NET.replace("self.head(self.norm(self.fc(x)))", "self.head(ops.relu(self.fc(x)))")


def _steps(make: str, extra: str = "") -> str:
    """Three steps of ``make`` on the shared net: losses, every parameter, then ``extra``."""
    net = _NET_PLAIN if "'adan'" in make else _NET
    return "import mindcv\n" + net + f"opt = {make}\nlosses = []\n" + (
        "for _ in range(3):\n    loss, grads = grad_fn(Tensor(G))\n    opt(grads)\n    losses.append(loss)\n"
        f"result = (losses, [(p.name, p) for p in params]{extra})")


def _create(name: str, args: str = "") -> str:
    return f"mindcv.create_optimizer(params, {name!r}{args})"


_STATE = ", [(p.name, p) for p in opt.get_parameters() if p.name not in {q.name for q in params}]"
# the optimizer's checkpoint: every entry, in the order MindSpore writes them
_CKPT = (", (lambda path: (ms.save_checkpoint(opt, path), list(ms.load_checkpoint(path).items()))[1])"
         "(__import__('os').path.join(__import__('tempfile').mkdtemp(), 'opt.ckpt'))")

OPTIM = {
    "adamw": _steps(_create("adamw", ", lr=0.01"), _STATE),
    "adamw_grouped_wd": _steps(_create("adamw", ", lr=0.01, weight_decay=0.1, weight_decay_filter='norm_and_bias'"), _STATE),
    "adamw_auto_wd": _steps(_create("adamw", ", lr=0.01, weight_decay=0.1, weight_decay_filter='auto'")),
    "adamw_loss_scale_clip": _steps(_create("adamw", ", lr=0.01, weight_decay=0.05, loss_scale=8.0, clip=True")),
    "adamw_lr_list": _steps(_create("adamw", ", lr=[0.01, 0.004, 0.002], weight_decay_filter='auto'"), ", opt.global_step"),
    "adamw_schedule": _steps(_create("adamw", ", lr=nn.CosineDecayLR(0.001, 0.01, 2), weight_decay_filter='auto'"), ", opt.global_step"),
    "lion": _steps(_create("lion", ", lr=0.01"), _STATE),
    "lion_wd_lr_list": _steps(_create("lion", ", lr=[0.01, 0.005, 0.001], weight_decay=0.2")),
    "nadam": _steps(_create("nadam", ", lr=0.01"), _STATE),
    "nadam_wd": _steps(_create("nadam", ", lr=0.01, weight_decay=0.1, weight_decay_filter='norm_and_bias'")),
    "nadam_auto_wd_loss_scale": _steps(_create("nadam", ", lr=0.01, weight_decay=0.1, weight_decay_filter='auto', loss_scale=4.0")),
    "adan": _steps(_create("adan", ", lr=0.01"), _STATE),
    "adan_wd": _steps(_create("adan", ", lr=0.01, weight_decay=0.02, weight_decay_filter='auto'")),
    "adan_lr_list_loss_scale": _steps(_create("adan", ", lr=[0.01, 0.005, 0.001], loss_scale=2.0, weight_decay_filter='auto'")),
    "sgd": _steps(_create("sgd", ", lr=0.01"), _CKPT),
    "sgd_no_momentum": _steps(_create("sgd", ", lr=0.01, momentum=0.0"), _CKPT),
    "sgd_nesterov_wd_auto": _steps(_create("sgd", ", lr=0.01, nesterov=True, weight_decay=0.1, weight_decay_filter='auto'"), _CKPT),
    "sgd_dampening_loss_scale": _steps(_create("sgd", ", lr=0.01, momentum=0.8, dampening=0.25, weight_decay=0.05, loss_scale=4.0"), _CKPT),
    "sgd_lr_list": _steps(_create("sgd", ", lr=[0.01, 0.005, 0.002]"), _CKPT),
    "sgd_nesterov_without_momentum": _steps(_create("sgd", ", lr=0.01, momentum=0.0, nesterov=True")),
    "sgd_negative_dampening": _steps(_create("sgd", ", lr=0.01, dampening=-0.5")),
    "base_attributes": "import mindcv\n" + _NET + "opt = " + _create("adamw", ", lr=0.01, weight_decay=0.1, loss_scale=2.0, weight_decay_filter='auto'") + "\n"
                       "result = (opt.cls_name, opt.global_step, opt.learning_rate, opt.weight_decay, opt.decay_flags, opt.is_group, opt.is_group_lr, opt.dynamic_lr, "
                       "opt.reciprocal_scale, opt.need_scale, opt.optim_filter, opt.use_parallel, opt.param_length, opt.global_step_increase_tensor, opt.get_lr(), opt.target)",
    "grouped_attributes": "import mindcv\n" + _NET + "opt = " + _create("lion", ", lr=0.01, weight_decay=0.1") + "\n"
                          "result = (opt.weight_decay, opt.decay_flags, opt.is_group, opt.is_group_lr, opt.exec_weight_decay, opt.get_weight_decay(), opt.learning_rate)",
    "list_lr_attributes": "import mindcv\n" + _NET + "opt = " + _create("lion", ", lr=[0.5, 0.25]") + "\n"
                          "result = (opt.dynamic_lr, type(opt.learning_rate).__name__, opt.learning_rate.learning_rate, opt.get_lr(), opt.global_step)",
}

NN = {
    "conv1d_transpose": "import numpy as np\nw = Tensor(np.random.RandomState(2).standard_normal((3, 4, 3)).astype(np.float32))\n"
                        "c = nn.Conv1dTranspose(3, 4, 3, pad_mode='valid', weight_init=w, has_bias=True, bias_init='ones')\n"
                        "x = Tensor(S[:, :, :6].copy())\nresult = (c(x), c.weight.shape, [n for n, _ in c.parameters_and_names()])",
    "conv1d_transpose_stride_same": "import numpy as np\nw = Tensor(np.random.RandomState(3).standard_normal((3, 2, 2)).astype(np.float32))\n"
                                    "c = nn.Conv1dTranspose(3, 2, 2, stride=2, weight_init=w)\nresult = (c(Tensor(S)), c.weight.shape)",
    "conv1d_transpose_pad_dilation_group": "import numpy as np\nw = Tensor(np.random.RandomState(4).standard_normal((4, 1, 3)).astype(np.float32))\n"
                                           "c = nn.Conv1dTranspose(4, 2, 3, pad_mode='pad', padding=1, dilation=2, group=2, weight_init=w)\n"
                                           "x = Tensor(np.concatenate([S, S[:, :1]], 1))\nresult = (c(x), c.weight.shape)",
    "conv1d_transpose_grad": "import numpy as np\nw = Tensor(np.random.RandomState(2).standard_normal((3, 4, 3)).astype(np.float32))\n"
                             "c = nn.Conv1dTranspose(3, 4, 3, pad_mode='valid', weight_init=w)\ndef f(x):\n    return (c(x) ** 2).sum()\n"
                             "result = ms.value_and_grad(f, 0, c.trainable_params())(Tensor(S[:, :, :5].copy()))",
    "conv1d_transpose_4d_init": "import numpy as np\nresult = nn.Conv1dTranspose(3, 4, 3, weight_init=Tensor(np.ones((3, 4, 1, 3), np.float32)))",
    "conv1d_transpose_default_shape": "c = nn.Conv1dTranspose(6, 4, 5, group=2)\nresult = (c.weight.shape, c.weight.name)",
}

_IMG = "img = np.random.RandomState(1).randint(0, 256, (8, 10, 3)).astype(np.uint8)\nimg[0, 0] = [20, 30, 40]\nv = ms.dataset.vision\n"

VISION = {
    "hue_values": _IMG + "result = [Tensor(v.RandomColorAdjust(hue=(h, h))(img)) for h in (-0.5, -0.3, -0.1, 0.002, 0.05, 0.3, 0.5)]",
    "hue_grey_and_saturated": "import numpy as np\nv = ms.dataset.vision\nimg = np.array([[[0, 0, 0], [255, 255, 255], [128, 128, 128], [255, 0, 0]], [[0, 255, 0], [0, 0, 255], [255, 255, 0], [1, 2, 3]]], np.uint8)\n"
                              "result = [Tensor(v.RandomColorAdjust(hue=(h, h))(img)) for h in (0.2, -0.45)]",
    "hue_with_brightness": _IMG + "result = Tensor(v.RandomColorAdjust(brightness=(1.3, 1.3), hue=(0.2, 0.2))(img))",
    "hue_bad_range": "v = ms.dataset.vision\nresult = v.RandomColorAdjust(hue=(0.1, 0.6))",
    "hue_bad_number": "v = ms.dataset.vision\nresult = v.RandomColorAdjust(hue=0.7)",
    "rotation_expand_angles": _IMG + "result = [Tensor(v.RandomRotation((d, d), expand=True)(img)) for d in (0, 30, 45, 90, -60, 135, 180, 200)]",
    "rotation_expand_bicubic_fill": _IMG + "result = Tensor(v.RandomRotation((-35, -35), resample=v.Inter.BICUBIC, expand=True, fill_value=(5, 6, 7))(img))",
    "rotation_expand_center": _IMG + "result = (Tensor(v.RandomRotation((25, 25), expand=True, center=(2, 3))(img)), Tensor(v.RandomRotation((70, 70), resample=v.Inter.BILINEAR, expand=True, center=(7, 1))(img)))",
    "rotation_expand_grey": "import numpy as np\nv = ms.dataset.vision\nimg = np.random.RandomState(2).randint(0, 256, (9, 6)).astype(np.uint8)\nresult = (Tensor(v.RandomRotation((50, 50), expand=True)(img)), Tensor(v.RandomRotation((50, 50), resample=v.Inter.BILINEAR, expand=True)(img)))",
    "rotation_expand_pil": "import numpy as np\nfrom PIL import Image\nv = ms.dataset.vision\nimg = Image.fromarray(np.random.RandomState(1).randint(0, 256, (8, 10, 3)).astype(np.uint8))\n"
                           "result = [Tensor(np.asarray(v.RandomRotation((d, d), expand=True)(img))) for d in (30, 100)]",
}

# ``Tensor.repeat``: MindSpore 2.10's CPU build has no kernel for it ("'repeat' is not supported on
# this device"); it documents it as ``ops.tile`` with leading dimensions added, so where the call
# reaches the device the recorded value is ``ops.tile``'s on the same input (the layer runs
# ``repeat`` itself); argument errors come from the parser, before the device
_REPEAT = ("def rep(x, reps, call):\n"
           "    try:\n"
           "        return call()\n"
           "    except RuntimeError as error:\n"
           "        if 'not supported on this device' not in str(error):\n"
           "            raise\n"
           "        return ops.tile(x, reps)\n"
           "x = Tensor(A)\n")

TENSOR = {
    "repeat_varargs": _REPEAT + "result = rep(x, (2, 1), lambda: x.repeat(2, 1))",
    "repeat_tuple": _REPEAT + "result = rep(x, (1, 3), lambda: x.repeat((1, 3)))",
    "repeat_list_more_dims": _REPEAT + "result = rep(x, (2, 1, 2), lambda: x.repeat([2, 1, 2]))",
    "repeat_keyword_tuple": _REPEAT + "result = rep(x, (2, 2), lambda: x.repeat(repeats=(2, 2)))",
    "repeat_zero": _REPEAT + "result = rep(x, (0, 2), lambda: x.repeat(0, 2))",
    "repeat_int32": _REPEAT + "y = Tensor(np.array([1, 2], np.int32))\nresult = rep(y, (3,), lambda: y.repeat(3))",
    "repeat_repmlp": _REPEAT + "e = ops.eye(4)\nresult = rep(e, (1, 3), lambda: e.repeat(1, 3)).reshape(4, 3, 2, 2)",
    "repeat_a_string": "result = Tensor(A).repeat('a')",
    "repeat_keyword_int": "result = Tensor(A).repeat(repeats=2)",
    "repeat_axis": "result = Tensor(A).repeat(2, axis=0)",
    "repeat_float": "result = Tensor(A).repeat(2.0, 1)",
    "repeat_interleave": "x = Tensor(A)\nresult = (x.repeat_interleave(2, 0), x.repeat_interleave(2), x.repeat_interleave(Tensor(np.array([1, 3, 2], np.int32)), 1), x.repeat_interleave(3, dim=-1))",
    "reshape_as": "result = (Tensor(B).reshape_as(Tensor(np.zeros((6, 4), np.float32))), Tensor(A).reshape_as(Tensor(np.zeros((3, 2), np.int32))))",
    "lcm": "result = (Tensor(np.array([4, 6, 0, -8], np.int32)).lcm(Tensor(np.array([6, 4, 5, 12], np.int32))), Tensor(np.array([[3], [5]], np.int64)).lcm(Tensor(np.array([2, 10], np.int64))))",
    "flush_from_cache": "x = Tensor(A)\nr = x.flush_from_cache()\nresult = (r, x)",
    "row_tensor": "r = ms.RowTensor(Tensor(np.array([0, 2], np.int32)), Tensor(G[:2].copy()), (4, 3))\nresult = (r.indices, r.values, r.dense_shape)",
    "parameter_cache_enable": "p = Parameter(Tensor(A), name='p')\nresult = p.cache_enable",
}

GROUPS = {"mindcv_optim": OPTIM, "nn": NN, "vision": VISION, "tensor": TENSOR}
