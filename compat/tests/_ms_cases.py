"""Run the cases of compat/record/ms_cases.py on the layer and compare with MindSpore's record.

``recorded/g_cases_reference.json`` holds what MindSpore 2.10 gave for each case's source
(``compat/record/record_cases.py``). :func:`run_case` executes the same source here; the
namespace holds the layer's ``ms``/``nn``/``ops``, so the source is MindSpore code (NOTE
[ Caller-scoped Tensor semantics ]).
"""

from __future__ import annotations

import importlib.util
import json

import numpy as np
import paddle
from _ms_helpers import COMPAT
from _ms_helpers import DATA as _DATA

import paddle_mindspore as ms
from paddle_mindspore._surface.data import dtype_name
from paddle_mindspore._surface.shape import Shape

RECORDED = _DATA.parent / "recorded"

_spec = importlib.util.spec_from_file_location("ms_cases", COMPAT / "record" / "ms_cases.py")
cases_module = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cases_module)


def recorded(name: str) -> dict:
    """A JSON record from compat/tests/recorded/."""
    return json.loads((RECORDED / name).read_text())


def run_case(source: str) -> object:
    """Execute a case's source on the layer; returns ``result`` (or the exception raised)."""
    namespace = {"__name__": "ms_case", "ms": ms, "nn": ms.nn, "ops": ms.ops, "Tensor": ms.Tensor,
                 "Parameter": ms.Parameter, "np": np}
    namespace.update(cases_module.inputs())
    ms.set_seed(0)
    try:
        exec(compile(source, "<case>", "exec"), namespace)
    except Exception as error:  # compared with the exception MindSpore raised
        return error
    return namespace["result"]


def compare(expected: dict, actual: object, where: str = "result", atol: float = 1e-6,
            rtol: float = 1e-5) -> None:
    """Assert ``actual`` matches MindSpore's recorded ``expected`` (see record_cases.encode)."""
    __tracebackhide__ = True
    if "error" in expected:
        assert isinstance(actual, Exception), f"{where}: MindSpore raised {expected['error']}, got {actual!r}"
        assert type(actual).__name__ == expected["error"] or expected["error"] in _ALIASES.get(
            type(actual).__name__, ()), f"{where}: {type(actual).__name__}: {actual} vs {expected}"
        return
    assert not isinstance(actual, Exception), f"{where}: raised {type(actual).__name__}: {actual}"
    if "tensor" in expected:
        assert isinstance(actual, paddle.Tensor), f"{where}: expected a Tensor, got {type(actual).__name__}"
        if not (expected["param"] and where.startswith(BUFFER_PARAMETERS)):
            assert isinstance(actual, ms.Parameter) == expected["param"], f"{where}: Parameter or not"
        assert list(actual.shape) == expected["shape"], f"{where}: shape {list(actual.shape)}"
        assert dtype_name(actual.dtype) == expected["dtype"], f"{where}: dtype {actual.dtype}"
        # reshaped: an empty tensor's nested list ([]) does not keep its shape
        values = np.asarray(expected["values"], dtype=actual.numpy().dtype).reshape(expected["shape"])
        np.testing.assert_allclose(actual.numpy(), values, rtol=rtol, atol=atol, err_msg=where)
    elif "seq" in expected:
        kind = "tuple" if isinstance(actual, Shape) else type(actual).__name__  # Shape: a tuple subclass
        assert kind == expected["seq"], f"{where}: {type(actual).__name__} vs {expected['seq']}"
        assert len(actual) == len(expected["items"]), f"{where}: length {len(actual)}"
        for i, (e, a) in enumerate(zip(expected["items"], actual, strict=True)):
            compare(e, a, f"{where}[{i}]", atol, rtol)
    else:
        assert type(actual).__name__ == expected["py"], f"{where}: {type(actual).__name__}"
        if expected["py"] == "float":
            np.testing.assert_allclose(actual, expected["value"], rtol=rtol, atol=atol, err_msg=where)
        else:
            assert actual == expected["value"], f"{where}: {actual!r} vs {expected['value']!r}"


_ALIASES: dict[str, tuple[str, ...]] = {}
# BatchNorm's moving statistics: parameters in MindSpore, buffers here (compat/README.md)
BUFFER_PARAMETERS = ("nn/batchnorm1d_train[1]", "nn/batchnorm1d_train[2]", "nn/batchnorm2d_train[1]",
                     "nn/batchnorm2d_train[2]")
