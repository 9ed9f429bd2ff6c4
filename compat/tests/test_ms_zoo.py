"""The mindcv 0.3.0 zoo against real MindSpore 2.10: one model per family, the smallest recorded.

Each runs the check of compat/zoo.py (the script that covers the whole zoo): it builds
here with MindSpore's parameter names, shapes and trainability; its eval forward and its
logits after one training step (mindcv's own create_loss / create_optimizer /
create_scheduler) are within the noise floor recorded from MindSpore itself
(compat/tests/recorded/zoo/, compat/zoo.py's FLOOR_FACTOR says why the factor 2); and
``.recompute()`` on its repeated blocks gives bit-identical losses. Families whose models
need more than 64 pixels, or whose smallest recorded model has over 40M parameters, stop after the
forward here (``SMALL``, ``FULL_MAX_PARAMS``); compat/zoo.py checks them whole.
"""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from _ms_helpers import ROOT

import paddle_mindspore as ms

RECORDED = ROOT / "compat" / "tests" / "recorded" / "zoo"
COMPAT = ROOT / "compat"


def _family_representatives() -> list[dict]:
    """The recorded model MindSpore built with the fewest parameters, per family; models whose
    row in compat/zoo_results.json says why they cannot match (compat/zoo.py's ``WHY``) are
    left out."""
    rows = json.loads((COMPAT / "zoo_results.json").read_text())["rows"]
    explained = {row["model"] for row in rows if row.get("why")}
    best: dict[str, dict] = {}
    for path in sorted(RECORDED.glob("*.json")):
        rec = json.loads(path.read_text())
        if "error" in rec or rec["model"] in explained:
            continue
        size = sum(_count(shape) for _, shape, _ in rec["params"])
        if rec["family"] not in best or size < best[rec["family"]][1]:
            best[rec["family"]] = (rec, size)
    return [rec for rec, _ in sorted(best.values(), key=lambda item: item[0]["family"])]


def _count(shape: list[int]) -> int:
    total = 1
    for dim in shape:
        total *= dim
    return total


SMALL = 64  # families whose smallest model runs at 64 pixels get the full check; the others
# (transformers' fixed 160-256 pixels; inception_v3 299, inception_v4 96, vgg11 224) stop after
# the forward, to keep CI short (vgg11's forward check took 17 s on the loaded 2 cores, mostly
# drawing its 129M initial weights)
FULL_MAX_PARAMS = 40e6  # and so do those above 40M parameters: crossvit_18 (42.6M, the smallest
# crossvit recorded) took 47 s for the full check on the shared 2 cores, its forward a few


def _full(rec: dict) -> bool:
    return rec["size"] <= SMALL and sum(_count(shape) for _, shape, _ in rec["params"]) <= FULL_MAX_PARAMS


@pytest.mark.parametrize("rec", _family_representatives(), ids=lambda rec: rec["model"])
def test_family_representative_matches_mindspore(zoo, rec):
    row = zoo.check(rec, train=_full(rec))
    assert row["builds"] and row["params"], row["error"]
    assert row["forward_ok"], row["error"]
    if not _full(rec):
        return
    assert row["step_ok"], row["error"]
    assert row["recompute_blocks"] > 0 and row["recompute_ran"] and row["recompute_exact"], row["error"]


def _explained() -> list[dict]:
    rows = json.loads((COMPAT / "zoo_results.json").read_text())["rows"]
    return [json.loads((RECORDED / f"{row['model']}.json").read_text()) for row in rows if row.get("why")]


@pytest.mark.parametrize("rec", _explained(), ids=lambda rec: rec["model"])
def test_model_that_cannot_match_still_matches_forward(zoo, rec):
    """A model whose training step cannot match (its row says why) still has MindSpore's
    parameters and eval forward."""
    row = zoo.check(rec, train=False)
    assert row["builds"] and row["params"] and row["forward_ok"], row["error"]


def test_checks_at_once_each_keep_their_row(zoo, tmp_path, monkeypatch):
    """Two checks saving their rows at once (two threads: ``flock`` locks each open of the lock
    file, as between processes) keep both. Each save, once it has read the result file, waits up
    to 1 s for the other to have read it too: without the lock both read before either writes,
    and the later write drops the other's row; with it, the second read waits for the first
    write (the wait times out, breaking the barrier)."""
    results, table = tmp_path / "zoo_results.json", tmp_path / "zoo_results.md"
    recs = [json.loads((RECORDED / f"{name}.json").read_text()) for name in ("resnet18", "vgg11")]
    both_read = threading.Barrier(2)
    read_rows = zoo.read_rows

    def read_then_wait(path):
        rows = read_rows(path)
        try:
            both_read.wait(timeout=1.0)
        except threading.BrokenBarrierError:
            pass
        return rows

    monkeypatch.setattr(zoo, "read_rows", read_then_wait)
    with ThreadPoolExecutor(2) as pool:
        rows = [zoo.blank_row(r["model"], r["family"]) for r in recs]
        saves = [pool.submit(zoo.save_row, row, results, table) for row in rows]
        for save in saves:
            save.result()
    rows = json.loads(results.read_text())["rows"]
    assert sorted(row["model"] for row in rows) == ["resnet18", "vgg11"]
    assert "| resnet18 |" in table.read_text() and "| vgg11 |" in table.read_text()
    assert both_read.broken  # the saves did not overlap


def test_summaries_agree_with_the_result_file(zoo):
    """README.md's, compat/README.md's and compat/zoo_results.md's headline counts are the result file's, and
    every recorded model has its row (the README must not keep an older count)."""
    results = json.loads((COMPAT / "zoo_results.json").read_text())
    passed = sum(zoo.passed(row) for row in results["rows"])
    assert passed == results["passed"]
    assert results["checked"] == len(results["rows"]) == len(list(RECORDED.glob("*.json")))
    readme = (COMPAT / "README.md").read_text()
    assert f"**Summary:** {passed} of 267 models pass" in readme
    assert f"{results['checked']} of the 275 registered models are recorded and checked" in readme
    assert f"**{passed} of 267** pass" in (COMPAT / "zoo_results.md").read_text()
    assert f"**{passed} of 267 pass**" in (ROOT / "README.md").read_text()


def test_mindcv_imports_whole_under_the_alias():
    ms.install_import_alias()
    try:
        import mindcv

        assert len(mindcv.list_models()) == 275
        assert mindcv.create_loss is not None and mindcv.create_optimizer is not None
    finally:
        ms.uninstall_import_alias()


def test_jit_and_graph_mode_run_eagerly():
    calls = []

    @ms.jit
    def double(x):
        calls.append(1)
        return x * 2

    @ms.jit(jit_level="O1")
    def triple(x):
        calls.append(1)
        return x * 3

    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        x = ms.Tensor([1.0, 2.0])
        assert double(x).tolist() == [2.0, 4.0] and triple(x).tolist() == [3.0, 6.0]
        assert ms.jit(double) is double and len(calls) == 2  # the Python body ran, each call
        assert ms.get_context("mode") == ms.GRAPH_MODE
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)
