# ruff: noqa: E501  (a table of case sources, one line each)
"""Cases for mindcv's training path: optimizers, loss scaling, KL divergence, eval cells,
samplers, CIFAR-100 and the augmentation transforms.

Same form as ms_cases.py (its inputs are in scope); recorded by
``record_cases.py --cases ms_cases_training compat/tests/recorded/h_training_cases.json``.

Loss scaling: MindSpore 2.10's CPU build has no kernel for the overflow check of its Ascend
default path (``NPUGetFloatStatusV2``) nor of its GPU path (``FloatStatus``). The recorder
therefore sets, on every ``TrainOneStepWithLossScaleCell`` it builds, the attributes that select
MindSpore's own ``IsFinite`` path (``ascend_910b_target=True``, ``enable_allfinite=False``);
that path's kernels run on CPU, and its meaning is the documented one (overflow when any
gradient has an inf or a nan).
"""

from __future__ import annotations

from ms_cases import _NET, _optimizer_case, inputs  # noqa: F401  (inputs: the recorder's namespace)

_NAMES = "names = {p.name for p in params}\nresult = [p.name for p in opt.get_parameters() if p.name not in names]"

OPTIM = {
    "adagrad": _optimizer_case("nn.Adagrad(params, learning_rate=0.1)"),
    "adagrad_wd_accum": _optimizer_case("nn.Adagrad(params, accum=0.5, learning_rate=0.05, weight_decay=0.01)"),
    "adagrad_no_slots": _optimizer_case("nn.Adagrad(params, learning_rate=0.05, update_slots=False)"),
    "adagrad_loss_scale": _optimizer_case("nn.Adagrad(params, learning_rate=0.05, loss_scale=4.0, weight_decay=0.1)"),
    "rmsprop": _optimizer_case("nn.RMSProp(params, learning_rate=0.01)"),
    "rmsprop_momentum": _optimizer_case("nn.RMSProp(params, learning_rate=0.01, decay=0.8, momentum=0.9, epsilon=1e-6, weight_decay=0.01)"),
    "rmsprop_centered": _optimizer_case("nn.RMSProp(params, learning_rate=0.01, momentum=0.5, centered=True)"),
    "lamb": _optimizer_case("nn.Lamb(params, 0.01)"),
    "lamb_wd": _optimizer_case("nn.Lamb(params, 0.01, beta1=0.8, beta2=0.99, eps=1e-5, weight_decay=0.1)"),
    "lamb_schedule": _optimizer_case("nn.Lamb(params, nn.CosineDecayLR(0.001, 0.01, 2))"),
    "state_adagrad": _NET + "opt = nn.Adagrad(params)\n" + _NAMES,
    "state_rmsprop": _NET + "opt = nn.RMSProp(params)\n" + _NAMES,
    "state_rmsprop_centered": _NET + "opt = nn.RMSProp(params, centered=True)\n" + _NAMES,
    "state_lamb": _NET + "opt = nn.Lamb(params, 0.1)\n" + _NAMES,
    "adagrad_bad_accum": _NET + "result = nn.Adagrad(params, accum=1)",
    "rmsprop_bad_eps": _NET + "result = nn.RMSProp(params, epsilon=0.0)",
    "lamb_bad_beta": _NET + "result = nn.Lamb(params, 0.1, beta1=1.0)",
}

_SCALE_STEP = _NET + (
    "opt = nn.Momentum(params, 0.1, 0.9)\nstep = nn.TrainOneStepWithLossScaleCell(nn.WithLossCell(net, nn.MSELoss()), opt, scale_sense={sense})\n"
    "step.set_train()\nout = []\nfor k in {inputs}:\n    x = Tensor(G * k)\n    loss, cond, scale = step(x, Tensor(np.zeros((5, 2), np.float32)))\n"
    "    out.append((loss, cond, scale))\nresult = (out, [(p.name, p) for p in params])")

LOSS_SCALE = {
    "dynamic_cell": _SCALE_STEP.format(sense="nn.DynamicLossScaleUpdateCell(2.0 ** 10, 2, 2)", inputs="[1, 1, 1, np.inf, 1, np.nan, 1, 1, 1]"),
    "dynamic_cell_floor": _SCALE_STEP.format(sense="nn.DynamicLossScaleUpdateCell(4.0, 4, 100)", inputs="[np.inf, np.inf, 1]"),
    "fixed_cell": _SCALE_STEP.format(sense="nn.FixedLossScaleUpdateCell(64.0)", inputs="[1, np.inf, 1]"),
    "tensor_sense": _SCALE_STEP.format(sense="Tensor(np.array([1024.0], np.float32))", inputs="[1, np.inf, 1]"),
    "scalar_sense": _SCALE_STEP.format(sense="Tensor(8.0, ms.float32)", inputs="[1, 2]"),
    "set_sense_scale": _NET + "step = nn.TrainOneStepWithLossScaleCell(nn.WithLossCell(net, nn.MSELoss()), nn.SGD(params, 0.1), scale_sense=Tensor(np.array([4.0], np.float32)))\n"
                              "step.set_sense_scale(Tensor(np.array([2.0], np.float32)))\nresult = (step.scale_sense, step(Tensor(G), Tensor(np.zeros((5, 2), np.float32))))",
    "update_cell_state": "c = nn.DynamicLossScaleUpdateCell(loss_scale_value=16.0, scale_factor=2, scale_window=3)\ns = Parameter(Tensor(16.0, ms.float32), name='s')\nout = []\n"
                         "for o in [False, False, False, True, False, False, False, False]:\n    r = c(s, Tensor(o))\n    out.append((float(s.asnumpy()), int(c.cur_iter.asnumpy()), int(c.last_overflow_iter.asnumpy())))\n"
                         "result = (out, c.get_loss_scale())",
    "bad_sense_shape": _NET + "result = nn.TrainOneStepWithLossScaleCell(nn.WithLossCell(net, nn.MSELoss()), nn.SGD(params, 0.1), scale_sense=Tensor(np.ones(2, np.float32)))",
    "bad_sense_type": _NET + "result = nn.TrainOneStepWithLossScaleCell(nn.WithLossCell(net, nn.MSELoss()), nn.SGD(params, 0.1), scale_sense=2.0)",
    "dynamic_manager": "m = ms.train.DynamicLossScaleManager(init_loss_scale=16, scale_factor=2, scale_window=3)\nout = []\n"
                       "for o in [False, False, True, False, False, False, True, True, False]:\n    m.update_loss_scale(o)\n    out.append(m.get_loss_scale())\n"
                       "c = m.get_update_cell()\nresult = (out, m.get_drop_overflow_update(), type(c).__name__, c.get_loss_scale(), m.scale_window, m.scale_factor)",
    "dynamic_manager_default": "m = ms.train.DynamicLossScaleManager()\nresult = (m.get_loss_scale(), m.scale_factor, m.scale_window)",
    "fixed_manager": "m = ms.train.FixedLossScaleManager(64.0)\nm.update_loss_scale(True)\nc = m.get_update_cell()\n"
                     "result = (m.get_loss_scale(), m.get_drop_overflow_update(), type(c).__name__, c.get_loss_scale())",
    "fixed_manager_no_drop": "m = ms.train.FixedLossScaleManager(32.0, drop_overflow_update=False)\nresult = (m.get_loss_scale(), m.get_drop_overflow_update(), m.get_update_cell())",
    "amp_alias": "result = (ms.amp.DynamicLossScaleManager is ms.train.DynamicLossScaleManager, ms.amp.FixedLossScaleManager is ms.train.FixedLossScaleManager)",
    "model_fixed_no_drop": _NET + "opt = nn.Momentum(params, 0.1, 0.9, loss_scale=32.0)\nmodel = ms.train.Model(net, nn.MSELoss(), opt, loss_scale_manager=ms.train.FixedLossScaleManager(32.0, drop_overflow_update=False))\n"
                                  "ds = ms.dataset.NumpySlicesDataset((G, np.zeros((5, 2), np.float32)), column_names=['x', 'y'], shuffle=False).batch(5)\n"
                                  "model.train(2, ds)\nresult = (type(model.train_network).__name__, [(p.name, p) for p in params])",
}

LOSS = {
    "kldiv_mean": "x = ops.log_softmax(Tensor(G), 1)\nt = Tensor(np.array([[0.2, 0.3, 0.5], [0.0, 0.5, 0.5], [1, 0, 0], [0.1, 0.1, 0.8], [0.3, 0.3, 0.4]], np.float32))\n"
                  "result = (ops.KLDivLoss()(x, t), ops.KLDivLoss('sum')(x, t), ops.KLDivLoss('none')(x, t), ops.KLDivLoss(reduction='batchmean')(x, t))",
    "kldiv_nn": "x = ops.log_softmax(Tensor(G), 1)\nt = ops.softmax(Tensor(G[::-1].copy()), 1)\nresult = (nn.KLDivLoss()(x, t), nn.KLDivLoss(reduction='batchmean')(x, t), nn.KLDivLoss('none')(x, t))",
    "kldiv_functional": "x = ops.log_softmax(Tensor(G), 1)\nt = ops.softmax(Tensor(G[::-1].copy()), 1)\nresult = (ops.kl_div(x, t), ops.kl_div(x, t, 'sum'), ops.kl_div(x, t, reduction='batchmean'))",
    "kldiv_grad": "t = ops.softmax(Tensor(G[::-1].copy()), 1)\ndef f(z):\n    return ops.KLDivLoss('batchmean')(ops.log_softmax(z, 1), t)\nresult = ms.grad(f)(Tensor(G))",
    "kldiv_bad_reduction": "result = ops.KLDivLoss('avg')",
    "with_eval_cell": _NET + "e = nn.WithEvalCell(net, nn.MSELoss())\nloss, out, label = e(Tensor(G), Tensor(np.ones((5, 2), np.float32)))\nresult = (loss, out, label, [n for n, _ in e.parameters_and_names()])",
    "nn_metric_aliases": "result = [getattr(nn, n) is getattr(ms.train, n) for n in ('Accuracy', 'Loss', 'Precision', 'Recall', 'Metric', 'Top1CategoricalAccuracy', 'Top5CategoricalAccuracy', 'TopKCategoricalAccuracy')]",
    "nn_top1": "m = nn.Top1CategoricalAccuracy()\nm.clear()\nm.update(Tensor(G), Tensor(LBL))\nresult = m.eval()",
}

_SLICES = "ds = ms.dataset\ndata = ds.NumpySlicesDataset({'v': np.arange(10, dtype=np.int32)}, **KW)\nresult = [int(r[0]) for r in data.create_tuple_iterator(output_numpy=True)]\n"

DATASET = {
    "sequential_sampler": _SLICES.replace("**KW", "sampler=ds.SequentialSampler()"),
    "sequential_start_num": _SLICES.replace("**KW", "sampler=ds.SequentialSampler(start_index=3, num_samples=4)"),
    "sequential_num_only": _SLICES.replace("**KW", "sampler=ds.SequentialSampler(num_samples=20)"),
    "distributed_no_shuffle": _SLICES.replace("**KW", "sampler=ds.DistributedSampler(3, 1, shuffle=False)"),
    "distributed_no_shuffle_last": _SLICES.replace("**KW", "sampler=ds.DistributedSampler(3, 2, shuffle=False)"),
    "distributed_num_samples": _SLICES.replace("**KW", "sampler=ds.DistributedSampler(2, 0, shuffle=False, num_samples=3)"),
    "distributed_offset": _SLICES.replace("**KW", "sampler=ds.DistributedSampler(4, 1, shuffle=False, offset=2)"),
    "shards_kwargs": _SLICES.replace("**KW", "shuffle=False, num_shards=4, shard_id=3"),
    "shards_kwargs_first": _SLICES.replace("**KW", "shuffle=False, num_shards=4, shard_id=0"),
    "subset_sampler": _SLICES.replace("**KW", "sampler=ds.SubsetSampler([7, 2, 2, 9])"),
    "sampler_list": _SLICES.replace("**KW", "sampler=[4, 1, 8]"),
    "sampler_size": "ds = ms.dataset\nresult = [ds.NumpySlicesDataset({'v': np.arange(10)}, sampler=s).get_dataset_size() for s in "
                    "(ds.SequentialSampler(2, 5), ds.DistributedSampler(3, 0, shuffle=False), ds.DistributedSampler(3, 2, shuffle=False), ds.RandomSampler(num_samples=4), ds.RandomSampler(replacement=True, num_samples=13), ds.SubsetRandomSampler([1, 2, 3]))]",
    "sampler_no_shuffle": _SLICES.replace("**KW", "shuffle=False, sampler=ds.SequentialSampler()"),
    "sampler_with_shuffle": _SLICES.replace("**KW", "shuffle=True, sampler=ds.SequentialSampler()"),
    "shard_id_without_num": _SLICES.replace("**KW", "shard_id=1"),
    "shard_id_range": _SLICES.replace("**KW", "num_shards=2, shard_id=2"),
    "sampler_and_shards": _SLICES.replace("**KW", "sampler=ds.SequentialSampler(), num_shards=2, shard_id=0"),
    "random_sampler_bad": "ds = ms.dataset\nresult = ds.RandomSampler(replacement=1)",
    "distributed_bad_shard": "ds = ms.dataset\nresult = ds.NumpySlicesDataset({'v': np.arange(4)}, sampler=ds.DistributedSampler(2, 2)).get_dataset_size()",
    "generator_random_access_sampler": "ds = ms.dataset\nclass Src:\n    def __getitem__(self, i):\n        return (np.array(i * 10, np.int32),)\n    def __len__(self):\n        return 6\n"
                                       "data = ds.GeneratorDataset(Src(), ['v'], sampler=ds.SequentialSampler(1, 3))\nresult = [int(r[0]) for r in data.create_tuple_iterator(output_numpy=True)]",
    "cifar100": "import tempfile, os\nds = ms.dataset\nrng = np.random.RandomState(3)\nrec = rng.randint(0, 256, (10000, 3074)).astype(np.uint8)\nrec[:, 0] %= 20\nrec[:, 1] %= 100\n"
                "d = tempfile.mkdtemp()\nrec.tofile(os.path.join(d, 'test.bin'))\ndata = ds.Cifar100Dataset(d, usage='test', shuffle=False, num_samples=3)\n"
                "rows = list(data.create_tuple_iterator(output_numpy=True))\nresult = (data.get_col_names(), data.get_dataset_size(), [(Tensor(r[0]), int(r[1]), int(r[2]), str(r[0].dtype), str(r[1].dtype)) for r in rows])",
    "cifar100_sharded": "import tempfile, os\nds = ms.dataset\nrec = np.zeros((10000, 3074), np.uint8)\nrec[:, 1] = np.arange(10000) % 100\nd = tempfile.mkdtemp()\nrec.tofile(os.path.join(d, 'test.bin'))\n"
                        "data = ds.Cifar100Dataset(d, usage='test', shuffle=False, num_shards=2500, shard_id=1)\nresult = [int(r[2]) for r in data.create_tuple_iterator(output_numpy=True)]",
}

_IMG = "img = np.random.RandomState(1).randint(0, 256, (8, 10, 3)).astype(np.uint8)\nimg[0, 0] = [20, 30, 40]\nlow = (img // 2 + 40).astype(np.uint8)\nv = ms.dataset.vision\n"

VISION = {
    "invert": _IMG + "result = Tensor(v.Invert()(img))",
    "vertical_flip": _IMG + "result = Tensor(v.RandomVerticalFlip(1.0)(img))",
    "vertical_flip_never": _IMG + "result = Tensor(v.RandomVerticalFlip(0.0)(img))",
    "posterize": _IMG + "result = (Tensor(v.RandomPosterize((3, 3))(img)), Tensor(v.RandomPosterize(1)(img)))",
    "solarize": _IMG + "result = (Tensor(v.RandomSolarize((128, 128))(img)), Tensor(v.RandomSolarize((0, 0))(img)), Tensor(v.RandomSolarize((100, 200))(img * 0)))",
    "autocontrast": _IMG + "result = (Tensor(v.AutoContrast()(low)), Tensor(v.AutoContrast(cutoff=10.0)(low)), Tensor(v.AutoContrast(ignore=[40])(low)))",
    "equalize": _IMG + "result = (Tensor(v.Equalize()(img)), Tensor(v.Equalize()(low)))",
    "color": _IMG + "result = (Tensor(v.RandomColor((0.3, 0.3))(img)), Tensor(v.RandomColor((1.7, 1.7))(img)))",
    "sharpness": _IMG + "result = (Tensor(v.RandomSharpness((0.3, 0.3))(img)), Tensor(v.RandomSharpness((1.6, 1.6))(img)))",
    "brightness": _IMG + "result = Tensor(v.RandomColorAdjust(brightness=(1.4, 1.4))(img))",
    "contrast": _IMG + "result = Tensor(v.RandomColorAdjust(contrast=(0.6, 0.6))(img))",
    "saturation": _IMG + "result = Tensor(v.RandomColorAdjust(saturation=(0.5, 0.5))(img))",
    "hue": _IMG + "result = Tensor(v.RandomColorAdjust(hue=(0.1, 0.1))(img))",
    "rotation": _IMG + "result = (Tensor(v.RandomRotation((30, 30))(img)), Tensor(v.RandomRotation((-90, -90), fill_value=(1, 2, 3))(img)))",
    "rotation_bilinear_expand": _IMG + "result = Tensor(v.RandomRotation((20, 20), resample=v.Inter.BILINEAR, expand=True)(img))",
    "affine_shear": _IMG + "result = (Tensor(v.RandomAffine(degrees=0, shear=(15, 15, 0, 0))(img)), Tensor(v.RandomAffine(degrees=0, shear=(0, 0, -10, -10), fill_value=(9, 9, 9))(img)))",
    "affine_translate": _IMG + "result = Tensor(v.RandomAffine(degrees=0, translate=(0.2, 0.2, -0.25, -0.25))(img))",
    "gaussian_blur": _IMG + "result = (Tensor(v.GaussianBlur(3, 1.0)(img)), Tensor(v.GaussianBlur((5, 3), (1.5, 0.7))(img)))",
    "rotation_bilinear": _IMG + "result = (Tensor(v.RandomRotation((30, 30), resample=v.Inter.BILINEAR)(img)), Tensor(v.RandomRotation((-75, -75), resample=v.Inter.BICUBIC, fill_value=(5, 6, 7))(img)))",
    "rotation_area_center": _IMG + "result = (Tensor(v.RandomRotation((45, 45), resample=v.Inter.AREA)(img)), Tensor(v.RandomRotation((30, 30), center=(2, 3))(img)))",
    "affine_rotate_scale": _IMG + "result = (Tensor(v.RandomAffine(degrees=(30, 30))(img)), Tensor(v.RandomAffine(degrees=0, scale=(1.3, 1.3))(img)))",
    "affine_bilinear_fill": _IMG + "result = (Tensor(v.RandomAffine(degrees=0, shear=(12, 12), resample=v.Inter.BILINEAR, fill_value=(1, 2, 3))(img)), Tensor(v.RandomAffine(degrees=0, translate=(0.15, 0.15), resample=v.Inter.BICUBIC)(img)))",
    "affine_translate_fraction": _IMG + "result = (Tensor(v.RandomAffine(degrees=0, translate=(0.15, 0.15))(img)), Tensor(v.RandomAffine(degrees=0, translate=(0, 0, 0.3, 0.3))(img)))",
    "affine_area": _IMG + "result = Tensor(v.RandomAffine(degrees=0, shear=(-20, -20), resample=v.Inter.AREA, fill_value=(128, 128, 128))(img))",
    "posterize_range_errors": "v = ms.dataset.vision\nresult = v.RandomPosterize((0, 4))",
    "color_adjust_numbers": _IMG + "np.random.seed(0)\nresult = Tensor(v.RandomColorAdjust(brightness=(0.7, 0.7), contrast=(1.3, 1.3), saturation=(1.5, 1.5))(img))",
    "duplicate": "result = [Tensor(a) for a in ms.dataset.transforms.Duplicate()(np.arange(3, dtype=np.int32))]",
    "erasing_value": "x = np.ones((3, 8, 8), np.float32)\ne = ms.dataset.vision.RandomErasing(prob=1.0, scale=(0.1, 0.1), ratio=(1.0, 1.0), value=(5, 6, 7))(x)\nresult = (sorted(set(np.unique(e[0]).tolist())), sorted(set(np.unique(e[2]).tolist())), int((e[1] == 6).sum()), int((e[0] == 5).sum()))",
    "random_erasing_p0": "x = np.random.RandomState(1).rand(3, 8, 8).astype(np.float32)\nresult = Tensor(ms.dataset.vision.RandomErasing(prob=0.0)(x))",
}

GROUPS = {"optim": OPTIM, "loss_scale": LOSS_SCALE, "loss": LOSS, "dataset": DATASET, "vision": VISION}
