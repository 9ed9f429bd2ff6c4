"""``mindspore.dataset.transforms``: not provided; every name raises ``MissingAPIError``."""

from ..._validate import missing as _missing


def __getattr__(name: str):
    raise _missing("mindspore.dataset.transforms", name)
