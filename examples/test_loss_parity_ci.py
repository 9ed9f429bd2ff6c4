"""A loss-parity test to put in your CI: the ``loss_parity`` pytest fixture.

What it shows: a test file as a user adds it to their own suite.  The ``loss_parity``
fixture comes with the package (a ``pytest11`` entry point): no conftest, no import of the
fixture.  It trains the model twice from the same seed, without and with recompute, and
fails the test if any loss, any gradient of any step, or any final parameter or buffer
differs, bit for bit, with a ``numpy.testing``-style report naming the entry.  The model
is Paddle's own ``paddle.nn.TransformerEncoder`` (dropout on); ``recompute_sublayers`` routes
its encoder layers through ``recompute`` without editing it.  The test also checks that the
model learns its fixed batch: parity of a model that does not train would prove little.

    python -m pytest -q examples/test_loss_parity_ci.py        # as in CI
    python -m pytest -q -s examples/test_loss_parity_ci.py     # also print the losses

Output: pytest's summary, ``2 passed`` (reentrant and non-reentrant recompute).  With
``-s`` each test prints one line per step with the loss of the recompute run (falling).
"""

import functools

import numpy as np
import paddle
import pytest

from paddle_recompute.testing import recompute_sublayers

STEPS = 5


class Classifier(paddle.nn.Layer):
    """Paddle's TransformerEncoder over a sequence, mean-pooled, then a linear head."""

    def __init__(self, width=16, layers=2, classes=4):
        super().__init__()
        layer = paddle.nn.TransformerEncoderLayer(width, nhead=2, dim_feedforward=2 * width, dropout=0.1)
        self.encoder = paddle.nn.TransformerEncoder(layer, layers)
        self.head = paddle.nn.Linear(width, classes)

    def forward(self, x):
        return self.head(self.encoder(x).mean(axis=1))


def build_model(use_recompute):
    """The fixture calls this twice: ``use_recompute`` False, then True (here the plan adds it)."""
    model = Classifier()
    return model, paddle.optimizer.AdamW(1e-2, parameters=model.parameters())


def fixed_batch():
    """One batch, reused every step: the model can fit it."""
    rng = np.random.default_rng(0)
    x = paddle.to_tensor(rng.standard_normal((8, 6, 16)).astype("float32"))
    return x, paddle.to_tensor(rng.integers(0, 4, (8,)))


@pytest.mark.parametrize("use_reentrant", [True, False], ids=["reentrant", "non_reentrant"])
def test_recompute_changes_nothing(loss_parity, use_reentrant):
    x, y = fixed_batch()
    losses = []

    def train_step(model, optimizer, step):  # forward and backward; the fixture steps the optimizer
        loss = paddle.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        losses.append(float(loss))
        return loss

    plan = functools.partial(recompute_sublayers, names=["encoder.layers.0", "encoder.layers.1"],
                             use_reentrant=use_reentrant)
    loss_parity(build_model, train_step, steps=STEPS, recompute_plan=plan)

    recomputed = losses[STEPS:]  # the fixture ran without recompute first, then with it
    print(f"\nwith recompute (use_reentrant={use_reentrant}), equal to without:")
    for step, loss in enumerate(recomputed):
        print(f"step {step}  loss {loss:.6f}")
    assert recomputed[-1] < recomputed[0], recomputed  # it learned: the parity is not vacuous
