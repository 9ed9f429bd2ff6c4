"""The random parts of mindcv's training path, by mechanism (their draws come from the
pipeline's numpy generator, not MindSpore's C++ one, so orders differ from MindSpore's; what is
drawn from, how many, and the structure are MindSpore's), and mindcv's own transform and
trainer factories run under the import alias."""

from __future__ import annotations

import numpy as np
import pytest

import paddle_mindspore as ms

ds = ms.dataset


def _rows(sampler, n=10):
    data = ds.NumpySlicesDataset({"v": np.arange(n, dtype=np.int32)}, sampler=sampler)
    return [int(r[0]) for r in data.create_tuple_iterator(output_numpy=True)]


def test_random_sampler_is_a_permutation_and_reseeds():
    ds.config.set_seed(3)
    first = _rows(ds.RandomSampler())
    assert sorted(first) == list(range(10)) and first != list(range(10))
    ds.config.set_seed(3)
    assert _rows(ds.RandomSampler()) == first
    picked = _rows(ds.RandomSampler(num_samples=4))
    assert len(picked) == len(set(picked)) == 4


def test_random_sampler_with_replacement_repeats():
    ds.config.set_seed(0)
    drawn = _rows(ds.RandomSampler(replacement=True), 10)
    assert len(drawn) == 10 and len(set(drawn)) < 10  # 10 draws of 10 repeat with probability 0.9996


def test_subset_random_sampler_permutes_the_subset():
    ds.config.set_seed(1)
    orders = {tuple(_rows(ds.SubsetRandomSampler([1, 4, 6, 9]))) for _ in range(8)}
    assert all(sorted(o) == [1, 4, 6, 9] for o in orders) and len(orders) > 1


@pytest.mark.parametrize("num_shards", [2, 3, 4])
def test_shuffled_shards_cover_the_rows_once_under_one_seed(num_shards):
    """Each process seeds the pipeline alike, so its shard comes from the same permutation."""
    shards = []
    for shard_id in range(num_shards):
        ds.config.set_seed(7)
        shards.append(_rows(ds.DistributedSampler(num_shards, shard_id), 12))
    rows = [r for shard in shards for r in shard]
    assert sorted(rows) == list(range(12)) and rows != list(range(12))


def test_random_erasing_erases_one_rectangle_of_the_drawn_area():
    ds.config.set_seed(0)
    image = np.ones((3, 32, 32), np.float32)
    erase = ds.vision.RandomErasing(prob=1.0, scale=(0.1, 0.2), ratio=(0.5, 2.0), value=0)
    for _ in range(20):
        out = erase(image)
        rows, cols = np.nonzero(out[0] == 0)
        h, w = rows.max() - rows.min() + 1, cols.max() - cols.min() + 1
        assert len(rows) == h * w and (out[:, rows, cols] == 0).all()  # one filled rectangle, all channels
        assert 0.05 <= h * w / 1024 <= 0.25 and (image == 1).all()  # about the drawn area; input kept


def _under_alias():
    ms.install_import_alias()
    import mindcv

    return mindcv


@pytest.mark.parametrize("policy", ["randaug-m9-mstd0.5", "autoaug", "trivialaugwide", "3a"])
def test_mindcv_auto_augment_transforms_run(policy):
    """mindcv's create_transforms(auto_augment=...) path: every op of the policy runs on images."""
    try:
        mindcv = _under_alias()
        transforms = mindcv.create_transforms("imagenet", image_resize=32, is_training=True,
                                              auto_augment=policy, re_prob=0.5)
        import io

        from PIL import Image

        buffer = io.BytesIO()
        Image.fromarray(np.random.RandomState(0).randint(0, 256, (48, 40, 3)).astype(np.uint8)).save(
            buffer, "PNG")
        encoded = np.frombuffer(buffer.getvalue(), np.uint8)
        ds.config.set_seed(0)
        outs = []
        for _ in range(6):
            out = encoded
            for t in transforms:
                out = t(out)
            outs.append(out)
        assert all(o.shape == (3, 32, 32) and o.dtype == np.float32 for o in outs)
        assert len({o.tobytes() for o in outs}) == 6  # random augmentations differ
    finally:
        ms.uninstall_import_alias()


def _batch():
    x = ms.Tensor(np.random.RandomState(0).standard_normal((4, 3, 32, 32)).astype(np.float32))
    return x, ms.Tensor(np.array([0, 1, 2, 3], np.int32))


def test_mindcv_trainer_with_dynamic_loss_scale_trains():
    """mindcv's create_trainer with a dynamic loss scale: Model builds TrainOneStepWithLossScaleCell
    (as MindSpore does on GPU and Ascend); the loss goes down, and an overflowing batch halves
    the scale and leaves every parameter unchanged."""
    try:
        mindcv = _under_alias()
        from mindcv.utils.trainer_factory import create_trainer

        net = mindcv.create_model("resnet18", num_classes=4)
        opt = mindcv.create_optimizer(net.trainable_params(), opt="momentum", lr=0.01)
        model = create_trainer(net, mindcv.create_loss(name="CE"), opt, metrics=None, amp_level="O0",
                               amp_cast_list=None, loss_scale_type="dynamic", loss_scale=1024.0,
                               drop_overflow_update=True)
        step = model.train_network
        assert type(step) is ms.nn.TrainOneStepWithLossScaleCell
        x, y = _batch()
        step.set_train()
        losses = [float(step(x, y)[0]) for _ in range(3)]
        assert losses[2] < losses[0]
        before = [p.numpy().copy() for p in net.trainable_params()]
        _, overflow, scale = step(x * float("inf"), y)
        assert bool(overflow) and float(scale) == 512.0
        assert all((p.numpy() == b).all() for p, b in zip(net.trainable_params(), before, strict=True))
    finally:
        ms.uninstall_import_alias()


def test_mindcv_train_step_with_ema_and_fixed_scale_trains():
    """mindcv's own TrainStep (a TrainOneStepWithLossScaleCell subclass calling grad, grad_reducer,
    hyper_map, start_overflow_check, get_overflow_status) with EMA and a fixed scale of 64."""
    try:
        mindcv = _under_alias()
        from mindcv.utils.trainer_factory import create_trainer

        net = mindcv.create_model("resnet18", num_classes=4)
        opt = mindcv.create_optimizer(net.trainable_params(), opt="momentum", lr=0.01, loss_scale=64.0)
        model = create_trainer(net, mindcv.create_loss(name="CE"), opt, metrics=None, amp_level="O0",
                               amp_cast_list=None, loss_scale_type="fixed", loss_scale=64.0,
                               drop_overflow_update=False, ema=True)
        step = model.train_network
        assert type(step).__name__ == "TrainStep" and isinstance(step, ms.nn.TrainOneStepWithLossScaleCell)
        x, y = _batch()
        step.set_train()
        losses = [float(step(x, y)) for _ in range(3)]  # without an update cell TrainStep returns the loss
        assert losses[2] < losses[0] and float(step.updates) == 3.0  # EMA updated once per step
        assert step.weights_all[0] is net.conv1.weight  # the EMA copy trails the trained weight
        assert step.ema_weight[0].name == "ema." + step.weights_all[0].name
        assert not np.array_equal(step.ema_weight[0].numpy(), net.conv1.weight.numpy())
    finally:
        ms.uninstall_import_alias()


def test_gradient_accumulation_updates_every_second_step_with_the_mean_gradient():
    """boost.GradientAccumulation: the first call leaves the weights, the second applies SGD to
    the mean of both gradients and clears the accumulators. (mindcv's subclass assigns an int to
    its step Parameter, which MindSpore 2.10's PyNative rejects with a TypeError too, as here.)"""
    net = ms.nn.Dense(3, 2, weight_init="ones", bias_init="zeros")
    loss_net = ms.nn.WithLossCell(net, ms.nn.MSELoss())
    opt = ms.nn.SGD(net.trainable_params(), learning_rate=0.1)
    accumulate = ms.boost.GradientAccumulation(2, opt)
    rng = np.random.RandomState(0)
    batches = [(ms.Tensor(rng.standard_normal((4, 3)).astype(np.float32)),
                ms.Tensor(np.zeros((4, 2), np.float32))) for _ in range(2)]
    grad_fn = ms.value_and_grad(loss_net, None, net.trainable_params())
    w0 = net.weight.numpy().copy()
    grads = []
    for x, y in batches:
        loss, g = grad_fn(x, y)
        grads.append(g[0].numpy())
        assert accumulate(loss, g) is loss
        if len(grads) == 1:
            np.testing.assert_array_equal(net.weight.numpy(), w0)
    expected = w0 - np.float32(0.1) * (grads[0] / 2 + grads[1] / 2)
    np.testing.assert_allclose(net.weight.numpy(), expected, rtol=1e-6, atol=1e-7)  # float32 sum order
    assert int(accumulate._accumulation_step) == 0
    assert not any(a.numpy().any() for a in accumulate._grad_accumulation)
    names = [p.name for p in accumulate._grad_accumulation]
    assert names == ["grad_accumulation.weight", "grad_accumulation.bias"]


@pytest.mark.parametrize(
    "name", ["sgd", "momentum", "adam", "rmsprop", "adagrad", "lamb", "adamw", "lion", "nadam", "adan"]
)
def test_mindcv_create_optimizer(name):
    """mindcv's create_optimizer: MindSpore's optimizers and mindcv's own (adamw, lion, nadam, adan,
    written on the Cell interface of MindSpore's Optimizer) update the parameters; their numbers
    against MindSpore are in test_ms_mindcv_optim.py."""
    try:
        mindcv = _under_alias()
        net = ms.nn.Dense(3, 2)
        before = net.weight.numpy().copy()
        x = ms.Tensor(np.ones((2, 3), np.float32))
        grads = ms.grad(lambda x: net(x).sum(), None, net.trainable_params())(x)
        mindcv.create_optimizer(net.trainable_params(), opt=name, lr=0.01, weight_decay=1e-4)(grads)
        assert not np.array_equal(net.weight.numpy(), before)
    finally:
        ms.uninstall_import_alias()


def test_parameter_tuple_takes_running_statistics_and_clones():
    """mindcv's EMA and StateMonitor build ParameterTuple(net.get_parameters()) (BatchNorm's moving
    statistics included, buffers here) and clone it; a plain tensor is still refused."""
    bn = ms.nn.BatchNorm2d(2)
    params = ms.ParameterTuple(bn.get_parameters())
    assert len(params) == 4
    zeros, same = params.clone("swap", "zeros"), params.clone("ema")
    assert [p.name for p in zeros] == [f"swap.{n}" for n, _ in bn.parameters_and_names()]
    assert all(isinstance(p, ms.Parameter) and not p.numpy().any() for p in zeros)
    assert all(np.array_equal(a.numpy(), b.numpy()) and a is not b for a, b in zip(same, params, strict=True))
    with pytest.raises(TypeError, match="ParameterTuple input should be Parameter"):
        ms.ParameterTuple([ms.Tensor(np.ones(1, np.float32))])
