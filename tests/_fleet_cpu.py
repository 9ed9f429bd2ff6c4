"""Test-only process setup that lets fleet tensor and pipeline parallel run on CPU (gloo).

Paddle 3.3.1's CPU build falls short in three places; each worker process fixes them for
itself (never the library, never the test process):

- fleet calls the ``*_on_calc_stream`` collectives of the process group, which gloo does not
  implement: each becomes gloo's ordinary call (``sync_op=True``) plus ``wait()``;
- ``c_identity`` (ColumnParallelLinear's input op) has no CPU kernel: it becomes a copy
  (``assign``); an alias of the input would break under recompute, where the op's output
  must be a tensor of its own;
- ``ParallelEnv._device_id`` is never set on CPU builds: it becomes 0.
"""

from __future__ import annotations

import paddle
from paddle import _C_ops
from paddle.base import core


def _waited(task):
    task.wait()
    return task


def _all_reduce(group, tensor, op=core.ReduceOp.SUM):
    return _waited(group.all_reduce(tensor, op, True))


def _all_gather_into_tensor(group, out, tensor):
    return _waited(group.all_gather_into_tensor(out, tensor, True))


def _broadcast(group, tensor, src):
    return _waited(group.broadcast(tensor, src, True))


def _send(group, tensor, dst):
    return _waited(group.send(tensor, dst, True))


def _recv(group, tensor, src):
    return _waited(group.recv(tensor, src, True))


def _c_identity(tensor, ring_id, use_calc_stream, use_model_parallel):
    return paddle.assign(tensor)


def install() -> None:
    """Apply the three fixes in this process (call before ``fleet.init``)."""
    gloo = core.ProcessGroupGloo
    gloo.all_reduce_on_calc_stream = _all_reduce
    gloo.all_gather_into_tensor_on_calc_stream = _all_gather_into_tensor
    gloo.broadcast_on_calc_stream = _broadcast
    gloo.send_on_calc_stream = _send
    gloo.recv_on_calc_stream = _recv
    _C_ops.c_identity = _c_identity
    from paddle.distributed.parallel import ParallelEnv

    ParallelEnv._device_id = 0


def init_fleet(**degrees) -> object:
    """``fleet.init`` with the given hybrid degrees (others 1); returns the hybrid group."""
    from paddle.distributed import fleet

    install()
    strategy = fleet.DistributedStrategy()
    configs = {"dp_degree": 1, "mp_degree": 1, "pp_degree": 1, "sharding_degree": 1}
    configs.update(degrees)
    strategy.hybrid_configs = configs
    if configs["pp_degree"] > 1:
        strategy.pipeline_configs = {"accumulate_steps": 2, "micro_batch_size": 2}
    fleet.init(is_collective=True, strategy=strategy)
    return fleet.get_hybrid_communicate_group()
