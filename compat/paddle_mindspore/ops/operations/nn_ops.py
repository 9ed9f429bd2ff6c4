"""``mindspore.ops.operations.nn_ops``: the neural-network primitives.

``FlashAttentionScore`` is Ascend's fused attention kernel, computed unfused (see
``ops/_fused_primitives.py``).
"""

from .._fused_primitives import FlashAttentionScore
from .._nn import Conv2D, Conv2DTranspose, Dropout, ReLU, Sigmoid, Softmax, Tanh

__all__ = [
    "Conv2D",
    "Conv2DTranspose",
    "Dropout",
    "ReLU",
    "Sigmoid",
    "Softmax",
    "Tanh",
    "FlashAttentionScore",
]
