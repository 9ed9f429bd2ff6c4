"""The test layout: test files sit in area folders (tests/README.md), their names are unique,
the lane markers are registered, and every entry of the lane tables (the root conftest.py)
names a test that exists."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
# tests/README.md says which part of the package each folder covers
AREAS = {"core", "selective", "entry", "planner", "interop", "testing_kit", "cli", "bench", "examples",
         "real_models", "layout", "mindspore"}


def _test_files() -> list[Path]:
    return sorted(p for folder in (TESTS, ROOT / "compat") if folder.is_dir()
                  for p in folder.rglob("test_*.py"))


@pytest.fixture(scope="module")
def lanes(request):
    """The root conftest.py, as pytest loaded it."""
    (module,) = [p for p in request.config.pluginmanager.get_plugins()
                 if Path(getattr(p, "__file__", "") or "x").resolve() == ROOT / "conftest.py"]
    return module


def test_test_files_sit_in_area_folders():
    misplaced = [p.relative_to(ROOT).as_posix() for p in _test_files()
                 if p.is_relative_to(TESTS) and p.relative_to(TESTS).parts[0] not in AREAS]
    assert not misplaced, f"test files outside the area folders of tests/README.md: {misplaced}"


def test_test_file_names_are_unique():
    """Folders have no ``__init__.py`` (helpers in tests/ are imported by name), so two test
    files of one name would clash on import."""
    seen: dict[str, list[str]] = {}
    for p in _test_files():
        seen.setdefault(p.name, []).append(p.relative_to(ROOT).as_posix())
    assert not {n: ps for n, ps in seen.items() if len(ps) > 1}


def test_lane_markers_are_registered(pytestconfig):
    registered = {line.split(":")[0].strip() for line in pytestconfig.getini("markers")}
    assert registered >= {"slow", "subprocess", "real_models"}


def _functions(path: Path) -> set[str]:
    return {n.name for n in ast.walk(ast.parse(path.read_text()))
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name.startswith("test")}


def test_every_lane_entry_names_a_test(lanes):
    files = {p.name: p for p in _test_files()}
    wrong = []
    for marker, table in lanes.LANES.items():
        for name, tests in table.items():
            if name not in files:
                wrong.append(f"{marker}: no test file {name}")
            elif tests != lanes.ALL:
                wrong += [f"{marker}: {name} has no test {t}" for t in sorted(tests)
                          if t.split("[")[0] not in _functions(files[name])]
    assert not wrong, "\n".join(wrong)


def test_in_table_covers_a_file_a_function_or_one_parametrization(lanes):
    table = {"test_a.py": lanes.ALL, "test_b.py": {"test_f", "test_g[x]"}}
    assert lanes.in_table(table, "test_a.py", "test_any", "test_any[1]")
    assert lanes.in_table(table, "test_b.py", "test_f", "test_f[1]")
    assert lanes.in_table(table, "test_b.py", "test_g", "test_g[x]")
    assert not lanes.in_table(table, "test_b.py", "test_g", "test_g[y]")
    assert not lanes.in_table(table, "test_c.py", "test_f", "test_f")


def test_this_run_marks_by_the_tables(request, lanes):
    """The collected items of this run carry the markers the tables give them."""
    for item in request.session.items:
        function = getattr(item, "originalname", None) or item.name
        expected = lanes.lanes_of(item.path.name, function, item.name)
        assert {m for m in lanes.LANES if item.get_closest_marker(m)} == expected, item.nodeid


def test_processes_and_real_models_are_slow_too(lanes):
    assert lanes.lanes_of("test_data_parallel.py", "test_x", "test_x") == {"subprocess", "slow"}
    assert lanes.lanes_of("test_trainer_plan.py", "test_x", "test_x") == {"real_models", "slow"}
    assert lanes.lanes_of("test_state.py", "test_x", "test_x") == set()
