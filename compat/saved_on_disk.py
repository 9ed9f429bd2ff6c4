"""Tensors saved for backward wait in files until backward: a run without recompute, in less memory.

compat/zoo.py checks each model's recompute against a run without recompute here. For
cait_m48_448 (356M parameters, 784 tokens at the 448 pixels its position table fixes) that run
would hold its saved activations, estimated at 17-22 GB at batch 2, beside the 6.9 GB its check
holds without them: more than the 23 GB machine has. (The estimate: on cait_xs24_384 these hooks
took the check's anonymous memory from 3.0 GB to 0.85 GB; cait_m48_448 has 2.7 times its heads
and width, 1.36 times its tokens and twice its blocks: 8 to 10 times the activations.)

Inside ``saved_on_disk()``, every tensor autograd saves (parameters aside: they stay alive
anyway) goes to a file when saved and comes back from it when backward needs it. Backward reads
the same bytes, in the same layout, so the arithmetic is that of an ordinary run without
recompute; only where the saved values wait changes (what ``paddle_recompute.save_on_cpu`` does
with host memory).

NOTE [ Mapped back ]: ``paddle.grad`` (what the layer's ``value_and_grad`` calls) keeps every
saved tensor backward has read until the whole backward ends; ``Tensor.backward`` lets each go
once its node has run. Read back into memory, the saved tensors would all be in memory again by
the end of ``paddle.grad``: on 40 tanh(Linear(512)) layers at batch 256, its allocator peak was
63.5 MB without these hooks (42 MB of gradients, 21 MB of activations) and 85.0 MB with the
files read back. So each comes back as the file's pages (``np.memmap``, copy-on-write, handed
to Paddle through DLPack without a copy): clean file pages, which the kernel can drop and read
again, not memory of the process's own (the peak: 42.5 MB, the gradients).
compat/tests/test_ms_zoo_saved_on_disk.py asserts it.

The hooks are ``paddle_recompute.saved_tensors_hooks``: the pair that composes with the
library's other users of Paddle's one hook slot.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import weakref
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import paddle

import paddle_recompute


class _Kept:
    """A saved tensor left in memory (a parameter, or a tensor without storage)."""

    __slots__ = ("tensor",)

    def __init__(self, tensor):
        self.tensor = tensor


# numpy has no bfloat16 (Paddle's numpy() gives uint16, for which Paddle has no kernels): its
# bytes are mapped back as int16 and viewed as bfloat16
_STAND_INS = {paddle.bfloat16: np.int16}


class _InFile:
    """A saved tensor's storage in a file, with what gives the tensor back: dtype, place,
    ``stop_gradient`` and its view (shape, strides and offset into the storage).

    A view is kept as its whole storage and viewed again on the way back: Paddle 3.3's backward
    applies a saved view's strides and offset to whatever the unpack hook returns
    (NOTE [ Strided copies ] in paddle_recompute/_core/offload.py)."""

    __slots__ = ("path", "dtype", "numpy_dtype", "place", "stop_gradient", "view", "__weakref__")

    def __init__(self, tensor, path: Path):
        with paddle.no_grad():
            storage = paddle.as_strided(tensor, [tensor._holder_size() // tensor.element_size()], [1], 0)
            values = storage.numpy()
        values.tofile(path)
        self.path, self.dtype = path, tensor.dtype
        self.numpy_dtype = _STAND_INS.get(tensor.dtype, values.dtype)
        self.place, self.stop_gradient = tensor.place, tensor.stop_gradient
        self.view = (list(tensor.shape), tensor.get_strides(), tensor._offset())
        weakref.finalize(self, _remove, path)  # the file goes with the graph that saved it

    def unpack(self):
        # the file's pages themselves, not a copy (NOTE [ Mapped back ])
        storage = paddle.utils.dlpack.from_dlpack(np.memmap(self.path, dtype=self.numpy_dtype, mode="c"))
        if storage.dtype != self.dtype:
            storage = storage.view(self.dtype)
        if not self.place.is_cpu_place():
            storage = storage._copy_to(self.place, True)
        with paddle.no_grad():
            out = paddle.as_strided(storage, *self.view)
        out.stop_gradient = self.stop_gradient
        return out


def _remove(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):  # gone with its directory, if the graph outlived it
        os.remove(path)


class Files:
    """The pack and unpack hooks, and what they wrote (``count``, ``nbytes``)."""

    def __init__(self, directory: Path):
        self.directory = directory
        self.count = 0
        self.nbytes = 0

    def pack(self, tensor):
        if tensor.persistable or not tensor._is_initialized() or tensor._holder_size() == 0:
            return _Kept(tensor)
        self.count += 1
        packed = _InFile(tensor, self.directory / f"{self.count}.bin")
        self.nbytes += tensor._holder_size()
        return packed

    @staticmethod
    def unpack(packed):
        return packed.tensor if isinstance(packed, _Kept) else packed.unpack()


@contextlib.contextmanager
def saved_on_disk(parent: str | None = None) -> Iterator[Files]:
    """Keep the tensors autograd saves in the body in files of a new temporary directory (under
    ``parent``, or the system's), until backward reads them. Backward must run inside the body:
    the directory goes when it ends. Yields the ``Files`` (what was written)."""
    with tempfile.TemporaryDirectory(prefix="saved_on_disk_", dir=parent) as directory:
        files = Files(Path(directory))
        with paddle_recompute.saved_tensors_hooks(files.pack, files.unpack):
            yield files
