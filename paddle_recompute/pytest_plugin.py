"""pytest plugin (entry point ``pytest11``): the ``loss_parity`` fixture.

Installed with the package, so a user's test suite can write::

    def test_my_model_recomputes_exactly(loss_parity):
        loss_parity(build_model, train_step, steps=3)

Paddle is imported only when a test asks for the fixture.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest


@pytest.fixture
def loss_parity() -> Callable[..., None]:
    """:func:`paddle_recompute.testing.assert_loss_parity`, ready to call.

    Signature: ``loss_parity(build_model, train_step, *, steps=5, seed=0,
    recompute_plan=None, rtol=0, atol=0)``; a mismatch fails the test with a
    numpy.testing-style report (mismatched count, largest difference and where).
    """
    from .testing import assert_loss_parity

    return assert_loss_parity
