"""``mindspore.ops._grad_experimental.grad_comm_ops``: gradient norms across devices (not provided).

Each name raises ``MissingAPIError`` when used; see ``_unprovided.py``.
"""

from ..._unprovided import unprovided_function

__all__ = ["get_squared_device_local_norm_param"]

get_squared_device_local_norm_param = unprovided_function(
    "mindspore.ops._grad_experimental.grad_comm_ops.get_squared_device_local_norm_param"
)
