# ruff: noqa  (MindSpore model code as users write it, kept as is)
"""A tiny mindformers Llama trained a few steps with selective recompute, written as a
mindformers user writes it (runs on real MindSpore 2.10 and, unmodified, under
``paddle-mindspore``).

2 layers, hidden 64, 4 heads, vocab 128, sequence 16, float32; ``TransformerOpParallelConfig``
with ``recompute``, ``select_recompute`` and ``select_comm_recompute`` on;
``mindspore.value_and_grad`` and ``nn.SGD``. The batches are tokens drawn with numpy.

    python llama_train.py --steps 4 --init init.npz --out run.json
    python llama_train.py --steps 4 --no-recompute
    python llama_train.py --steps 4 --select-only   # select_recompute and select_comm_recompute only
    python llama_train.py --steps 4 --recompute-config '{"recompute": [1]}'  # these keys only

``--init`` loads weights by parameter name from an ``.npz``; ``--save-init`` writes the
network's initial weights to one. ``--out`` writes the losses and the parameter names and
shapes as JSON; ``--grads`` writes, to an ``.npz``, the first step's gradient of every trained
parameter (``grad/<name>``, what ``value_and_grad`` returned) and every parameter after the
last step (``param/<name>``). ``--noise SEED`` scales every weight by ``1 + 1e-6 * N(0, 1)`` first;
``--reverse-batch`` feeds each batch's rows in reverse order (the same loss and gradients in
exact arithmetic, summed in another order).
"""

import argparse
import json

import numpy as np
import mindspore as ms
from mindspore import nn, Tensor

from mindformers.models.llama import LlamaConfig, LlamaForCausalLM
from mindformers.modules.transformer.transformer import (
    TransformerOpParallelConfig,
    TransformerRecomputeConfig,
)

BATCH, SEQ, VOCAB = 2, 16, 128


def build(recompute, select, keys=None):
    if keys is None:
        keys = dict(recompute=recompute, select_recompute=select, select_comm_recompute=select)
    rc = TransformerRecomputeConfig(**keys)
    parallel = TransformerOpParallelConfig(recompute=rc)
    config = LlamaConfig(
        batch_size=BATCH,
        seq_length=SEQ,
        hidden_size=64,
        num_layers=2,
        num_heads=4,
        vocab_size=VOCAB,
        compute_dtype="float32",
        layernorm_compute_type="float32",
        softmax_compute_type="float32",
        rotary_dtype="float32",
        param_init_type="float32",
        use_flash_attention=False,
        fused_rms_norm=False,
        use_rope_slice=True,
        parallel_config=parallel,
    )
    return LlamaForCausalLM(config)


def load(net, path, noise=None):
    weights = np.load(path)
    rng = np.random.default_rng(noise) if noise is not None else None
    for p in net.get_parameters():
        w = weights[p.name]
        if rng is not None:
            w = (w * (1 + 1e-6 * rng.standard_normal(w.shape))).astype(w.dtype)
        p.set_data(Tensor(w))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--lr", type=float, default=0.5)
    parser.add_argument("--no-recompute", action="store_true")
    parser.add_argument("--select-only", action="store_true")
    parser.add_argument("--init", default=None)
    parser.add_argument("--save-init", default=None)
    parser.add_argument("--noise", type=int, default=None)
    parser.add_argument("--out", default=None)
    parser.add_argument("--grads", default=None, help="write step 1's gradients and the final weights (.npz)")
    parser.add_argument("--reverse-batch", action="store_true")
    parser.add_argument("--recompute-config", default=None, help="TransformerRecomputeConfig keys as JSON")
    args = parser.parse_args()

    ms.set_context(mode=ms.PYNATIVE_MODE)
    ms.set_seed(0)
    recompute = not (args.no_recompute or args.select_only)
    keys = json.loads(args.recompute_config) if args.recompute_config else None
    net = build(recompute, select=not args.no_recompute, keys=keys)
    if args.save_init:
        np.savez(args.save_init, **{p.name: p.asnumpy() for p in net.get_parameters()})
    if args.init:
        load(net, args.init, args.noise)
    net.set_train(True)
    optimizer = nn.SGD(net.trainable_params(), learning_rate=args.lr)
    grad_fn = ms.value_and_grad(net, None, optimizer.parameters)

    rng = np.random.default_rng(0)
    losses = []
    first_grads = {}
    for step in range(args.steps):
        tokens = rng.integers(1, VOCAB, (BATCH, SEQ + 1)).astype(np.int32)
        tokens = Tensor(tokens[::-1].copy() if args.reverse_batch else tokens)
        loss, grads = grad_fn(tokens)
        if step == 0:
            first_grads = {"grad/" + p.name: g.asnumpy().copy() for p, g in zip(optimizer.parameters, grads)}
        optimizer(grads)
        losses.append(float(loss.asnumpy()))
        print(f"step {step}: loss {losses[-1]:.6f}")
    if args.out:
        params = [[p.name, list(p.shape)] for p in net.get_parameters()]
        with open(args.out, "w") as f:
            json.dump({"losses": losses, "params": params}, f)
    if args.grads:
        weights = {"param/" + p.name: p.asnumpy() for p in net.get_parameters()}
        np.savez(args.grads, **first_grads, **weights)


if __name__ == "__main__":
    main()
