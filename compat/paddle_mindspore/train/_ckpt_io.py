"""Reading and writing MindSpore checkpoint files: ``.ckpt`` (protobuf) and ``.safetensors``.

Records are ``(name, value, type name)`` with ``value`` a numpy array (or a ``str``, which
MindSpore stores as a UTF-32 array with type ``'str'`` and dims ``[0]``). The byte layout is
MindSpore 2.10's: one ``Checkpoint`` message per record, tensors above 512 MiB split with
``np.array_split`` into messages of the same tag, an optional ``b"crc_num"`` + 10-byte
big-endian CRC-32 trailer; safetensors files carry the metadata ``{"format": "ms"}`` and
sorted keys. ``compat/tests/test_ms_checkpoint.py`` checks files written here byte for
byte against files real MindSpore wrote.
"""

from __future__ import annotations

import binascii
import math
import os
import stat
from collections.abc import Iterable

import numpy as np
from google.protobuf.message import DecodeError

from ._ckpt_proto import Checkpoint

__all__ = ["write_ckpt", "read_ckpt", "write_safetensors", "read_safetensors", "NUMPY_OF"]

SLICE_KB = 512 * 1024
CRC_MARK = b"crc_num"

NUMPY_OF = {
    "Int8": np.int8,
    "UInt8": np.uint8,
    "Int16": np.int16,
    "UInt16": np.uint16,
    "Int32": np.int32,
    "UInt32": np.uint32,
    "Int64": np.int64,
    "UInt64": np.uint64,
    "Float16": np.float16,
    "Float32": np.float32,
    "Float64": np.float64,
    "Bool": np.bool_,
    "BFloat16": np.uint16,
}

Record = tuple  # (name, np.ndarray | str, type name)


def _messages(name: str, value: np.ndarray | str, type_name: str) -> Iterable[bytes]:
    if isinstance(value, str):
        dims, pieces = [0], [np.array(value)]
    else:
        dims = list(value.shape)
        pieces = [value]
        if value.nbytes / 1024 > SLICE_KB:
            pieces = np.array_split(value, math.ceil(value.nbytes / 1024 / SLICE_KB))
    for piece in pieces:
        message = Checkpoint()
        item = message.value.add()
        item.tag = name
        item.tensor.dims.extend(dims)
        item.tensor.tensor_type = type_name
        item.tensor.tensor_content = np.ascontiguousarray(piece).tobytes()
        yield message.SerializeToString()


def _replace(path: str, payload: bytes) -> None:
    """Write as MindSpore does: via a temporary file, then read-only for the owner."""
    tmp = os.path.splitext(path)[0] + ".tmp"
    for old in (path, tmp):
        if os.path.exists(old):
            os.chmod(old, stat.S_IWUSR)
            os.remove(old)
    with open(tmp, "wb") as f:
        f.write(payload)
    os.rename(tmp, path)
    os.chmod(path, stat.S_IRUSR)


def write_ckpt(path: str, records: Iterable[Record], crc_check: bool = False) -> None:
    chunks = [chunk for record in records for chunk in _messages(*record)]
    payload = b"".join(chunks)
    if crc_check:
        crc = 0
        for chunk in chunks:
            crc = binascii.crc32(chunk, crc)
        payload += CRC_MARK + crc.to_bytes(10, byteorder="big")
    _replace(path, payload)


def _parse(path: str, crc_check: bool) -> Checkpoint:
    with open(path, "rb") as f:
        content = f.read()
    if content[-17:-10] == CRC_MARK:
        expected, content = int.from_bytes(content[-10:], byteorder="big"), content[:-17]
        if crc_check and binascii.crc32(content, 0) != expected:
            raise ValueError(
                "For 'load_checkpoint', the crc check is failed, "
                "please check whether the ckpt file is damaged."
            )
    message = Checkpoint()
    try:
        message.ParseFromString(content)
    except DecodeError as e:
        raise ValueError(
            f"Failed to read the checkpoint file {path}. "
            f"The file may be corrupted, and the content cannot be parsed."
        ) from e
    return message


def read_ckpt(path: str, crc_check: bool = False) -> list[Record]:
    """Records in file order, slices of one tag joined."""
    values = list(_parse(path, crc_check).value)
    records, pending = [], []
    for index, item in enumerate(values):
        if not item.HasField("tensor"):
            raise NotImplementedError(
                f"load_checkpoint: '{item.tag}' is a MapParameter (maptensor), which "
                "paddle_mindspore does not provide"
            )
        pending.append(item.tensor.tensor_content)
        if index + 1 < len(values) and values[index + 1].tag == item.tag:
            continue
        data, pending = b"".join(pending), []
        records.append(_record(item.tag, list(item.tensor.dims), item.tensor.tensor_type, data))
    return records


def _record(tag: str, dims: list, type_name: str, data: bytes) -> Record:
    if type_name == "str":
        return tag, str(np.frombuffer(data, f"U{len(data) // 4}")[0]), type_name
    if type_name not in NUMPY_OF:
        raise ValueError(f"For 'load_checkpoint', the tensor type '{type_name}' of '{tag}' is not supported")
    shape = [] if dims == [0] else dims
    return tag, np.frombuffer(data, NUMPY_OF[type_name]).reshape(shape).copy(), type_name


def write_safetensors(path: str, records: Iterable[Record]) -> None:
    from safetensors.numpy import save

    tensors = {name: value for name, value, _ in records}
    metadata = {"format": "ms"} if tensors else None
    _replace(path, save({k: tensors[k] for k in sorted(tensors)}, metadata=metadata))


def read_safetensors(path: str) -> list[Record]:
    from safetensors.numpy import load_file

    return [(name, value, "") for name, value in load_file(path).items()]
