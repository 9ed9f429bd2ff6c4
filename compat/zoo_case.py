"""One mindcv model, built, filled, run forward and trained two steps: MindSpore code.

The same file runs under real MindSpore 2.10 (compat/record/record_zoo.py records its results)
and under the layer (``paddle-mindspore compat/zoo.py`` compares with
them), so both sides do exactly the same thing:

- build ``mindcv.create_model(name, num_classes=10)``, dropout and stochastic depth off (their
  masks come from each framework's own generator);
- fill every trainable parameter with numpy values drawn from its name (crc32 seed), at the
  mean and standard deviation MindSpore's own initialisation gave it (recorded, rounded to 4
  significant digits), so both frameworks hold bit-identical weights without shipping them;
  non-trainable parameters (BatchNorm statistics, index tables, masks) keep what the model
  builds;
- forward in eval mode on a fixed batch of 2 images of ``size`` pixels;
- two training steps with mindcv's own ``create_loss`` (CE, label smoothing 0.1),
  ``create_scheduler`` (cosine decay, list of rates) and ``create_optimizer`` (momentum,
  grouped parameters: weight decay filtered off norms and biases).

``noise`` (the noise floor): every trainable weight times ``1 + 1e-6 * N(0, 1)``.
"""

from __future__ import annotations

import zlib

import mindcv
import mindspore as ms
import numpy as np
from mindcv.loss import create_loss
from mindcv.optim import create_optimizer
from mindcv.scheduler import create_scheduler

BATCH = 2
LABELS = np.array([1, 7], np.int32)
NOISE = 1e-6


def own_size(name):
    """The input size mindcv's config names for ``name`` (224 where it names none)."""
    registry = mindcv.models.registry
    has = registry.has_pretrained_cfg_key(name, "input_size")
    size = registry.get_pretrained_cfg_value(name, "input_size") if has else None
    return int(size[-1]) if size else 224


def build(name):
    ms.set_seed(0)
    net = mindcv.create_model(name, num_classes=10)
    net.random_cells = no_dropout(net)
    return net


def no_dropout(net):
    """Switch off dropout and stochastic depth: their masks come from each framework's own
    generator, so no two frameworks draw the same (``nn.Dropout`` and mindcv's ``DropPath``
    read these attributes on every call, in both). Returns how many were on."""
    switched = 0
    for _, cell in net.cells_and_names():
        if isinstance(cell, ms.nn.Dropout):
            switched += bool(cell.p)
            cell.p = 0.0
            cell.keep_prob = 1.0
        elif type(cell).__name__ == "DropPath":
            switched += cell.keep_prob != 1.0
            cell.keep_prob = 1.0
    return switched


def param_table(net):
    """[name, shape, requires_grad] of every parameter, in MindSpore's order."""
    return [[p.name, list(p.shape), bool(p.requires_grad)] for p in net.get_parameters()]


def init_scales(net):
    """{trainable name: [mean, std]} of the built weights, 4 significant digits."""
    out = {}
    for p in net.trainable_params():
        value = p.asnumpy().astype(np.float64)
        out[p.name] = [float(f"{value.mean():.4g}"), float(f"{value.std():.4g}")]
    return out


def fill(net, scales, noise_seed=None):
    for p in net.trainable_params():
        mean, std = scales[p.name]
        rng = np.random.default_rng(zlib.crc32(p.name.encode()))
        value = (mean + std * rng.standard_normal(tuple(p.shape))).astype(np.float32)
        if noise_seed is not None:
            jitter = np.random.default_rng([noise_seed, zlib.crc32(p.name.encode())])
            value = (value * (1 + NOISE * jitter.standard_normal(value.shape))).astype(np.float32)
        p.set_data(ms.Tensor(value))


def images(size):
    return np.random.default_rng(0).standard_normal((BATCH, 3, size, size)).astype(np.float32)


def forward(net, size):
    net.set_train(False)
    out = net(ms.Tensor(images(size)))
    if isinstance(out, tuple | list):
        out = out[0]
    return out.asnumpy()


def train(net, size, steps=2):
    """Losses of ``steps`` training steps on the same batch (the last reflects the updates), and
    the training-mode logits of the last step."""
    net.set_train(True)
    loss_fn = create_loss(name="CE", label_smoothing=0.1)
    lr = create_scheduler(
        steps_per_epoch=1,
        scheduler="cosine_decay",
        lr=0.01,
        min_lr=1e-4,
        warmup_epochs=0,
        decay_epochs=steps,
        num_epochs=steps,
    )
    opt = create_optimizer(
        net.trainable_params(), opt="momentum", lr=lr, weight_decay=1e-4, weight_decay_filter="norm_and_bias"
    )
    x, y = ms.Tensor(images(size)), ms.Tensor(LABELS)
    ms.set_seed(1)  # any randomness left (none expected) starts alike in every run

    def loss_of(data, label):
        logits = net(data)
        return loss_fn(logits, label), logits

    grad_fn = ms.value_and_grad(loss_of, None, opt.parameters, has_aux=True)
    losses = []
    for _ in range(steps):
        (loss, logits), grads = grad_fn(x, y)
        opt(grads)
        losses.append(float(loss.asnumpy()))
    if isinstance(logits, tuple | list):
        logits = logits[0]
    return losses, logits.asnumpy()


def prepare(name):
    """The built model and a copy of its non-trainable parameters (one build serves every run)."""
    net = build(name)
    fixed = {p.name: p.asnumpy().copy() for p in net.get_parameters() if not p.requires_grad}
    return net, fixed


def reset(net, fixed, scales, noise_seed=None):
    """The state of a fresh build filled from ``scales``: trainable weights drawn, the others back."""
    fill(net, scales, noise_seed)
    for p in net.get_parameters():
        if not p.requires_grad:
            p.set_data(ms.Tensor(fixed[p.name]))


def run(model, size, scales, noise_seed=None):
    """{"forward": eval logits, "losses": [...], "train_logits": ...} of ``model`` (from ``prepare``)
    reset to its filled weights."""
    net, fixed = model
    reset(net, fixed, scales, noise_seed)
    logits = forward(net, size)
    losses, train_logits = train(net, size)
    return {"forward": logits, "losses": losses, "train_logits": train_logits}


def repeated_blocks(net):
    """The cells that repeat: children of one parent sharing a class with a sibling and holding
    parameters (ResNet's blocks, a ViT's encoder layers); the outermost such cells only. A cell
    shared by other blocks (coat's cpe/crpe, children of the model and of its blocks) is left to
    them: no block runs inside another."""
    found, inside = [], set()
    for _, cell in net.cells_and_names():
        if id(cell) in inside:
            continue
        children = [c for c in cell.cells() if c.trainable_params()
                    and not isinstance(c, ms.nn.CellList | ms.nn.CellDict)]  # lists are never called
        kinds = {}
        for child in children:
            kinds.setdefault(type(child), []).append(child)
        for group in kinds.values():
            if len(group) > 1:
                found += group
                for child in group:
                    inside.update(id(c) for _, c in child.cells_and_names())
    within = {id(c) for block in found for _, c in block.cells_and_names() if c is not block}
    return [block for block in found if id(block) not in within]


def run_recomputed(model, size, scales, **options):
    """``run`` with ``.recompute(**options)`` on every repeated block; marks ``model``. Also counts each
    block's calls: in one eval forward, and in training (forward plus the recomputation in
    backward, so twice the forward's count per step when the recomputation ran). Blocks that run
    in training only (inception_v3's auxiliary head, whose logits mindcv's loss leaves out) are
    counted apart: no gradient reaches them, so nothing recomputes them."""
    net, fixed = model
    reset(net, fixed, scales)
    blocks = repeated_blocks(net)
    calls = {}

    def count(cell, inputs):
        calls[id(cell)] = calls.get(id(cell), 0) + 1

    for block in blocks:
        block.recompute(**options)
        block.register_forward_pre_hook(count)
    forward(net, size)
    per_forward = dict(calls)
    calls.clear()
    losses, train_logits = train(net, size)
    in_eval = {key: calls.get(key, 0) for key in per_forward}
    return {"losses": losses, "train_logits": train_logits, "blocks": len(blocks),
            "calls_per_forward": sum(per_forward.values()), "train_calls": sum(in_eval.values()),
            "uneven_blocks": sum(in_eval[key] != 2 * 2 * n for key, n in per_forward.items()),
            "train_only_calls": sum(n for key, n in calls.items() if key not in per_forward)}
