"""``mindspore.common.tensor``: the module that defines ``Tensor``."""

from .._tensor import Tensor

__all__ = ["Tensor"]
