"""A training step's peak memory with recompute, over its peak without, is at least as good
under the layer as in real MindSpore 2.10 on the same model and batch
(``compat/step_memory_case.py``; MindSpore's recorded by ``compat/record/record_step_memory.py``
into ``recorded/step_memory.json``).

The cases: mindcv's ResNet-50 and a ViT with ``.recompute()`` on every residual block, and
mindformers' Llama (sequence 512, batch 4, float32) with
``TransformerRecomputeConfig(recompute=True)`` on every decoder layer.

The layer's peaks are Paddle's host allocator's (exact); MindSpore keeps no allocator
statistics on CPU, so its peaks are the process's resident high-water mark during its first
step (see the recorder's caveats). ``compat/measure_step_memory.py`` prints both sides.
"""

from __future__ import annotations

import gc
import json
from pathlib import Path

import pytest
from _ms_helpers import held_bytes
from paddle.base import core

from paddle_mindspore import _backward

RECORDED = json.loads((Path(__file__).parent / "recorded" / "step_memory.json").read_text())


def _peak(step) -> int:
    gc.collect()
    before = held_bytes()
    core.host_memory_stat_reset_peak_value("Allocated", 0)
    step()
    return core.host_memory_stat_peak_value("Allocated", 0) - before


def _step_peak(name: str, recompute: bool) -> int:
    """Peak bytes of one step of the case ``name`` (built first, outside the measurement)."""
    import step_memory_case

    step, blocks = step_memory_case.make_step(name, recompute)
    assert blocks == (RECORDED[name]["recompute"]["recomputed_blocks"] if recompute else 0)
    return _peak(step)


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_recompute_saves_at_least_as_much_as_in_mindspore(alias, compat_path, memory_stats, name,
                                                          tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # mindformers writes its logs under ./output
    monkeypatch.setenv("LOCAL_DEFAULT_PATH", str(tmp_path))
    plain, recomputed = _step_peak(name, False), _step_peak(name, True)
    ratio = recomputed / plain
    assert ratio <= RECORDED[name]["ratio"], (name, plain, recomputed, ratio, RECORDED[name]["ratio"])
    with pytest.MonkeyPatch.context() as patch:  # on paddle.grad the plain step peaked higher
        patch.setattr(_backward, "lean_gradients", lambda *args, **kwargs: None)
        before = _step_peak(name, False)
    assert plain < before, (name, plain, before)
