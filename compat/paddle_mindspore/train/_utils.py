"""``mindspore.train._utils``: parameter redundancy across devices (not provided).

Each name raises ``MissingAPIError`` when used; see ``_unprovided.py``.
"""

from .._unprovided import unprovided_function

__all__ = ["get_parameter_redundancy", "remove_param_redundancy"]

get_parameter_redundancy = unprovided_function("mindspore.train._utils.get_parameter_redundancy")
remove_param_redundancy = unprovided_function("mindspore.train._utils.remove_param_redundancy")
