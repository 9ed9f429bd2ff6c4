"""``mindspore.ops.operations.nn_ops``: the neural-network primitives.

``FlashAttentionScore`` is Ascend's fused attention kernel: not provided (it raises when
constructed; mindformers models run without it with ``use_flash_attention=False``).
"""

from ..._unprovided import unprovided_class
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

FlashAttentionScore = unprovided_class("mindspore.ops.operations.nn_ops.FlashAttentionScore")
