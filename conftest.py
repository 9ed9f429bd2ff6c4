"""Test lanes: the markers ``slow``, ``subprocess`` and ``real_models``, given by test file
name, so a file keeps its lane wherever it lives (``tests/``, ``compat/tests/``).

    python -m pytest -q -m "not slow" tests      # the fast lane (under 3 minutes on 2 cores)
    python -m pytest -q tests compat/tests       # everything, as CI runs it

A table maps a file's name to ``ALL`` (every test in it) or to test names: a bare name
covers every parametrization of that function, ``name[id]`` one of them.  ``slow`` holds
the tests that take long (the fast lane leaves them out); ``subprocess`` those that start
processes (two ranks over gloo, the command line as a program, examples and benchmark
scripts); ``real_models`` those that build PaddleFormers, ``paddle.vision`` or mindcv
models.  tests/layout/test_lanes.py checks that every entry names a test that exists.
"""

from __future__ import annotations

import pytest

ALL = "*"

SUBPROCESS: dict[str, object] = {}
REAL_MODELS: dict[str, object] = {}
SLOW: dict[str, object] = {}

LANES = {"slow": SLOW, "subprocess": SUBPROCESS, "real_models": REAL_MODELS}


def in_table(table: dict, file_name: str, function: str, test_id: str) -> bool:
    """Whether ``table`` covers the test ``test_id`` (function ``function``) of ``file_name``."""
    names = table.get(file_name)
    return names == ALL or (names is not None and (function in names or test_id in names))


def pytest_collection_modifyitems(config, items):
    for item in items:
        function = getattr(item, "originalname", None) or item.name
        for marker, table in LANES.items():
            if in_table(table, item.path.name, function, item.name):
                item.add_marker(getattr(pytest.mark, marker))
