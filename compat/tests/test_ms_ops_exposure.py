"""``ops`` and ``ops.operations`` expose the layer's operator classes exactly where MindSpore 2.10 does.

The recorded lists (``compat/record/record_ops_primitives.py``) are every ``Primitive`` class
MindSpore exposes in each module. The layer's operator classes are its ``Primitive`` classes and
its stand-ins (``_unprovided.py``) anywhere under ``paddle_mindspore.ops``; each of them must be
an attribute of ``ops`` / ``ops.operations`` exactly when MindSpore's module has that name.
"""

from __future__ import annotations

import importlib
import pkgutil

import pytest
from _ms_cases import recorded

from paddle_mindspore import ops
from paddle_mindspore._unprovided import is_unprovided

MODULES = {"mindspore.ops": ops, "mindspore.ops.operations": ops.operations}


def _is_operator_class(value) -> bool:
    return isinstance(value, type) and (issubclass(value, ops.Primitive) or is_unprovided(value))


def _operator_classes(module) -> set[str]:
    return {name for name in dir(module)
            if not name.startswith("_") and _is_operator_class(getattr(module, name))}


@pytest.fixture(scope="module")
def provided() -> set[str]:
    """The names of every operator class the layer defines or imports in any module of its ``ops``."""
    names = _operator_classes(ops)
    for info in pkgutil.walk_packages(ops.__path__, ops.__name__ + "."):
        names |= _operator_classes(importlib.import_module(info.name))
    return names


@pytest.mark.parametrize("key", sorted(MODULES))
def test_the_layers_operator_classes_are_exposed_where_mindspores_are(key, provided):
    record = recorded("ops_primitive_names.json")
    assert record["mindspore"] == "2.10.0"
    exposed = _operator_classes(MODULES[key])
    assert exposed == set(record[key]) & provided, (
        f"exposed but not in MindSpore's {key}: {sorted(exposed - set(record[key]))}; "
        f"in MindSpore's {key} but not exposed: {sorted(set(record[key]) & provided - exposed)}")


def test_ops_takes_its_operator_classes_from_operations():
    """One list: every operator class in ``operations.__all__`` is the same object in ``ops``, and
    ``ops`` has no operator class that ``operations`` lacks except ``Primitive``, as MindSpore."""
    listed = {name for name in ops.operations.__all__ if _is_operator_class(getattr(ops.operations, name))}
    assert all(getattr(ops, name) is getattr(ops.operations, name) for name in listed)
    assert _operator_classes(ops) - listed == {"Primitive"}
    assert set(ops.operations.__all__) <= set(ops.__all__)
    # submodules are not star-exported
    assert not any(name.endswith("_ops") for name in ops.operations.__all__)
