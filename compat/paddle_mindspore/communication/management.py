"""``mindspore.communication.management``: rank and group size from ``paddle.distributed``.

Scripts import these at the top and use them only when asked to train distributed (mindcv's
train.py: ``if args.distribute: init(); get_rank(), get_group_size()``). The queries answer
for the world group as MindSpore does without ``init`` (rank 0 of 1, recorded). ``init`` raises:
the layer has no distributed training (MindSpore raises too when not launched by ``mpirun``).
"""

from __future__ import annotations

import paddle

from .._validate import not_provided

__all__ = ["GlobalComm", "init", "release", "get_rank", "get_group_size", "get_local_rank", "create_group",
           "destroy_group"]


class GlobalComm:
    """The world group's names (``GlobalComm.WORLD_COMM_GROUP``)."""

    BACKEND = "hccl"
    WORLD_COMM_GROUP = "hccl_world_group"


def _check_world(api: str, group: str) -> None:
    if group not in (GlobalComm.WORLD_COMM_GROUP, "nccl_world_group"):
        raise not_provided(f"mindspore.communication.{api}(group={group!r})",
                           "only the world group is provided")


def get_rank(group: str = GlobalComm.WORLD_COMM_GROUP) -> int:
    """This process's rank in ``paddle.distributed`` (0 in a single process)."""
    _check_world("get_rank", group)
    return paddle.distributed.get_rank()


def get_local_rank(group: str = GlobalComm.WORLD_COMM_GROUP) -> int:
    """The rank on this machine; the layer runs on one machine, so the rank itself."""
    _check_world("get_local_rank", group)
    return paddle.distributed.get_rank()


def get_group_size(group: str = GlobalComm.WORLD_COMM_GROUP) -> int:
    """The number of processes in ``paddle.distributed`` (1 in a single process)."""
    _check_world("get_group_size", group)
    return paddle.distributed.get_world_size()


def init(backend_name: str | None = None) -> None:
    """Raises: distributed training (``set_auto_parallel_context(parallel_mode=...)``, gradient
    reduction across processes) is not provided."""
    raise not_provided("mindspore.communication.init",
                       "distributed training is not provided; train in one process "
                       "(mindcv's train.py: --distribute False)")


def release() -> None:
    """Raises, as :func:`init` does: there is no communication to release."""
    raise not_provided("mindspore.communication.release", "distributed training is not provided")


def create_group(group: str, rank_ids: list, options: object = None) -> None:
    """Raises: a group of devices needs ``init``, which is not provided (MindSpore raises too
    when ``init`` has not run)."""
    raise not_provided("mindspore.communication.create_group", "distributed training is not provided")


def destroy_group(group: str) -> None:
    """Raises, as :func:`create_group` does."""
    raise not_provided("mindspore.communication.destroy_group", "distributed training is not provided")
