"""Keep 1/n of a recomputed region's input on each of n model-parallel ranks.

NOTE [ Partitioned inputs ]: under tensor parallelism every rank of the model-parallel
group holds the same region input (the hidden states entering a block).  With
``partition`` each rank keeps only its slice of the flattened input between forward and
backward, and the group all-gathers the slices back before the recomputation.  A numel not
divisible by the group size is padded with zeros to the next multiple (the padding is
dropped after the gather); empty tensors are kept whole.  The gather is a copy, so the
recomputation sees the input bit for bit.  It uses the group's ordinary ``all_gather``
(not the ``*_on_calc_stream`` variants, which gloo lacks), so it runs on CPU as on GPU.
Every rank of the group must run the same backward: the gather is a collective.
"""

from __future__ import annotations

import paddle
import paddle.distributed as dist

from .._core.offload import HostCopy, Stash, path_marker, to_host, to_place

__all__ = ["Shard", "stasher"]


class Shard(Stash):
    """This rank's slice of one flattened, zero-padded input; a stash (NOTE [ Stashed
    inputs ] in ``_core/reentrant.py``) restored by an all-gather over ``group``."""

    __slots__ = ("part", "place", "shape", "numel", "group", "stop_gradient")

    def __init__(self, t: paddle.Tensor, group, offload: bool):
        self.marker = path_marker(t)
        self.stop_gradient = t.stop_gradient
        self.shape = list(t.shape)
        self.numel = t._numel()
        self.group = group
        n = group.nranks
        size = -(-self.numel // n)  # ceil
        flat = t.detach().flatten()
        if size * n != self.numel:
            flat = paddle.concat([flat, paddle.zeros([size * n - self.numel], dtype=flat.dtype)])
        start = size * group.rank
        part = flat[start:start + size].clone()  # its own buffer: the input can be freed
        self.place = None
        if offload:
            part, self.place = to_host(part)
        self.part = part

    def restore(self) -> paddle.Tensor:
        part = self.part if self.place is None else to_place(self.part, self.place)
        gathered = paddle.empty([part.shape[0] * self.group.nranks], dtype=part.dtype)
        dist.stream.all_gather(gathered, part, group=self.group, sync_op=True,
                               use_calc_stream=False)
        out = gathered[:self.numel].reshape(self.shape)
        out.stop_gradient = self.stop_gradient
        return out

    @property
    def nbytes(self) -> int:
        """Bytes this stash holds (the slice, padding included)."""
        return self.part._numel() * self.part.element_size()


def stasher(group, offload: bool, partition: bool):
    """What ``recompute_hybrid`` keeps of each input: a ``run_reentrant`` ``stash``, or None
    to keep the inputs themselves."""
    if partition and group.nranks > 1:
        def shard(t):
            if t._numel() == 0:
                return HostCopy.of(t) if offload else t
            return Shard(t, group, offload)

        return shard
    if offload:
        return HostCopy.of
    return None
