"""A ResNet (Paddle's own ``paddle.vision.models.resnet18``) trained with recompute.

What it shows: the model is not modified; its residual stages (``layer1`` ... ``layer4``)
are wrapped in a layer that runs them through ``recompute``.  BatchNorm inside a
recomputed stage updates its running statistics once, as without recompute.  The example
trains three times from the same seed on one fixed batch of random images and labels
(which the network learns, so the loss falls): without recompute, with reentrant and with
non-reentrant recompute, and asserts that the losses and the final running statistics are
bit-for-bit identical.

    python examples/resnet.py [--steps 5 --batch 8 --image 32 --stages layer1,layer2,layer3,layer4]

Output: one line per step with the loss of each run (falling, and equal across the three
columns), then a line saying how many BatchNorm running statistics were compared.  Any
difference stops the run with an ``AssertionError``.
"""

from __future__ import annotations

import argparse

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle import nn
from paddle.vision.models import resnet18

from paddle_recompute import recompute


class Recomputed(nn.Layer):
    """Runs ``inner`` through ``recompute``: its activations are rebuilt in backward."""

    def __init__(self, inner: nn.Layer, use_reentrant: bool):
        super().__init__()
        self.inner, self.use_reentrant = inner, use_reentrant

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        return recompute(self.inner, x, use_reentrant=self.use_reentrant)


def build(stages: list[str], use_reentrant: bool) -> nn.Layer:
    """resnet18 from seed 0 with the named stages recomputed."""
    paddle.seed(0)
    model = resnet18(num_classes=10)
    for name in stages:
        setattr(model, name, Recomputed(getattr(model, name), use_reentrant))
    return model


def train(model: nn.Layer, steps: int, batch: int, image: int) -> tuple[list[float], dict]:
    """Momentum SGD on one fixed batch; the losses and the final BatchNorm statistics."""
    optimizer = paddle.optimizer.Momentum(0.01, momentum=0.9, parameters=model.parameters())
    rng = np.random.default_rng(0)  # one batch, reused every step: the network can fit it
    images = paddle.to_tensor(rng.standard_normal((batch, 3, image, image)).astype("float32"))
    labels = paddle.to_tensor(rng.integers(0, 10, (batch,)))
    losses = []
    for _ in range(steps):
        loss = F.cross_entropy(model(images), labels)
        loss.backward()
        optimizer.step()
        optimizer.clear_grad()
        losses.append(float(loss))
    stats = {name.replace("inner.", ""): p.numpy() for name, p in model.named_parameters()
             if name.endswith(("_mean", "_variance"))}
    return losses, stats


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--image", type=int, default=32)
    parser.add_argument("--stages", default="layer1,layer2,layer3,layer4")
    args = parser.parse_args(argv)
    stages = [s for s in args.stages.split(",") if s]
    reference, ref_stats = train(build([], True), args.steps, args.batch, args.image)
    runs = {}
    for use_reentrant in (True, False):
        losses, stats = train(build(stages, use_reentrant), args.steps, args.batch, args.image)
        np.testing.assert_array_equal(losses, reference)
        for name, value in ref_stats.items():
            np.testing.assert_array_equal(stats[name], value, err_msg=name)
        runs[use_reentrant] = losses
    for step, loss in enumerate(reference):
        print(f"step {step}  loss {loss:.6f} without recompute, {runs[True][step]:.6f} reentrant, "
              f"{runs[False][step]:.6f} non-reentrant")
    print(f"recomputing {', '.join(stages)}: losses and {len(ref_stats)} BatchNorm running statistics "
          "are bit-for-bit identical")


if __name__ == "__main__":
    main()
