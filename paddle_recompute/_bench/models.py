"""The benchmark models by name: how to build each, feed it and score it."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import paddle
from paddle import nn

from .blocks import Runner
from .gpt import GPT, GPTConfig, gpt_batch, gpt_loss
from .mlp import MLP, MLPConfig, mlp_batch, mlp_loss
from .paddleformers import Llama, LlamaConfig
from .resnet import ResNet, ResNetConfig, resnet_batch, resnet_loss

__all__ = ["ModelSpec", "MODELS", "size_fields", "quick_config"]


@dataclass(frozen=True)
class ModelSpec:
    """A benchmark model family.

    ``model(cfg, runner)`` builds a layer whose repeated blocks are ``model.blocks`` and go
    through ``model.runner``; ``batch(cfg, step)`` gives ``(inputs, targets)`` for a step
    (the same for every mode); ``loss(output, targets)`` is the training loss.  ``quick``
    overrides the config's defaults for a run of seconds (``paddle-recompute bench``).
    """

    name: str
    config: type
    model: Callable[[Any, Runner], nn.Layer]
    batch: Callable[[Any, int], tuple[Any, Any]]
    loss: Callable[[Any, Any], paddle.Tensor]
    summary: str
    quick: dict[str, Any] = dataclasses.field(default_factory=dict)

    def describe(self, cfg: Any) -> str:
        """``name (field=value, ...)``."""
        sizes = ", ".join(f"{f.name}={getattr(cfg, f.name)}" for f in dataclasses.fields(cfg))
        return f"{self.name} ({sizes})"


MODELS: dict[str, ModelSpec] = {
    spec.name: spec
    for spec in (
        ModelSpec("gpt", GPTConfig, GPT, gpt_batch, gpt_loss, "GPT-style decoder, one block per layer",
                  quick={"vocab": 512, "hidden": 128, "blocks": 4, "seq": 128}),
        ModelSpec("resnet", ResNetConfig, ResNet, resnet_batch, resnet_loss,
                  "ResNet with BatchNorm basic blocks, three stages"),
        ModelSpec("mlp", MLPConfig, MLP, mlp_batch, mlp_loss, "residual MLP classifier"),
        ModelSpec("llama", LlamaConfig, Llama, gpt_batch, gpt_loss,
                  "PaddleFormers' LlamaForCausalLM (GQA, RoPE, SwiGLU); needs paddleformers",
                  quick={"vocab": 512, "hidden": 128, "blocks": 4, "seq": 128}),
    )
}


def size_fields() -> dict[str, type]:
    """Every size option of every model, with its type (for the command line)."""
    fields: dict[str, type] = {}
    for spec in MODELS.values():
        for f in dataclasses.fields(spec.config):
            fields[f.name] = type(f.default)
    return fields


def quick_config(name: str, **sizes: Any) -> Any:
    """The config of model ``name`` at its quick sizes, with ``sizes`` overriding them.

    Example:
        >>> quick_config("gpt", blocks=2).blocks
        2
    """
    spec = MODELS[name]
    return spec.config(**{**spec.quick, **sizes})
