"""The runner (``python -m paddle_mindspore SCRIPT``) and the opt-in import alias."""

from __future__ import annotations

import importlib.util
import os
import runpy
import subprocess
import sys

import numpy as np
import pytest
from _ms_helpers import COMPAT, ORIGINALS, PYTHONPATH, ROOT, checkout_env, reference

import paddle_mindspore as ms
from paddle_mindspore import _runner


@pytest.mark.parametrize("module", ["paddle_mindspore", "paddle_recompute.mindspore"])
def test_python_m_runner_runs_the_unmodified_docstring_example(module):
    """The real entry point, in a fresh interpreter: prints MindSpore's documented gradient (also
    under the former name, which users' scripts and CI files call)."""
    script = ORIGINALS / "a_recompute_docstring.py"
    result = subprocess.run([sys.executable, "-m", module, str(script)], cwd=ROOT,
                            env=checkout_env(PYTHONWARNINGS="ignore"), capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    expected = np.array(reference("a_docstring_pynative.json")["cases"]["docstring"]["grad"]).ravel()
    assert _printed_values(result.stdout) == expected.tolist()


def _printed_values(printed: str) -> list[float]:
    """The numbers of a printed tensor (MindSpore code prints MindSpore's way: the array's values)."""
    marker = "stop_gradient=True,"
    values = printed[printed.index(marker) + len(marker):] if marker in printed else printed
    for ch in "[](),":
        values = values.replace(ch, " ")
    return [float(t) for t in values.split()]


@pytest.fixture
def runner_env(monkeypatch):
    """Run ``_runner.main`` in this process; sys.argv / sys.path / the alias are restored."""
    monkeypatch.setattr(sys, "argv", list(sys.argv))
    monkeypatch.setattr(sys, "path", list(sys.path))
    yield _runner.main
    ms.uninstall_import_alias()


def test_runner_usage_and_missing_script(runner_env, capsys):
    assert runner_env([]) == 2
    err = capsys.readouterr().err
    assert "usage: paddle-mindspore SCRIPT.py" in err and "or: python -m paddle_mindspore SCRIPT.py" in err
    assert runner_env(["--help"]) == 0
    assert runner_env(["no_such_script.py"]) == 2
    assert "cannot open file 'no_such_script.py'" in capsys.readouterr().err
    assert not ms.import_alias_installed()


def test_without_the_runner_import_mindspore_is_untouched():
    assert not ms.import_alias_installed()
    spec = importlib.util.find_spec("mindspore")
    assert spec is None or "paddle_recompute" not in str(spec.origin)


def test_install_import_alias_in_process():
    assert "mindspore" not in sys.modules
    ms.install_import_alias()
    try:
        import mindspore
        import mindspore.nn as nn
        from mindspore.common.initializer import One
        from mindspore.ops import operations as P

        assert mindspore is ms and nn is ms.nn and P is ms.ops.operations and One is ms.common.initializer.One
        with pytest.raises(ModuleNotFoundError, match="'mindspore.mindrecord' is not provided"):
            import mindspore.mindrecord  # noqa: F401
    finally:
        ms.uninstall_import_alias()
    assert "mindspore" not in sys.modules and not ms.import_alias_installed()


@pytest.fixture
def fake_mindspore(tmp_path):
    """A directory holding a stand-in for a real MindSpore installation."""
    package = tmp_path / "site" / "mindspore"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("REAL = True\n")
    script = tmp_path / "which.py"
    script.write_text("import mindspore\nprint(getattr(mindspore, 'REAL', False), mindspore.__name__)\n")
    return tmp_path


def _python(args: list[str], site) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONWARNINGS="ignore", PYTHONPATH=os.pathsep.join([str(site), PYTHONPATH]))
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)


def test_an_installed_mindspore_wins_when_the_runner_is_not_used(fake_mindspore):
    """Importing (and using) paddle_mindspore never shadows a real MindSpore."""
    code = ("import paddle_mindspore as ms; ms.nn.Dense(2, 2).recompute(); "
            "exec(open(r'%s').read())" % (fake_mindspore / "which.py"))
    result = _python(["-c", code], fake_mindspore / "site")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "mindspore"]


def test_the_runner_resolves_mindspore_to_the_layer_even_when_one_is_installed(fake_mindspore):
    result = _python(["-m", "paddle_mindspore", str(fake_mindspore / "which.py")],
                     fake_mindspore / "site")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "paddle_mindspore"]


ARGS = {"d_resnet50_recompute.py": ["--steps", "1", "--batch-size", "2"]}


@pytest.mark.parametrize("name", sorted(p.name for p in ORIGINALS.glob("*.py")))
def test_every_unmodified_program_runs_under_the_runner_like_its_port(name, runner_env, capsys):
    """Same seed, same printed output: the unmodified original under the runner and the port."""
    ms.set_seed(0)
    assert runner_env([str(ORIGINALS / name), *ARGS.get(name, [])]) == 0
    original = capsys.readouterr().out
    ms.set_seed(0)
    sys.argv = [str(COMPAT / name), *ARGS.get(name, [])]
    runpy.run_path(str(COMPAT / name), run_name="__main__")  # the port, as `python compat/<name>`
    ported = capsys.readouterr().out
    assert original.strip() and original == ported


def test_the_script_sees_its_argv_and_the_interpreter_is_restored(tmp_path, runner_env, capsys):
    script = tmp_path / "argv.py"
    script.write_text("import sys, mindspore\nprint(sys.argv[1:], mindspore.__name__)\n"
                      "if '--fail' in sys.argv: raise SystemExit(3)\n")
    argv, path = list(sys.argv), list(sys.path)
    assert runner_env([str(script), "--steps", "2"]) == 0
    assert capsys.readouterr().out.strip() == "['--steps', '2'] paddle_mindspore"
    with pytest.raises(SystemExit):
        runner_env([str(script), "--fail"])
    assert sys.argv == argv and sys.path == path and not ms.import_alias_installed()
    assert "mindspore" not in sys.modules
