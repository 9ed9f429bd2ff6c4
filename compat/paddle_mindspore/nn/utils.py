"""``mindspore.nn.utils``: ``no_init_parameters`` (delayed parameter initialisation) is not
provided; it raises ``MissingAPIError`` when used (see ``_unprovided.py``)."""

from .._unprovided import unprovided_function

__all__ = ["no_init_parameters"]

no_init_parameters = unprovided_function("mindspore.nn.utils.no_init_parameters")
