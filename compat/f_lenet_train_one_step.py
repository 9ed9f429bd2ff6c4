# ruff: noqa  (MindSpore model code as users write it, kept as is)
# compat/mindspore_originals/models/f_lenet_train_one_step.py is the original (run it unmodified with `paddle-mindspore`,
# or with real MindSpore 2.10); compat/f_lenet_train_one_step.py differs from it only in its import lines (mindspore -> paddle_mindspore).
"""LeNet-5 with batch normalisation, trained with WithLossCell + TrainOneStepCell + Momentum, with recomputation.

The network of MindSpore's quick-start tutorial (two valid-padded 5x5 convolutions with ReLU and
2x2 max pooling, three Dense layers), with a BatchNorm2d after each convolution; each
convolution stage is a SequentialCell marked with ``.recompute()``. The batches are synthetic
32x32 single-channel images with 10 classes.

    python f_lenet_train_one_step.py --steps 3
    python f_lenet_train_one_step.py --steps 3 --no-recompute
"""
import argparse

import numpy as np
import paddle_mindspore as ms
from paddle_mindspore import nn, Tensor


class LeNet5(nn.Cell):
    def __init__(self, num_class=10, num_channel=1, recompute=True):
        super().__init__()
        self.stage1 = nn.SequentialCell([
            nn.Conv2d(num_channel, 6, 5, pad_mode="valid"),
            nn.BatchNorm2d(6),
            nn.ReLU(),
            nn.MaxPool2d(kernel_size=2, stride=2),
        ])
        self.stage2 = nn.SequentialCell([
            nn.Conv2d(6, 16, 5, pad_mode="valid"),
            nn.BatchNorm2d(16),
            nn.ReLU(),
            nn.MaxPool2d(kernel_size=2, stride=2),
        ])
        if recompute:
            self.stage1.recompute()
            self.stage2.recompute()
        self.flatten = nn.Flatten()
        self.fc1 = nn.Dense(16 * 5 * 5, 120)
        self.fc2 = nn.Dense(120, 84)
        self.fc3 = nn.Dense(84, num_class)
        self.relu = nn.ReLU()

    def construct(self, x):
        x = self.stage2(self.stage1(x))
        x = self.flatten(x)
        x = self.relu(self.fc1(x))
        x = self.relu(self.fc2(x))
        return self.fc3(x)


def make_batches(batch_size, count, seed=0):
    rng = np.random.RandomState(seed)
    batches = []
    for _ in range(count):
        images = rng.standard_normal((batch_size, 1, 32, 32)).astype(np.float32)
        labels = rng.randint(0, 10, size=(batch_size,)).astype(np.int32)
        batches.append((Tensor(images), Tensor(labels)))
    return batches


def load_weights(net, path):
    """Set every parameter (moving statistics included) from an .npz keyed by parameter name."""
    weights = np.load(path)
    for name, param in net.parameters_and_names():
        param.set_data(Tensor(weights[name]))


def train(net, batches, steps, lr=0.01, momentum=0.9):
    loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    optimizer = nn.Momentum(net.trainable_params(), learning_rate=lr, momentum=momentum)
    net_with_loss = nn.WithLossCell(net, loss_fn)
    train_net = nn.TrainOneStepCell(net_with_loss, optimizer)
    train_net.set_train()
    losses = []
    for step in range(steps):
        images, labels = batches[step % len(batches)]
        loss = train_net(images, labels)
        losses.append(float(loss.asnumpy()))
        print(f"step {step}: loss {loss.asnumpy():.6f}")
    return losses


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--no-recompute", action="store_true")
    parser.add_argument("--weights", default=None, help=".npz of initial parameters keyed by name")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    ms.set_seed(args.seed)
    net = LeNet5(recompute=not args.no_recompute)
    if args.weights:
        load_weights(net, args.weights)
    print("parameters:", sum(p.size for p in net.trainable_params()))
    train(net, make_batches(args.batch_size, 2), args.steps)


if __name__ == "__main__":
    main()
