"""Build models with recompute options, marking each build on stderr, in one process.

    python -m paddle_mindspore _one_device_warnings_driver.py BUILDS_JSON

BUILDS_JSON is a list of builds, each ``{"kind": ..., "keys": {...}}``, run in order:

- ``"llama"``: mindformers' (legacy) ``LlamaForCausalLM``, 2 layers, hidden 32, PyNative, with
  ``TransformerRecomputeConfig(**keys)``, then one forward and backward;
- ``"qwen3"``: mindformers' 2-layer ``TrainingQwen3ForCausalLM`` (its training-graph path,
  ``compat/mindformers_scripts/qwen3_train.py``'s ``build``) with
  ``TransformerRecomputeConfig(**keys)``, then one forward and backward;
- ``"cell"``: a two-block ``nn.SequentialCell`` whose blocks are marked
  ``block.recompute(**keys)``, then one forward and backward;
- ``"prim"``: a ``Mul`` and a ``ReduceSum`` given ``add_prim_attr(name, value)`` for each key,
  then one forward and backward.

A process builds one model kind of mindformers (``llama`` and ``qwen3`` set up mindformers'
context differently). Before each build it writes ``=== build <i>`` to stderr (flushed),
where MindSpore's logger writes too, so each warning can be told to the build that caused it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import mindspore as ms
import numpy as np
from mindspore import Tensor, nn, ops

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "mindformers_scripts"))


def qwen3(keys: dict) -> None:
    import qwen3_train

    qwen3_train.VARIANTS["probe"] = keys
    net = qwen3_train.build("probe")
    net.set_train(True)
    tokens = Tensor(np.arange(2 * 17).reshape(2, 17).astype(np.int32) % 127 + 1)
    grad_fn = ms.value_and_grad(lambda x, y: net(x, labels=y)[0], None, net.trainable_params())
    grad_fn(tokens[:, :-1], tokens[:, 1:])


def llama(keys: dict) -> None:
    from mindformers.models.llama import LlamaConfig, LlamaForCausalLM
    from mindformers.modules.transformer.transformer import (
        TransformerOpParallelConfig,
        TransformerRecomputeConfig,
    )

    parallel = TransformerOpParallelConfig(recompute=TransformerRecomputeConfig(**keys))
    config = LlamaConfig(batch_size=2, seq_length=8, hidden_size=32, num_layers=2, num_heads=4, vocab_size=64,
                         compute_dtype="float32", layernorm_compute_type="float32",
                         softmax_compute_type="float32", rotary_dtype="float32", param_init_type="float32",
                         use_flash_attention=False, fused_rms_norm=False, parallel_config=parallel)
    net = LlamaForCausalLM(config)
    net.set_train(True)
    tokens = Tensor(np.arange(2 * 9).reshape(2, 9).astype(np.int32) % 63 + 1)
    ms.value_and_grad(net, None, net.trainable_params())(tokens)


class _Block(nn.Cell):
    def __init__(self):
        super().__init__()
        self.dense = nn.Dense(4, 4)
        self.mul = ops.Mul()
        self.sum = ops.ReduceSum()

    def construct(self, x):
        y = self.dense(x)
        return self.mul(y, y)


def cell(keys: dict) -> None:
    net = nn.SequentialCell([_Block(), _Block()])
    for block in net:
        block.recompute(**keys)
    _step(net)


def prim(keys: dict) -> None:
    block = _Block()
    for name, value in keys.items():
        block.mul.add_prim_attr(name, value)
        block.sum.add_prim_attr(name, value)
    _step(block)


def _step(net) -> None:
    x = Tensor(np.ones((2, 4), np.float32))
    ms.value_and_grad(lambda x: net(x).sum(), None, net.trainable_params())(x)


def main() -> None:
    if '"llama"' in sys.argv[1]:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    if '"qwen3"' in sys.argv[1]:
        from mindformers import build_context

        build_context({"use_legacy": False, "parallel": {},
                       "context": {"mode": "GRAPH_MODE", "device_target": "CPU"}})
    kinds = {"llama": llama, "qwen3": qwen3, "cell": cell, "prim": prim}
    for i, build in enumerate(json.loads(sys.argv[1])):
        print(f"=== build {i}", file=sys.stderr, flush=True)
        kinds[build["kind"]](build["keys"])
        sys.stderr.flush()


if __name__ == "__main__":
    main()
