"""``mindspore.mint.distributed``: collective communication (not provided: one device).

Each name raises ``MissingAPIError`` when used; see ``_unprovided.py``.
"""

from ..._unprovided import unprovided_function

__all__ = [
    "all_gather_object",
    "all_reduce",
    "all_to_all_single",
    "barrier",
    "gather_object",
    "scatter_object_list",
    "get_rank",
    "get_world_size",
    "init_process_group",
]

all_gather_object = unprovided_function("mindspore.mint.distributed.all_gather_object")
all_reduce = unprovided_function("mindspore.mint.distributed.all_reduce")
all_to_all_single = unprovided_function("mindspore.mint.distributed.all_to_all_single")
barrier = unprovided_function("mindspore.mint.distributed.barrier")
gather_object = unprovided_function("mindspore.mint.distributed.gather_object")
scatter_object_list = unprovided_function("mindspore.mint.distributed.scatter_object_list")
get_rank = unprovided_function("mindspore.mint.distributed.get_rank")
get_world_size = unprovided_function("mindspore.mint.distributed.get_world_size")
init_process_group = unprovided_function("mindspore.mint.distributed.init_process_group")
