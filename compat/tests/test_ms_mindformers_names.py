"""The MindSpore names mindformers' Llama uses beyond mindcv's, case by case against real
MindSpore 2.10 (``compat/record/ms_cases_mindformers.py``, recorded/l_mindformers_cases.json):
the primitives its layers build, values and input gradients (ties in ``ReduceMax`` and
``Maximum`` included); ``mint`` functions; ``Primitive.shard`` and ``Layout`` (what they record,
and MindSpore's refusals with its texts); ``Cell.set_comm_fusion``; the auto-parallel context
and the readers mindformers calls; ``_checkparam``'s checks and texts. And the names mindformers
only imports: they raise ``MissingAPIError`` naming themselves when used.
"""

from __future__ import annotations

import numpy as np
import pytest
from _ms_cases import compare, recorded, run_case

import paddle_mindspore as ms

CASES = recorded("l_mindformers_cases.json")["cases"]
# MindSpore 2.10's CPU build has no kernel for these (it raises "The kernel ArgMaxExt/CumsumExt
# unregistered."); the layer computes them, checked against numpy below.
NO_CPU_KERNEL = {"no_cpu_kernel/argmax", "no_cpu_kernel/cumsum"}


@pytest.mark.parametrize("name", sorted(set(CASES) - NO_CPU_KERNEL))
def test_case_matches_mindspore(name, alias):
    compare(CASES[name]["result"], run_case(CASES[name]["source"]), name)


def test_mint_argmax_and_cumsum_compute_what_numpy_does():
    for name in sorted(NO_CPU_KERNEL):
        assert CASES[name]["result"]["error"] == "RuntimeError"  # MindSpore on CPU
    x = np.array([[1.0, 3.0, 3.0], [5.0, 0.0, 2.0]], np.float32)
    flat, rows, cols = (t.numpy() for t in (ms.mint.argmax(ms.Tensor(x)), ms.mint.argmax(ms.Tensor(x), 1),
                                            ms.mint.argmax(ms.Tensor(x), 0, True)))
    np.testing.assert_array_equal(flat, np.argmax(x))
    np.testing.assert_array_equal(rows, np.argmax(x, 1))
    np.testing.assert_array_equal(cols, np.argmax(x, 0)[None])
    ints = np.array([[1, 2, 3], [4, 5, 6]], np.int32)
    np.testing.assert_array_equal(ms.mint.cumsum(ms.Tensor(ints), 1).numpy(), np.cumsum(ints, 1))


@pytest.mark.parametrize("make", [
    lambda: ms.Profiler(), lambda: ms.nn.PipelineCell(None, 1), lambda: ms.ops.auto_generate.GroupedMatmul(),
    lambda: ms.ops.auto_generate.Swiglu(),
    lambda: ms.parallel.strategy.get_strategy_metadata(),
    lambda: ms.mint.distributed.barrier(), lambda: ms.common.api._pynative_executor.sync(),
    lambda: ms.dtype.uint16.itemsize,
])
def test_names_mindformers_only_imports_raise_when_used(make):
    with pytest.raises(ms.MissingAPIError, match=r"mindspore\.\S+ is not provided by paddle_mindspore"):
        make()


def test_move_to_is_built_as_in_mindspore_and_refuses_to_run():
    move = ms.ops.MoveTo().add_prim_attr("recompute", False)
    with pytest.raises(NotImplementedError, match="MoveTo"):
        move(ms.Tensor(np.ones(2, np.float32)), "CPU")


def test_strided_slice_masks_are_refused():
    """MindSpore 2.10's gradient of a masked slice is not the slice's derivative (on the CPU it
    lands where the unmasked ``begin`` points), so the layer refuses the masks."""
    with pytest.raises(NotImplementedError, match="StridedSlice\\(begin_mask=1\\)"):
        ms.ops.StridedSlice(begin_mask=1)
