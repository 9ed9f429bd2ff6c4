"""The ``paddle-recompute`` command line, run in-process through ``main([...])`` at tiny sizes."""

import io
import json
import sys
import textwrap
from pathlib import Path

import pytest
from _user_model import USER_MODEL

import paddle_recompute
from paddle_recompute.__main__ import main
from paddle_recompute._bench import modes as bench_modes
from paddle_recompute._bench.models import MODELS
from paddle_recompute._bench.rounds import run_rounds
from paddle_recompute._cli._progress import progress_bar

ROOT = Path(__file__).resolve().parents[2]
TINY = {
    "gpt": ["--blocks", "2", "--hidden", "32", "--heads", "2", "--seq", "16", "--batch", "2",
            "--vocab", "64"],
    "resnet": ["--blocks", "1", "--channels", "4", "--image", "8", "--batch", "2"],
    "mlp": ["--blocks", "2", "--hidden", "32", "--batch", "8"],
}
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def bench(model, *extra):
    return main(["bench", "--model", model, *TINY[model], "--rounds", "2", *extra])


# --------------------------------------------------------------------------- bench


def test_bench_table_json_and_plot(tmp_path, capsys):
    out_json, out_png = tmp_path / "r.json", tmp_path / "r.png"
    assert bench("gpt", "--json", str(out_json), "--plot", str(out_png)) == 0
    out, err = capsys.readouterr()
    assert "| mode | step ms | /none | /builtin | fwd act MiB" in out
    for name, mode in bench_modes.MODES.items():
        assert (f"| {name} |" in out) == mode.default
    assert "bit-for-bit equal to none (asserted)" in out
    assert "%|" not in err  # the progress bar (tqdm) is silent when stderr is not a terminal
    record = json.loads(out_json.read_text())
    assert record["model"] == "gpt" and record["config"]["hidden"] == 32
    assert record["memory"] == "host allocator"
    rows = record["modes"]
    assert rows["none"]["step_ms/none"] == 1.0
    assert rows["builtin reentrant"]["peak_mib/builtin reentrant"] == 1.0
    assert len(rows["none"]["step_ms_all"]) == 2  # the timed rounds, warm-up left out
    for mode in ("ours reentrant", "ours non-reentrant"):
        assert record["losses_vs_none"][mode] == "equal"
        assert rows[mode]["losses"] == rows["none"]["losses"]
        # recompute measurably keeps less for backward than no recompute
        assert rows[mode]["forward_mib"] < 0.8 * rows["none"]["forward_mib"]
    assert out_png.read_bytes()[:8] == PNG_MAGIC


@pytest.mark.parametrize("model", ["resnet", "mlp"])
def test_bench_other_models(model, capsys):
    assert bench(model, "--modes", "ours non-reentrant,builtin reentrant", "--quiet") == 0
    out, err = capsys.readouterr()
    assert out.startswith(model) and err == ""
    assert "| none |" in out and "| ours non-reentrant |" in out and "| ours reentrant |" not in out


def test_bench_fails_when_an_exact_mode_changes_the_losses(monkeypatch, capsys):
    drift = lambda block, x: block(x) * 1.001  # noqa: E731  (a "recompute" that changes results)
    mode = bench_modes.Mode("drifting", lambda model, inputs: drift, True, "")
    monkeypatch.setitem(bench_modes.MODES, "drifting", mode)
    assert bench("mlp", "--modes", "drifting", "--quiet") == 1
    out = capsys.readouterr().out
    assert "| drifting |" in out and "DIFFER" in out
    assert "FAILED: losses of drifting are not bit-for-bit equal" in out


def test_a_failing_mode_is_reported_and_the_others_go_on(monkeypatch, capsys):
    def broken(block, x):
        raise RuntimeError("this mode cannot run\nsecond line")

    mode = bench_modes.Mode("broken", lambda model, inputs: broken, False, "")
    monkeypatch.setitem(bench_modes.MODES, "broken", mode)
    assert bench("mlp", "--modes", "broken,ours reentrant", "--quiet") == 0  # not an exact mode
    out = capsys.readouterr().out
    assert "| broken | failed: RuntimeError: this mode cannot run |" in out
    assert "| ours reentrant |" in out and "second line" not in out


def test_rounds_are_interleaved_in_rotating_order():
    spec = MODELS["mlp"]
    cfg = spec.config(hidden=8, blocks=1, batch=4)
    modes = [bench_modes.MODES[n] for n in ("none", "ours reentrant", "ours non-reentrant")]
    labels = []
    from paddle_recompute._bench.memory import HostMemory

    run = run_rounds(spec, cfg, modes, HostMemory(), rounds=2, warmup=1, tick=labels.append)
    firsts = [labels[r * 3].split(" ", 2)[2] for r in range(3)]
    assert firsts == ["none", "ours reentrant", "ours non-reentrant"]
    assert all(len(steps) == 3 for steps in run.stats.values())


def test_warm_rounds_time_the_second_of_two_consecutive_steps(monkeypatch):
    """With ``warm``, each mode's timed step directly follows its own untimed step."""
    from paddle_recompute._bench import rounds as rounds_module
    from paddle_recompute._bench.memory import HostMemory

    calls = []
    real = rounds_module.train_step

    def spy(model, optimizer, spec, cfg, step, memory, seed=0):
        calls.append((id(model), step))
        return real(model, optimizer, spec, cfg, step, memory, seed)

    monkeypatch.setattr(rounds_module, "train_step", spy)
    spec = MODELS["mlp"]
    cfg = spec.config(hidden=8, blocks=1, batch=4)
    modes = [bench_modes.MODES[n] for n in ("none", "ours non-reentrant")]
    run = run_rounds(spec, cfg, modes, HostMemory(), rounds=2, warmup=1, warm=True)
    assert [step for _, step in calls] == [0, 1, 0, 1, 2, 3, 2, 3, 4, 5, 4, 5]
    assert all(calls[i][0] == calls[i + 1][0] for i in range(0, len(calls), 2))  # same model twice
    assert all(len(steps) == 3 for steps in run.stats.values())
    assert run.stats["none"][0].loss == run.stats["ours non-reentrant"][0].loss  # step 1 of each


def test_register_mode_checks_its_arguments():
    with pytest.raises(TypeError, match="exactly one of `runner` and `prepare`"):
        bench_modes.register_mode("x")
    with pytest.raises(TypeError, match="must be callable"):
        bench_modes.register_mode("x", runner=3)
    assert "x" not in bench_modes.MODES


def test_opt_in_modes_run_with_all_and_keep_losses_exact(tmp_path, capsys):
    """Policies, presets and the planner: every loss equal to none's, memory below none's."""
    out_json = tmp_path / "all.json"
    assert bench("gpt", "--modes", "all", "--json", str(out_json)) == 0
    record = json.loads(out_json.read_text())
    extras = [name for name, mode in bench_modes.MODES.items() if not mode.default]
    assert {"ours save_matmuls", "ours core_attn", "ours plan 50%"} <= set(extras)
    rows = record["modes"]
    for name in extras:
        assert record["losses_vs_none"][name] == "equal", name
        assert rows[name]["forward_mib"] < rows["none"]["forward_mib"], name
    # The planner budgets bytes saved for backward; the measured forward memory also holds
    # the logits (outside any block), hence the 5% slack.
    assert rows["ours plan 25%"]["forward_mib"] <= 0.25 * rows["none"]["forward_mib"] * 1.05


def test_list_modes(capsys):
    assert main(["bench", "--list-modes"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("none") and "builtin non-reentrant" in out


@pytest.mark.parametrize("args, message", [
    (["--model", "resnet", "--seq", "8"], "--seq is not a size of model 'resnet'"),
    (["--modes", "bogus"], "unknown mode 'bogus'"),
    (["--rounds", "0"], "--rounds must be at least 1"),
    (["--plot", "out.svg"], "ending in .png"),
    (["--blocks", "0"], "--blocks must be at least 1"),
])
def test_bench_bad_arguments(args, message, capsys):
    assert main(["bench", *args]) == 2
    assert message in capsys.readouterr().err


def test_bench_plot_without_matplotlib(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)  # import fails
    assert bench("mlp", "--plot", "x.png") == 2
    assert "needs matplotlib: pip install matplotlib" in capsys.readouterr().err


def test_bench_bad_device(capsys):
    assert bench("mlp", "--device", "no_such_device") == 2
    assert "bench: --device 'no_such_device': The device must be" in capsys.readouterr().err


def test_gpu_place_reads_the_device_allocator(monkeypatch):
    """On a GPU the statistics come from paddle.device.cuda (wiring only: no GPU here)."""
    import paddle

    from paddle_recompute._bench.memory import DeviceMemory, memory_for_current_place

    calls = []
    for name in ("memory_allocated", "max_memory_allocated", "reset_max_memory_allocated", "synchronize"):
        monkeypatch.setattr(paddle.device.cuda, name, lambda *a, _n=name: calls.append(_n) or 7)
    monkeypatch.setattr(paddle, "get_device", lambda: "gpu:0")
    memory = memory_for_current_place()
    assert isinstance(memory, DeviceMemory) and memory.kind == "device allocator"
    assert (memory.current(), memory.peak()) == (7, 7)
    memory.reset_peak()
    memory.sync()
    assert calls == ["memory_allocated", "max_memory_allocated", "reset_max_memory_allocated", "synchronize"]


def test_bench_refuses_to_run_patched(capsys):
    with paddle_recompute.paddle_patched():
        assert bench("mlp") == 2
    assert "unpatch_paddle() first" in capsys.readouterr().err


def test_progress_bar_on_a_terminal_and_silent_elsewhere():
    class Tty(io.StringIO):
        def isatty(self):
            return True

    tty, log, quiet = Tty(), io.StringIO(), Tty()
    for bar in (progress_bar(20, stream=tty), progress_bar(20, stream=log),
                progress_bar(20, stream=quiet, quiet=True)):
        for i in range(20):
            bar(f"step {i}")
        bar.close()
    assert "20/20" in tty.getvalue() and "step 19" in tty.getvalue()
    assert log.getvalue() == "" and quiet.getvalue() == ""


# --------------------------------------------------------------------------- profile


def _write(tmp_path, name, body):
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(body))
    return path


MODEL_FILE = """
    import paddle

    def make():
        model = paddle.nn.Sequential(*[paddle.nn.Linear(16, 16) for _ in range(3)])
        x = paddle.randn([4, 16])
        x.stop_gradient = False
        return model, x

    def make_factory():
        return (lambda: paddle.nn.Sequential(paddle.nn.Linear(16, 16), paddle.nn.Linear(16, 16)),
                (paddle.randn([4, 16]),))

    def not_a_pair():
        return 3
"""


def test_profile_prints_the_per_block_table(tmp_path, capsys):
    path = _write(tmp_path, "prof_case", MODEL_FILE)
    out_json = tmp_path / "p.json"
    assert main(["profile", f"{path}:make", "--json", str(out_json)]) == 0
    out = capsys.readouterr().out
    assert "saved" in out.lower() and json.loads(out_json.read_text())
    assert main(["profile", f"{path}:make_factory"]) == 0


@pytest.mark.parametrize("target, message", [
    ("nocolon", "expected MODULE:CALLABLE"),
    ("no_such_module_xyz:make", "cannot import module 'no_such_module_xyz'"),
    ("{file}:missing", "has no attribute 'missing'"),
    ("{file}:not_a_pair", "must return (model, inputs)"),
])
def test_profile_bad_targets(target, message, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(paddle_recompute, "profile", lambda *a: None, raising=False)
    path = _write(tmp_path, "prof_case3", MODEL_FILE)
    assert main(["profile", target.format(file=path)]) == 2
    assert message in capsys.readouterr().err


# --------------------------------------------------------------------------- parity


PARITY_FILE = USER_MODEL + textwrap.dedent("""
    def good():
        return {"build_model": build, "train_step": step, "steps": 2}

    def good_tuple():
        return build, step

    def bad():
        return build_perturbed, step

    def junk():
        return "x"
""")


def test_parity_pass(tmp_path, capsys):
    path = _write(tmp_path, "parity_case", PARITY_FILE)
    assert main(["parity", f"{path}:good"]) == 0
    out = capsys.readouterr().out
    assert "2 steps from seed 0, exact" in out and "PASS" in out
    assert main(["parity", f"{path}:good_tuple", "--steps", "1", "--seed", "3"]) == 0
    assert "1 steps from seed 3" in capsys.readouterr().out


def test_parity_fail_reports_numpy_style(tmp_path, capsys):
    path = _write(tmp_path, "parity_case2", PARITY_FILE)
    assert main(["parity", f"{path}:bad", "--steps", "2"]) == 1
    out = capsys.readouterr().out
    assert "FAIL" in out and "Entry ['losses'][0]" in out and "Max absolute difference" in out


def test_parity_bad_target(tmp_path, capsys):
    path = _write(tmp_path, "parity_case3", PARITY_FILE)
    assert main(["parity", f"{path}:junk"]) == 2
    assert "must return a dict or a tuple" in capsys.readouterr().err
