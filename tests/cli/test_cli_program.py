"""``paddle-recompute`` as a program: ``python -m paddle_recompute`` and its host-memory set-up."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from paddle_recompute._cli import _env as cli_env
from paddle_recompute._cli._errors import CLIError

ROOT = Path(__file__).resolve().parents[2]
TINY_MLP = ["--model", "mlp", "--blocks", "2", "--hidden", "32", "--batch", "8"]


def _env(**extra):
    env = {k: v for k, v in os.environ.items() if k != "FLAGS_enable_host_memory_stat"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    return {**env, **extra}


def test_python_m_help():
    proc = subprocess.run([sys.executable, "-m", "paddle_recompute", "--help"], cwd=ROOT, env=_env(),
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    for command in ("bench", "profile", "plan", "parity"):
        assert command in proc.stdout


def test_program_measures_host_memory(tmp_path):
    """Started as a program without FLAGS_enable_host_memory_stat, bench still measures memory."""
    out_json = tmp_path / "r.json"
    proc = subprocess.run(
        [sys.executable, "-m", "paddle_recompute", "bench", *TINY_MLP, "--rounds", "1",
         "--modes", "ours reentrant", "--quiet", "--json", str(out_json)],
        cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads(out_json.read_text())["modes"]["none"]["forward_mib"] > 0


def test_statistics_off_reexecutes_with_the_flag(monkeypatch):
    calls = []
    monkeypatch.setattr(cli_env, "_stats_on", lambda: False)
    monkeypatch.setattr(cli_env.os, "execve", lambda exe, argv, env: calls.append((exe, argv, env)))
    monkeypatch.delenv(cli_env.FLAG, raising=False)
    monkeypatch.setattr(sys, "argv", ["paddle-recompute", "bench", "--model", "mlp"])
    with pytest.raises(CLIError):  # the recorded execve returns; a real one never does
        cli_env.ensure_host_memory_stats("bench", may_reexec=True)
    (exe, argv, env), = calls
    assert exe == sys.executable and argv[1:] == ["-m", "paddle_recompute", "bench", "--model", "mlp"]
    assert env[cli_env.FLAG] == "1" and env["PYTHONPATH"].split(os.pathsep)[0] == str(ROOT)


@pytest.mark.parametrize("may_reexec, flag", [(False, None), (True, "1")])
def test_statistics_off_without_reexec_is_a_clear_error(may_reexec, flag, monkeypatch):
    """In-process callers, and a re-executed process that still has none, get the fix."""
    monkeypatch.setattr(cli_env, "_stats_on", lambda: False)
    monkeypatch.setattr(cli_env.os, "execve", lambda *a: pytest.fail("must not re-execute"))
    if flag is None:
        monkeypatch.delenv(cli_env.FLAG, raising=False)
    else:
        monkeypatch.setenv(cli_env.FLAG, flag)
    with pytest.raises(CLIError, match="FLAGS_enable_host_memory_stat=1 python"):
        cli_env.ensure_host_memory_stats("bench", may_reexec=may_reexec)
