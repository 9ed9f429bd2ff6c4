"""What the live-saves frame of a recorded forward costs a training step (NOTE [ A record read
after its weights moved ] in ``compat/paddle_mindspore/_forward_reuse.py``).

A training cell written as mindcv's ``TrainStep`` (the network's forward, then ``GradOperation``
over it on the same inputs) has its forward recorded, saving its tensors through the frame, and
reused by the transform. This times one such step of a 12-block Dense/BatchNorm/ReLU network
with the frame and with it switched off, interleaved in one process, and counts the tensors the
frame saved (so the frame is known to have run):

    paddle-mindspore compat/measure_forward_reuse.py
"""

import contextlib
import time

import mindspore as ms
import numpy as np
from mindspore import _forward_reuse, nn

ROUNDS, STEPS = 30, 5


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        blocks = [nn.SequentialCell(nn.Dense(256, 256), nn.BatchNorm1d(256), nn.ReLU()) for _ in range(12)]
        self.body = nn.SequentialCell(*blocks)
        self.head = nn.Dense(256, 10)

    def construct(self, x):
        return self.head(self.body(x))


class Step(nn.TrainOneStepCell):
    """mindcv's ``TrainStep``: the loss from the network, then the gradients on the same inputs."""

    def construct(self, *inputs):
        loss = self.network(*inputs)
        grads = self.grad(self.network, self.weights)(*inputs, ms.ops.ones_like(loss))
        self.optimizer(grads)
        return loss


def main():
    net = nn.WithLossCell(Net(), nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"))
    step = Step(net, nn.Momentum(net.trainable_params(), 0.01, 0.9))
    step.set_train()
    x = ms.Tensor(np.random.default_rng(0).standard_normal((64, 256)).astype(np.float32))
    y = ms.Tensor(np.random.default_rng(1).integers(0, 10, 64).astype(np.int32))
    frame = _forward_reuse.pushed
    modes = {"frame": frame, "no frame": lambda _: contextlib.nullcontext()}
    saved = []
    pack = _forward_reuse._LiveSaves.pack
    _forward_reuse._LiveSaves.pack = lambda self, t: saved.append(1) or pack(self, t)
    step(x, y)
    _forward_reuse._LiveSaves.pack = pack
    print(f"the frame saved {len(saved)} tensors in one step")
    for _ in range(STEPS):
        step(x, y)
    times = {mode: [] for mode in modes}
    for _ in range(ROUNDS):
        for mode, push in modes.items():
            _forward_reuse.pushed = push
            start = time.perf_counter()
            for _ in range(STEPS):
                step(x, y)
            times[mode].append((time.perf_counter() - start) / STEPS)
    _forward_reuse.pushed = frame
    for mode, values in times.items():
        print(f"{mode:9} {1e3 * np.median(values):.1f} ms a step (median of {ROUNDS} rounds)")
    print(f"ratio {np.median(times['frame']) / np.median(times['no frame']):.3f}")


if __name__ == "__main__":
    main()
