"""A ``recompute()`` mark on ``nn.Dropout``'s primitive does nothing, as in MindSpore's PyNative.

Record: recorded/primitive_marks.json (``compat/record/record_primitive_marks.py``).  MindSpore
2.10 in PyNative mode keeps the mark as the primitive's ``recompute`` attribute and otherwise
ignores it: a marked ``ops.Custom`` primitive whose body counts its runs runs once under
``ms.grad``, as unmarked; ``nn.Dropout``'s primitive marked (``cell.dropout.recompute()``)
gives the loss, gradient and next random draw of the unmarked cell.  The layer does the same
for ``nn.Dropout``: its mask is drawn once per forward, marked or not (counted here).  The
masks are Paddle's, not MindSpore's: the layer's values are compared with the layer's unmarked
run, exactly.
"""

from __future__ import annotations

import numpy as np
import paddle
from _ms_cases import recorded

import paddle_mindspore as ms

RECORD = recorded("primitive_marks.json")


def test_mindspore_pynative_keeps_the_mark_and_ignores_it():
    custom, dropout = RECORD["custom"], RECORD["dropout"]
    assert custom["marked"]["runs"] == custom["unmarked"]["runs"] == 1  # not rerun in backward
    assert custom["marked"]["grad"] == custom["unmarked"]["grad"]
    assert (dropout["unmarked"]["recompute_attr"], dropout["marked"]["recompute_attr"]) == (None, True)
    for key in ("loss", "grad", "next_draw"):
        assert dropout["marked"][key] == dropout["unmarked"][key]


def _step(marked: bool, draws: list, cell_marked: bool = False) -> dict:
    """The recorder's ``dropout`` case under the layer; ``draws`` counts the masks drawn."""
    ms.set_seed(7)
    cell = ms.nn.Dropout(p=0.5)
    cell.set_train()
    if marked:
        assert cell.dropout.recompute() is cell.dropout
    if cell_marked:
        cell.recompute()
    w = ms.Tensor(np.linspace(-1, 1, 32, dtype=np.float32))

    def f(x):
        return (cell(x) * w).sum()

    x = ms.Tensor(np.linspace(0.5, 2, 32, dtype=np.float32))
    before = len(draws)
    loss, g = ms.value_and_grad(f)(x)
    drawn = len(draws) - before
    after = paddle.rand([4])  # the layer's random numbers are Paddle's generator's
    return {"recompute_attr": cell.dropout.attrs.get("recompute"), "loss": loss.numpy(),
            "grad": g.numpy(), "next_draw": after.numpy(), "drawn": drawn}


def test_the_layer_draws_one_mask_marked_or_not(monkeypatch):
    draws = []
    dropout = paddle.nn.functional.dropout

    def counting(*args, **kwargs):
        draws.append(1)
        return dropout(*args, **kwargs)

    monkeypatch.setattr(paddle.nn.functional, "dropout", counting)
    plain, marked = _step(False, draws), _step(True, draws)
    cell_marked = _step(False, draws, cell_marked=True)
    assert cell_marked["drawn"] == 2  # the count sees a rerun: Cell.recompute() reruns the cell
    assert (plain["drawn"], marked["drawn"]) == (1, 1)  # the primitive's mark: no rerun
    assert (plain["recompute_attr"], marked["recompute_attr"]) == (None, True)
    for key in ("loss", "grad", "next_draw"):
        np.testing.assert_array_equal(marked[key], plain[key])
        np.testing.assert_array_equal(cell_marked[key], plain[key])  # the rerun replays the mask
    assert 0 < np.count_nonzero(plain["grad"]) < 32  # a real mask: some kept, some dropped
