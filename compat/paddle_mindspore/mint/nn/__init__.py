"""``mindspore.mint.nn``: only its ``functional`` namespace (what mindformers uses)."""

from ..._validate import missing as _missing
from . import functional

__all__ = ["functional"]


def __getattr__(name: str):
    raise _missing("mindspore.mint.nn", name)
