"""Tiny models the project did not write: PaddleFormers causal LMs, Paddle's own layers, a ViT.

Every builder seeds Paddle, so two calls give identical weights.  The PaddleFormers
families are those that train on CPU (``paddle_recompute._bench.paddleformers.FAMILIES``).
"""

from __future__ import annotations

import copy
import importlib

import paddle
from paddle import nn

from paddle_recompute._bench.paddleformers import FAMILIES, causal_lm
from paddle_recompute.testing import assert_loss_parity

VOCAB, HIDDEN, SEQ, BATCH = 64, 32, 8, 2

LM_FAMILIES = FAMILIES


def paddleformers_available() -> bool:
    try:
        importlib.import_module("paddleformers.transformers")
    except ImportError:
        return False
    return True


def lm(family: str, *, dropout: float = 0.0, gqa: bool = True, return_dict: bool = False,
       layers: int = 2, config: dict | None = None):
    """A tiny causal LM of ``family`` (hidden 32, 4 heads, 2 key/value heads with ``gqa``;
    ``config``: further config fields)."""
    return causal_lm(family, vocab=VOCAB, hidden=HIDDEN, heads=4, kv_heads=2 if gqa else 4,
                     layers=layers, positions=4 * SEQ, dropout=dropout, return_dict=return_dict,
                     config=config)


def lm_batch(step: int = 0) -> tuple[paddle.Tensor, paddle.Tensor]:
    """Token ids for ``step`` (the same in every run) and the labels (the ids themselves)."""
    ids = paddle.to_tensor([[(7 * step + 3 * i + 5 * j) % VOCAB for j in range(SEQ)]
                            for i in range(BATCH)], dtype="int64")
    return ids, ids


def loss_of(out) -> paddle.Tensor:
    """The loss of a causal LM's output: a tuple, a ModelOutput or a dict."""
    if isinstance(out, dict):  # ModelOutput is an OrderedDict
        return out["loss"]
    return out[0]


def block_names(model) -> list[str]:
    """The repeated blocks of each model here, as ``profile`` should find them."""
    if hasattr(model, "model") and hasattr(model.model, "layers"):
        return [f"model.layers.{i}" for i in range(len(model.model.layers))]
    if isinstance(model, nn.TransformerEncoder):
        return [f"layers.{i}" for i in range(len(model.layers))]
    if isinstance(model, ViT):
        return [f"blocks.{i}" for i in range(len(model.blocks))]
    if hasattr(model, "layer1"):  # ResNet: the bottlenecks of its four stages
        return [f"layer{s}.{i}" for s in range(1, 5) for i in range(len(getattr(model, f"layer{s}")))]
    if hasattr(model, "features"):  # MobileNetV2: the inverted residuals inside ``features``
        return [f"features.{i}" for i in range(1, len(model.features) - 1)]
    return [f"blocks.{i}" for i in range(len(model.blocks))]  # MobileNetV3


def blocks_of(model) -> list[nn.Layer]:
    table = dict(model.named_sublayers())
    return [table[name] for name in block_names(model)]


def encoder(dropout: float = 0.0) -> nn.TransformerEncoder:
    paddle.seed(0)
    layer = nn.TransformerEncoderLayer(HIDDEN, 4, 2 * HIDDEN, dropout=dropout)
    return nn.TransformerEncoder(layer, 2)


class Attention(nn.Layer):
    """ViT attention written as model code usually is: ``@``, ``*`` and ``+`` operators."""

    def __init__(self, dim: int, heads: int, dropout: float):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        b, n, d = x.shape
        q, k, v = self.qkv(x).reshape([b, n, 3, self.heads, d // self.heads]).transpose([2, 0, 3, 1, 4])
        probs = nn.functional.softmax((q @ k.transpose([0, 1, 3, 2])) * (d // self.heads) ** -0.5, -1)
        return self.proj((self.drop(probs) @ v).transpose([0, 2, 1, 3]).reshape([b, n, d]))


class ViTBlock(nn.Layer):
    """Pre-LN ViT block: ``x + attn(norm1(x))``, then ``x + mlp(norm2(x))``."""

    def __init__(self, dim: int, heads: int, dropout: float):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = Attention(dim, heads, dropout)
        self.norm2 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, 2 * dim)
        self.fc2 = nn.Linear(2 * dim, dim)
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.drop(self.fc2(nn.functional.gelu(self.fc1(self.norm2(x)))))


class ViT(nn.Layer):
    """Patch embedding (a strided conv), class token, positions, blocks, head."""

    def __init__(self, dim: int = HIDDEN, depth: int = 2, heads: int = 4, patch: int = 4,
                 image: int = 16, classes: int = 10, dropout: float = 0.0):
        super().__init__()
        self.patch = nn.Conv2D(3, dim, patch, stride=patch)
        self.cls = self.create_parameter([1, 1, dim])
        self.pos = self.create_parameter([1, (image // patch) ** 2 + 1, dim])
        self.blocks = nn.LayerList([ViTBlock(dim, heads, dropout) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, images):
        x = self.patch(images).flatten(2).transpose([0, 2, 1])
        x = paddle.concat([self.cls.expand([x.shape[0], -1, -1]), x], axis=1) + self.pos
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x)[:, 0])


def vit(dropout: float = 0.0) -> ViT:
    paddle.seed(0)
    return ViT(dropout=dropout)


def vision(name: str) -> nn.Layer:
    """``paddle.vision.models``: ResNet-50 and MobileNets at their real depth, random init."""
    from paddle.vision import models

    paddle.seed(0)
    if name == "resnet50":
        return models.resnet50(num_classes=10)
    if name == "mobilenet_v2":
        return models.mobilenet_v2(scale=0.25, num_classes=10)
    if name == "mobilenet_v3":
        return models.mobilenet_v3_small(scale=0.25, num_classes=10)
    raise ValueError(name)


_VISION_CACHE: dict = {}


def vision_copy(name: str) -> nn.Layer:
    """A fresh copy of :func:`vision` (ResNet-50 takes most of a second to initialise)."""
    if name not in _VISION_CACHE:
        state = paddle.get_rng_state()
        _VISION_CACHE[name] = vision(name)
        paddle.set_rng_state(state)  # the first copy draws no more random numbers than the next
    return copy.deepcopy(_VISION_CACHE[name])


# --------------------------------------------------------------------------- parity


def lm_parity(family: str, setup, *, dropout: float = 0.1, return_dict: bool = False,
              steps: int = 2, as_dict: bool = False, config: dict | None = None) -> None:
    """Train ``family`` without and with ``setup(model)`` applied: losses, every gradient
    and the final parameters must be bit-for-bit equal.  ``as_dict``: the step reads the
    loss from a plain dict built from the output."""

    def build(recompute: bool):
        model = lm(family, dropout=dropout, return_dict=return_dict, config=config)
        if recompute:
            setup(model)
        return model, paddle.optimizer.SGD(0.1, parameters=model.parameters())

    def step(model, _optimizer, i: int):
        ids, labels = lm_batch(i)
        out = model(input_ids=ids, labels=labels)
        loss = dict(loss=loss_of(out))["loss"] if as_dict else loss_of(out)
        loss.backward()
        return loss

    assert_loss_parity(build, step, steps=steps)


def model_parity(make, inputs, setup, *, steps: int = 1) -> None:
    """The same for a model ``make()`` fed ``inputs`` (a list of tensors); loss: the mean."""

    def build(recompute: bool):
        model = make()
        if recompute:
            setup(model)
        return model, paddle.optimizer.SGD(0.1, parameters=model.parameters())

    def step(model, _optimizer, i: int):
        loss = model(*inputs).astype("float32").mean()
        loss.backward()
        return loss

    assert_loss_parity(build, step, steps=steps)
