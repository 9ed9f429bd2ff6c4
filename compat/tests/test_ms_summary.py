"""``SummaryRecord`` writes MindSpore's summary format: a file recorded from MindSpore 2.10
(compat/record/record_summary.py) reads here, and the layer's file for the same calls has the
same events, byte for byte once the wall times are set equal."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from _ms_cases import RECORDED

import paddle_mindspore as ms
from paddle_mindspore.train.summary import read_events

SUMMARY = RECORDED / "summary"
META = json.loads((SUMMARY / "ms_summary.json").read_text())


def _timeless(events):
    for event in events:
        event.wall_time = 0.0
    return [event.SerializeToString() for event in events]


def test_mindspore_file_reads_here():
    events = read_events(str(SUMMARY / "ms.summary"))
    assert events[0].version == "MindSpore.Event:1"
    steps = {str(e.step): {v.tag: v.scalar_value for v in e.summary.value} for e in events[1:]}
    assert steps == META["values"]


def test_layer_writes_what_mindspore_writes(tmp_path):
    theirs = read_events(str(SUMMARY / "ms.summary"))
    with ms.train.SummaryRecord(str(tmp_path)) as record:
        for event in theirs[1:]:  # the recorder's calls, in its order
            for value in event.summary.value:
                record.add_value("scalar", value.tag, ms.Tensor(np.float32(value.scalar_value)))
            assert record.record(event.step)
    (name,) = os.listdir(tmp_path)
    prefix = META["file_name"].rsplit(".", 3)[0]  # events.out.events.summary.<time>
    assert name.startswith(prefix.rsplit(".", 1)[0]) and name.endswith("_MS") and ".0." in name
    assert _timeless(read_events(str(tmp_path / name))) == _timeless(theirs)


def test_only_scalars_are_provided(tmp_path):
    with ms.train.SummaryRecord(str(tmp_path)) as record:
        with pytest.raises(NotImplementedError, match="only 'scalar'"):
            record.add_value("image", "x", ms.Tensor(np.zeros((1, 3, 2, 2), np.float32)))
        with pytest.raises(ValueError, match="one value"):
            record.add_value("scalar", "x", ms.Tensor(np.zeros(2, np.float32)))


def test_corrupt_record_is_refused(tmp_path):
    data = bytearray((SUMMARY / "ms.summary").read_bytes())
    data[40] ^= 1
    (tmp_path / "bad").write_bytes(bytes(data))
    with pytest.raises(ValueError, match="corrupt summary record"):
        read_events(str(tmp_path / "bad"))
