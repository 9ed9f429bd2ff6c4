"""``mindspore.common.generator``: MindSpore's Generator objects (not provided; the layer's
seeds are Paddle's).

Each name raises ``MissingAPIError`` when used; see ``_unprovided.py``.
"""

from .._unprovided import unprovided_class

__all__ = ["Generator"]

Generator = unprovided_class("mindspore.common.generator.Generator")
