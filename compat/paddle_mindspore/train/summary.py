"""``SummaryRecord``: scalars written in MindSpore's summary file format.

A summary file is a sequence of ``mindspore.irpb.Event`` records, each framed as in TFRecord:
the length (uint64, little-endian), its masked CRC-32C, the serialized event, its masked
CRC-32C. The first event carries ``version = "MindSpore.Event:1"``; each ``record(step)``
writes one event with the step, the wall time and the scalars added since (``Summary.Value``:
``tag``, ``scalar_value``). Recorded from MindSpore 2.10 and read back here, and the layer's
files parse the same way (``compat/tests/test_ms_summary.py``). Only scalars are provided:
images, tensors, histograms, graphs and ``network=`` raise ``NotImplementedError``.
"""

from __future__ import annotations

import os
import socket
import struct
import time
from typing import Any

import crc32c
import numpy as np
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from .._validate import not_provided

__all__ = ["SummaryRecord", "read_events", "Event"]

_F = descriptor_pb2.FieldDescriptorProto


def _file() -> descriptor_pb2.FileDescriptorProto:
    """The scalar part of MindSpore's ``summary.proto`` (package ``mindspore.irpb``)."""
    proto = descriptor_pb2.FileDescriptorProto(name="ms_summary.proto", package="mindspore.irpb",
                                               syntax="proto2")
    summary = proto.message_type.add(name="Summary")
    value = summary.nested_type.add(name="Value")
    value.field.add(name="tag", number=1, type=_F.TYPE_STRING, label=_F.LABEL_REQUIRED)
    value.oneof_decl.add(name="value")
    value.field.add(name="scalar_value", number=3, type=_F.TYPE_FLOAT, label=_F.LABEL_OPTIONAL, oneof_index=0)
    summary.field.add(name="value", number=1, type=_F.TYPE_MESSAGE, label=_F.LABEL_REPEATED,
                      type_name=".mindspore.irpb.Summary.Value")
    event = proto.message_type.add(name="Event")
    event.field.add(name="wall_time", number=1, type=_F.TYPE_DOUBLE, label=_F.LABEL_REQUIRED)
    event.field.add(name="step", number=2, type=_F.TYPE_INT64, label=_F.LABEL_OPTIONAL)
    event.oneof_decl.add(name="what")
    event.field.add(name="version", number=3, type=_F.TYPE_STRING, label=_F.LABEL_OPTIONAL, oneof_index=0)
    event.field.add(name="summary", number=5, type=_F.TYPE_MESSAGE, label=_F.LABEL_OPTIONAL,
                    type_name=".mindspore.irpb.Summary", oneof_index=0)
    return proto


_POOL = descriptor_pool.DescriptorPool()
_POOL.Add(_file())
Event = message_factory.GetMessageClass(_POOL.FindMessageTypeByName("mindspore.irpb.Event"))


def _masked_crc(data: bytes) -> int:
    crc = crc32c.crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def _frame(payload: bytes) -> bytes:
    length = struct.pack("<Q", len(payload))
    return length + struct.pack("<I", _masked_crc(length)) + payload + struct.pack("<I", _masked_crc(payload))


def read_events(path: str) -> list[Any]:
    """The events of a summary file, checking every CRC (``ValueError`` on a corrupt record)."""
    data, events, at = open(path, "rb").read(), [], 0
    while at < len(data):
        (length,) = struct.unpack_from("<Q", data, at)
        (length_crc,) = struct.unpack_from("<I", data, at + 8)
        payload = data[at + 12:at + 12 + length]
        (payload_crc,) = struct.unpack_from("<I", data, at + 12 + length)
        if length_crc != _masked_crc(data[at:at + 8]) or payload_crc != _masked_crc(payload):
            raise ValueError(f"{path}: corrupt summary record at byte {at}")
        event = Event()
        event.ParseFromString(payload)
        events.append(event)
        at += 16 + length
    return events


def _scalar(value: Any) -> float:
    array = np.asarray(value.numpy() if hasattr(value, "numpy") else value)
    if array.size != 1:
        raise ValueError(f"For 'add_value', a scalar summary needs one value, but got shape {array.shape}.")
    return float(array.reshape(()))


class SummaryRecord:
    """``SummaryRecord(log_dir, file_prefix='events', file_suffix='_MS', network=None,
    max_file_size=None, raise_exception=False, export_options=None, num_process=32)``: scalars
    (``add_value('scalar', tag, value)``), ``record(step)``, ``flush()``, ``close()``, and use
    as a context manager; the file is ``<prefix>.out.events.summary.<time>.0.<host><suffix>``
    in ``log_dir``, as MindSpore names it."""

    def __init__(self, log_dir: str, file_prefix: str = "events", file_suffix: str = "_MS",
                 network: Any = None, max_file_size: Any = None, raise_exception: bool = False,
                 export_options: Any = None, num_process: int = 32):
        if network is not None or export_options is not None:
            raise not_provided("SummaryRecord(network=/export_options=)", "only scalars are written")
        if not isinstance(log_dir, str) or not log_dir:
            raise ValueError(f"For 'SummaryRecord', the 'log_dir' must be a non-empty str, but got "
                             f"{log_dir!r}.")
        os.makedirs(log_dir, exist_ok=True)
        # MindSpore's name (recorded); the 0 is the rank, one process here
        name = f"{file_prefix}.out.events.summary.{int(time.time())}.0.{socket.gethostname()}{file_suffix}"
        self.log_dir, self.file_path = log_dir, os.path.join(log_dir, name)
        self._file = open(self.file_path, "xb")  # two records in one second and folder: FileExistsError
        self._pending: list[tuple[str, float]] = []
        self._write(Event(wall_time=time.time(), version="MindSpore.Event:1"))

    def _write(self, event: Any) -> None:
        self._file.write(_frame(event.SerializeToString()))

    def __enter__(self) -> SummaryRecord:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def set_mode(self, mode: str) -> None:
        if mode not in ("train", "eval"):
            raise ValueError(f"For 'set_mode', the 'mode' must be 'train' or 'eval', but got {mode!r}.")

    def add_value(self, plugin: str, name: str, value: Any) -> None:
        if plugin != "scalar":
            raise not_provided(f"SummaryRecord.add_value({plugin!r}, ...)", "only 'scalar' is written")
        if not isinstance(name, str) or not name:
            raise ValueError(f"For 'add_value', the 'name' must be a non-empty str, but got {name!r}.")
        self._pending.append((name, _scalar(value)))

    def record(self, step: int, train_network: Any = None, plugin_filter: Any = None) -> bool:
        if isinstance(step, bool) or not isinstance(step, int):
            raise TypeError(f"For 'record', the 'step' must be int, but got {type(step).__name__}.")
        event = Event(wall_time=time.time(), step=step)
        for tag, value in self._pending:
            event.summary.value.add(tag=tag, scalar_value=value)
        self._pending = []
        self._write(event)
        return True

    def flush(self) -> None:
        self._file.flush()

    def close(self) -> None:
        if not self._file.closed:
            self._file.close()
