"""One training step of a mindcv model, with or without ``.recompute()``: MindSpore code.

The same file runs under real MindSpore 2.10 (compat/record/record_step_memory.py) and under
the layer (compat/measure_step_memory.py), so both sides run exactly the same step:

- ``mindcv.create_model("resnet50", num_classes=10)``, or mindcv's ``VisionTransformer`` at
  ViT-Tiny's width (192, 12 layers, 3 heads) on 64-pixel images in 8-pixel patches; dropout and
  stochastic depth off (``zoo_case.no_dropout``); with ``recompute``, ``Cell.recompute()`` on
  every residual block (``BLOCKS``: ResNet-50's 16 bottlenecks, the ViT's 12 encoder layers);
- mindcv's ``create_loss`` (CE) and ``create_optimizer`` (momentum), and the step as mindcv's
  own examples write it: ``value_and_grad`` of the loss over the optimizer's parameters, then
  the optimizer;
- mindformers 2.1.0's ``LlamaForCausalLM`` (``LLAMA``: float32, sequence 512, hidden 128,
  4 heads, 2 layers, vocabulary 128, batch 4, at which the activations dominate), with
  ``TransformerRecomputeConfig(recompute=True)`` (every decoder layer recomputed) or no
  recompute; the step: ``value_and_grad`` of the network (which returns its loss) over
  ``nn.SGD``'s parameters, then the optimizer, on fixed tokens.

``CASES`` names the models, input sizes (image size, or sequence length) and batches measured.
"""

from __future__ import annotations

import mindcv
import mindspore as ms
import numpy as np
from mindcv.loss import create_loss
from mindcv.models.vit import VisionTransformer
from mindcv.optim import create_optimizer

import zoo_case

# name -> (image size or sequence length, batch): small enough to run in about a minute on a CPU, large enough
# that the activations outweigh the parameters' gradients
LLAMA = {"seq": 512, "hidden": 128, "heads": 4, "layers": 2, "vocab": 128, "batch": 4}
CASES = {"resnet50": (96, 8), "vit_tiny_64": (64, 8), "mindformers_llama": (LLAMA["seq"], LLAMA["batch"])}
BLOCKS = ("Bottleneck", "Block")  # the class names of mindcv's ResNet and ViT residual blocks


def build(name: str):
    ms.set_seed(0)
    if name == "vit_tiny_64":
        net = VisionTransformer(image_size=64, patch_size=8, embed_dim=192, depth=12, num_heads=3,
                                num_classes=10)
    else:
        net = mindcv.create_model(name, num_classes=10)
    zoo_case.no_dropout(net)
    return net


def make_step(name: str, recompute: bool):
    """A function running one training step of ``name`` (built, blocks recomputed or not) on a
    fixed batch; returns the loss as a float. Also returns the number of recomputed blocks."""
    if name == "mindformers_llama":
        return _llama_step(recompute)
    size, batch = CASES[name]
    net = build(name)
    blocks = [cell for _, cell in net.cells_and_names() if type(cell).__name__ in BLOCKS] if recompute else []
    for block in blocks:
        block.recompute()
    net.set_train(True)
    loss_fn = create_loss(name="CE")
    opt = create_optimizer(net.trainable_params(), opt="momentum", lr=0.01)
    rng = np.random.default_rng(0)
    x = ms.Tensor(rng.standard_normal((batch, 3, size, size)).astype(np.float32))
    y = ms.Tensor(rng.integers(0, 10, batch).astype(np.int32))

    def loss_of(data, label):
        return loss_fn(net(data), label)

    grad_fn = ms.value_and_grad(loss_of, None, opt.parameters)

    def step() -> float:
        loss, grads = grad_fn(x, y)
        opt(grads)
        return float(loss.asnumpy())

    return step, len(blocks)


def build_llama(recompute: bool):
    """mindformers' Llama at ``LLAMA``'s size, every decoder layer recomputed or none."""
    from mindformers.models.llama import LlamaConfig, LlamaForCausalLM
    from mindformers.modules.transformer.transformer import (
        TransformerOpParallelConfig,
        TransformerRecomputeConfig,
    )

    ms.set_seed(0)
    parallel = TransformerOpParallelConfig(recompute=TransformerRecomputeConfig(recompute=recompute))
    config = LlamaConfig(
        batch_size=LLAMA["batch"], seq_length=LLAMA["seq"], hidden_size=LLAMA["hidden"],
        num_layers=LLAMA["layers"], num_heads=LLAMA["heads"], vocab_size=LLAMA["vocab"],
        compute_dtype="float32", layernorm_compute_type="float32", softmax_compute_type="float32",
        rotary_dtype="float32", param_init_type="float32", use_flash_attention=False,
        fused_rms_norm=False, use_rope_slice=True, parallel_config=parallel)
    return LlamaForCausalLM(config)


def _llama_step(recompute: bool):
    from mindspore import nn

    net = build_llama(recompute)
    net.set_train(True)
    opt = nn.SGD(net.trainable_params(), learning_rate=0.1)
    rng = np.random.default_rng(0)
    tokens = ms.Tensor(rng.integers(1, LLAMA["vocab"], (LLAMA["batch"], LLAMA["seq"] + 1)).astype(np.int32))
    grad_fn = ms.value_and_grad(net, None, opt.parameters)

    def step() -> float:
        loss, grads = grad_fn(tokens)
        opt(grads)
        return float(loss.asnumpy())

    return step, LLAMA["layers"] if recompute else 0
