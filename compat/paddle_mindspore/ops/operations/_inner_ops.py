"""``mindspore.ops.operations._inner_ops``: inner primitives (``SiLU``, the same class as
``ops.operations.SiLU``)."""

from .._llm_primitives import SiLU

__all__ = ["SiLU"]
