"""``mindspore.communication``: the process group queries of one process; ``init`` raises."""

from .management import (
    GlobalComm,
    create_group,
    destroy_group,
    get_group_size,
    get_local_rank,
    get_rank,
    init,
    release,
)

__all__ = ["GlobalComm", "init", "release", "get_rank", "get_group_size", "get_local_rank",
           "create_group", "destroy_group"]
