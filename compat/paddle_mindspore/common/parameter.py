"""``mindspore.common.parameter``: the module that defines ``Parameter`` and ``ParameterTuple``."""

from .._tensor import Parameter, ParameterTuple

__all__ = ["Parameter", "ParameterTuple"]
