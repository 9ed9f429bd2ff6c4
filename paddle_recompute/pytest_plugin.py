"""pytest plugin (entry point ``pytest11``): the ``loss_parity`` fixture.

Installed with the package, so a user's test suite can write::

    def test_my_model_recomputes_exactly(loss_parity):
        loss_parity(build_model, train_step, steps=3)

Paddle is imported only when a test asks for the fixture.
"""

from __future__ import annotations

import pytest


@pytest.fixture
def loss_parity():
    """:func:`paddle_recompute.testing.assert_loss_parity`, ready to call."""
    from paddle_recompute.testing import assert_loss_parity

    return assert_loss_parity
