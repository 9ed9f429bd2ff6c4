# ruff: noqa  (MindSpore model code as users write it, kept as is)
# compat/mindspore_originals/models/e_gpt_recompute.py is the original (run it unmodified with `paddle-mindspore`,
# or with real MindSpore 2.10); compat/e_gpt_recompute.py differs from it only in its import lines (mindspore -> paddle_mindspore).
"""A GPT-style language model trained a few steps with recomputation, written the way MindSpore users write one.

Token and position embeddings, pre-LayerNorm blocks with causal multi-head attention written with
``ops.matmul`` and Tensor methods, a GELU MLP, ``block.recompute()`` on every block, cross-entropy
loss, ``mindspore.value_and_grad`` and ``nn.AdamWeightDecay``. The batches are synthetic tokens.

    python e_gpt_recompute.py --steps 3
    python e_gpt_recompute.py --steps 3 --no-recompute --dropout 0.1
"""
import argparse
import math

import numpy as np
import paddle_mindspore as ms
from paddle_mindspore import nn, ops, Tensor


class CausalSelfAttention(nn.Cell):
    def __init__(self, n_embd, n_head, block_size, dropout):
        super().__init__()
        assert n_embd % n_head == 0
        self.n_head = n_head
        self.head_dim = n_embd // n_head
        self.c_attn = nn.Dense(n_embd, 3 * n_embd)
        self.c_proj = nn.Dense(n_embd, n_embd)
        self.attn_dropout = nn.Dropout(p=dropout)
        self.resid_dropout = nn.Dropout(p=dropout)
        self.scale = 1.0 / math.sqrt(self.head_dim)
        causal = np.tril(np.ones((block_size, block_size), dtype=np.float32))
        self.mask = Tensor(causal.reshape(1, 1, block_size, block_size))

    def construct(self, x):
        B, T, C = x.shape
        q, k, v = ops.split(self.c_attn(x), C, axis=2)
        q = q.view(B, T, self.n_head, self.head_dim).transpose(0, 2, 1, 3)
        k = k.view(B, T, self.n_head, self.head_dim).transpose(0, 2, 1, 3)
        v = v.view(B, T, self.n_head, self.head_dim).transpose(0, 2, 1, 3)
        att = ops.matmul(q, k.swapaxes(-2, -1)) * self.scale
        att = ops.masked_fill(att, self.mask[:, :, :T, :T] == 0, float("-inf"))
        att = ops.softmax(att, axis=-1)
        att = self.attn_dropout(att)
        y = ops.matmul(att, v)
        y = y.transpose(0, 2, 1, 3).reshape(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class MLP(nn.Cell):
    def __init__(self, n_embd, dropout):
        super().__init__()
        self.c_fc = nn.Dense(n_embd, 4 * n_embd)
        self.gelu = nn.GELU()
        self.c_proj = nn.Dense(4 * n_embd, n_embd)
        self.dropout = nn.Dropout(p=dropout)

    def construct(self, x):
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))


class Block(nn.Cell):
    def __init__(self, n_embd, n_head, block_size, dropout):
        super().__init__()
        self.ln_1 = nn.LayerNorm((n_embd,), epsilon=1e-5)
        self.attn = CausalSelfAttention(n_embd, n_head, block_size, dropout)
        self.ln_2 = nn.LayerNorm((n_embd,), epsilon=1e-5)
        self.mlp = MLP(n_embd, dropout)

    def construct(self, x):
        x = x + self.attn(self.ln_1(x))
        x = x + self.mlp(self.ln_2(x))
        return x


class GPT(nn.Cell):
    def __init__(self, vocab_size=64, block_size=16, n_layer=2, n_head=4, n_embd=32, dropout=0.0,
                 recompute=True):
        super().__init__()
        self.block_size = block_size
        self.wte = nn.Embedding(vocab_size, n_embd)
        self.wpe = nn.Embedding(block_size, n_embd)
        self.drop = nn.Dropout(p=dropout)
        self.blocks = nn.CellList([Block(n_embd, n_head, block_size, dropout) for _ in range(n_layer)])
        if recompute:
            for block in self.blocks:
                block.recompute()
        self.ln_f = nn.LayerNorm((n_embd,), epsilon=1e-5)
        self.lm_head = nn.Dense(n_embd, vocab_size, has_bias=False)

    def construct(self, idx):
        B, T = idx.shape
        pos = ops.arange(0, T, dtype=ms.int32)
        x = self.drop(self.wte(idx) + self.wpe(pos))
        for block in self.blocks:
            x = block(x)
        x = self.ln_f(x)
        return self.lm_head(x)


def make_batches(vocab_size, batch_size, block_size, count, seed=0):
    rng = np.random.RandomState(seed)
    batches = []
    for _ in range(count):
        tokens = rng.randint(0, vocab_size, size=(batch_size, block_size + 1)).astype(np.int32)
        batches.append((Tensor(tokens[:, :-1]), Tensor(tokens[:, 1:])))
    return batches


def load_weights(net, path):
    """Set every parameter from an .npz keyed by parameter name."""
    weights = np.load(path)
    for name, param in net.parameters_and_names():
        param.set_data(Tensor(weights[name]))


def train(net, batches, steps, lr=1e-3, weight_decay=0.01):
    loss_fn = nn.CrossEntropyLoss()
    optimizer = nn.AdamWeightDecay(net.trainable_params(), learning_rate=lr, weight_decay=weight_decay)

    def forward_fn(idx, targets):
        logits = net(idx)
        loss = loss_fn(logits.view(-1, logits.shape[-1]), targets.view(-1))
        return loss, logits

    grad_fn = ms.value_and_grad(forward_fn, None, optimizer.parameters, has_aux=True)
    net.set_train()
    losses = []
    for step in range(steps):
        idx, targets = batches[step % len(batches)]
        (loss, _), grads = grad_fn(idx, targets)
        optimizer(grads)
        losses.append(float(loss.asnumpy()))
        print(f"step {step}: loss {loss.asnumpy():.6f}")
    return losses


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--dropout", type=float, default=0.0)
    parser.add_argument("--no-recompute", action="store_true")
    parser.add_argument("--weights", default=None, help=".npz of initial parameters keyed by name")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    ms.set_seed(args.seed)
    net = GPT(dropout=args.dropout, recompute=not args.no_recompute)
    if args.weights:
        load_weights(net, args.weights)
    print("parameters:", sum(p.size for p in net.trainable_params()))
    batches = make_batches(64, args.batch_size, net.block_size, 2)
    train(net, batches, args.steps)


if __name__ == "__main__":
    main()
