"""``mindspore.common.generator``: a random-number generator's state, a seed and an offset.

``Generator()`` starts at seed 0, offset 0, as MindSpore's; ``manual_seed`` sets the seed (and
resets the offset); ``_step(step)`` returns the current ``(seed, offset)`` as int64 tensors and
advances the offset by ``step`` (what mindformers' training-graph ``Dropout`` takes at build
time for ``DropoutExt``). The layer's own random draws use Paddle's generator (``set_seed``),
not these numbers; ``seed()``, ``get_state`` and ``set_state`` raise.
"""

from __future__ import annotations

from typing import Any

import paddle

from .._validate import not_provided

__all__ = ["Generator"]


class Generator:
    """A seed and an offset (see the module docstring).

    Example:
        >>> from paddle_mindspore.common.generator import Generator
        >>> seed, offset = Generator()._step(1)
    """

    def __init__(self) -> None:
        self._seed = 0
        self._offset = 0

    def manual_seed(self, seed: int) -> Generator:
        """Set the seed; the offset starts again at 0. Returns ``self``.

        Raises:
            TypeError: ``seed`` is not an int (MindSpore's text).
        """
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise TypeError("Seed must be an integer.")
        self._seed, self._offset = seed, 0
        return self

    def initial_seed(self) -> int:
        """The seed."""
        return self._seed

    def _step(self, step: Any) -> tuple[paddle.Tensor, paddle.Tensor]:
        """The current ``(seed, offset)`` (int64 tensors); the offset then grows by ``step``."""
        current = (paddle.to_tensor(self._seed, "int64"), paddle.to_tensor(self._offset, "int64"))
        self._offset += int(step.item() if isinstance(step, paddle.Tensor) else step)
        return current

    def seed(self) -> int:
        raise not_provided("mindspore.common.generator.Generator.seed", "use manual_seed")

    def get_state(self) -> Any:
        raise not_provided("mindspore.common.generator.Generator.get_state")

    def set_state(self, state: Any) -> None:
        raise not_provided("mindspore.common.generator.Generator.set_state")
