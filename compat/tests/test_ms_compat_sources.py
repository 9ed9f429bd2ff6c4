"""The ported programs in compat/ differ from MindSpore's only in their imports."""

from __future__ import annotations

import re

import pytest
from _ms_helpers import COMPAT, ORIGINALS

PROGRAMS = sorted(p.name for p in ORIGINALS.glob("*.py"))
IMPORT = re.compile(r"^(import|from)\s")


def _body(text: str) -> list[str]:
    """Every line that is not an import line (comments and blank lines included)."""
    return [line for line in text.splitlines() if not IMPORT.match(line)]


def _imports(text: str) -> list[str]:
    return [line for line in text.splitlines() if IMPORT.match(line)]


def test_every_documented_program_is_there():
    assert PROGRAMS == ["a_recompute_docstring.py", "b_dense_cell_recompute.py", "c_block_tutorial.py",
                        "c_block_tutorial_recompute.py", "d_resnet50_recompute.py"]


@pytest.mark.parametrize("name", PROGRAMS)
def test_only_the_imports_changed(name):
    original = (ORIGINALS / name).read_text()
    ported = (COMPAT / name).read_text()
    assert _body(ported) == _body(original)
    # the import lines sit at the same places: the files differ line for line in imports only
    differing = [i for i, (a, b) in enumerate(zip(original.splitlines(), ported.splitlines(), strict=True))
                 if a != b]
    assert differing and all(IMPORT.match(original.splitlines()[i]) for i in differing)
    for ours, theirs in zip(_imports(ported), _imports(original), strict=True):
        assert ours == theirs or ours == theirs.replace("mindspore", "paddle_mindspore", 1) or \
            ours == theirs.replace("import mindspore", "import paddle_mindspore as mindspore") or \
            ours == theirs.replace("import mindspore as ms", "import paddle_mindspore as ms")
    assert any("mindspore" in line for line in _imports(original))
    assert not any(re.search(r"\bmindspore\b", line) and "paddle_mindspore" not in line
                   for line in _imports(ported))


def test_pytorch_half_uses_paddle_recompute():
    text = (COMPAT / "b_dense_checkpoint_paddle.py").read_text()
    assert "from paddle_recompute import recompute as cp" in text
    code = [line for line in _body(text) if not line.lstrip().startswith("#")]
    assert not any("torch" in line for line in code)
