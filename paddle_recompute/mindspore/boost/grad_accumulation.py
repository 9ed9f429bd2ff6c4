"""``mindspore.boost.grad_accumulation``: not provided; the two graph functions model-zoo code
imports at load time raise ``MissingAPIError`` when called."""

from .._validate import missing as _missing
from .._validate import unprovided as _unprovided

gradient_accumulation_op = _unprovided("mindspore.boost.grad_accumulation", "gradient_accumulation_op")
gradient_clear_op = _unprovided("mindspore.boost.grad_accumulation", "gradient_clear_op")

__all__ = ["gradient_accumulation_op", "gradient_clear_op"]


def __getattr__(name: str):
    raise _missing("mindspore.boost.grad_accumulation", name)
