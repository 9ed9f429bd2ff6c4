"""``mindspore.boost``: ``GradientAccumulation`` (and ``grad_accumulation``'s graph functions);
any other name raises ``MissingAPIError``."""

from .._validate import missing as _missing
from . import grad_accumulation
from .grad_accumulation import GradientAccumulation

__all__ = ["GradientAccumulation", "grad_accumulation"]


def __getattr__(name: str):
    raise _missing("mindspore.boost", name)
