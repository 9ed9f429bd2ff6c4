"""Port MindSpore training code to Paddle without editing it: the MindSpore runner.

What it shows: this file is MindSpore code as a MindSpore user writes it (``import
mindspore``, ``nn.Cell`` with ``construct``, ``block.recompute()``, ``value_and_grad``,
``nn.Adam``); it does not import Paddle or this library.  Started through the runner, every
``import mindspore`` resolves to ``paddle_mindspore``, so it trains on PaddlePaddle
with MindSpore's recompute calls intact.  The network (residual blocks with dropout, each
block marked ``.recompute()``) learns one fixed batch, so the loss falls.  It trains twice
from the same seed, with and without ``.recompute()``, and asserts the losses are
bit-for-bit equal.

    paddle-mindspore examples/mindspore_port.py [--steps 5 --blocks 4 --width 32]

To port the file for good instead, change its import lines to
``import paddle_mindspore as mindspore`` and
``from paddle_mindspore import nn, Tensor``.

Output: one line per step with the loss with ``.recompute()`` and without (falling,
equal), then a line saying they are bit-for-bit equal.  With plain ``python`` (no runner)
the same file runs on real MindSpore where it is installed (checked with MindSpore 2.10:
losses fall and are equal too, with other values, as MindSpore initialises differently).
"""

import argparse

import mindspore
import numpy as np
from mindspore import Tensor, nn


class Block(nn.Cell):
    """Pre-LayerNorm residual feed-forward block: x + Dropout(Dense(GELU(Dense(LayerNorm(x)))))."""

    def __init__(self, width):
        super().__init__()
        self.norm = nn.LayerNorm((width,))
        self.up = nn.Dense(width, 4 * width)
        self.act = nn.GELU()
        self.down = nn.Dense(4 * width, width)
        self.drop = nn.Dropout(p=0.1)

    def construct(self, x):
        return x + self.drop(self.down(self.act(self.up(self.norm(x)))))


class Net(nn.Cell):
    """``blocks`` residual blocks, each recomputed in backward when ``recompute`` is set."""

    def __init__(self, width, blocks, classes, recompute):
        super().__init__()
        self.blocks = nn.CellList([Block(width) for _ in range(blocks)])
        if recompute:
            for block in self.blocks:
                block.recompute()
        self.head = nn.Dense(width, classes)

    def construct(self, x):
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def train(args, recompute):
    """Adam on one fixed batch from seed 0; the loss of every step."""
    mindspore.set_seed(0)
    net = Net(args.width, args.blocks, args.classes, recompute)
    loss_fn = nn.CrossEntropyLoss()
    optimizer = nn.Adam(net.trainable_params(), learning_rate=1e-3)

    def forward_fn(data, label):
        return loss_fn(net(data), label)

    grad_fn = mindspore.value_and_grad(forward_fn, None, optimizer.parameters)
    rng = np.random.default_rng(0)  # one batch, reused every step: the network can fit it
    data = Tensor(rng.standard_normal((args.batch, args.width)).astype(np.float32))
    label = Tensor(rng.integers(0, args.classes, (args.batch,)).astype(np.int32))
    net.set_train()
    losses = []
    for _ in range(args.steps):
        loss, grads = grad_fn(data, label)
        optimizer(grads)
        losses.append(float(loss.asnumpy()))
    return losses


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--blocks", type=int, default=4)
    parser.add_argument("--width", type=int, default=32)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--classes", type=int, default=10)
    args = parser.parse_args()
    recomputed = train(args, recompute=True)
    plain = train(args, recompute=False)
    np.testing.assert_array_equal(recomputed, plain)
    for step, (loss, ref) in enumerate(zip(recomputed, plain, strict=True)):
        print(f"step {step}  loss {loss:.6f} with .recompute(), {ref:.6f} without")
    print("losses with .recompute() are bit-for-bit equal to training without it")


if __name__ == "__main__":
    main()
