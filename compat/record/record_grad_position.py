"""Record what MindSpore 2.10's ``grad`` and ``value_and_grad`` return for each ``grad_position``.

    /work/msvenv/bin/python compat/record/record_grad_position.py \
        compat/tests/recorded/grad_position.json

For ``grad_position`` an int, a tuple of one, a tuple of two and ``None``, crossed with
``weights`` (none, a list of one Parameter, a bare Parameter), ``has_aux`` and the two
transforms: the nesting of the result (tuples, Tensors) and every Tensor's values, in order.
Then the ``grad_position`` values MindSpore refuses (a list, a float, a non-int element, an
empty tuple, negatives, positions past the inputs): the exception's type and first line, and
whether it came when the transform was made or when it was called.  ``CASE`` is MindSpore code;
``compat/tests/test_ms_grad_position.py`` runs it under the layer.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

POSITIONS = {"int": 0, "one": (0,), "second": (1,), "two": (0, 1), "none": None, "bool": True}
REFUSED = {"list": [0], "float": 1.5, "str_element": (0, "a"), "empty": (), "negative": -1,
           "negative_element": (-1,), "past_end": 2, "past_end_element": (5,), "duplicate": (0, 0)}

CASE = """
x = Tensor(np.array([1.0, 2.0], np.float32))
y = Tensor(np.array([3.0, -4.0], np.float32))
w = Parameter(Tensor(np.array([0.5, -1.5], np.float32)), name="w")

def f(a, b):
    return (a * b * w).sum()

def f_aux(a, b):
    return (a * b * w).sum(), a * 2

def nesting(value):
    if isinstance(value, tuple):
        return [nesting(v) for v in value]
    return type(value).__name__ if not isinstance(value, Tensor) else "Tensor"

def tensors(value):
    if isinstance(value, tuple):
        return [t for v in value for t in tensors(v)]
    return [value.asnumpy().tolist()] if isinstance(value, Tensor) else []

def run(api, grad_position, weights, has_aux):
    transform = {"grad": ms.grad, "value_and_grad": ms.value_and_grad}[api]
    weights = {"none": None, "list": [w], "parameter": w}[weights]
    stage = "make"
    try:
        fn = transform(f_aux if has_aux else f, grad_position=grad_position, weights=weights,
                       has_aux=has_aux)
        stage = "call"
        out = fn(x, y)
    except Exception as e:
        return {"stage": stage, "error": type(e).__name__, "message": str(e).strip().splitlines()[0]}
    return {"nesting": nesting(out), "values": tensors(out)}
"""


def cases():
    """(name, api, grad_position, weights, has_aux) for every recorded call."""
    for pname, position in POSITIONS.items():
        for weights in ("none", "list", "parameter"):
            for has_aux in (False, True):
                for api in ("grad", "value_and_grad"):
                    yield f"{api}/{pname}/{weights}/aux={has_aux}", api, position, weights, has_aux
    for pname, position in REFUSED.items():
        for api in ("grad", "value_and_grad"):
            yield f"{api}/{pname}", api, position, "none", False


def run_cases(namespace: dict) -> dict:
    exec(compile(CASE, "<case>", "exec"), namespace)
    return {name: namespace["run"](api, position, weights, has_aux)
            for name, api, position, weights, has_aux in cases()}


def main(argv: list[str]) -> None:
    import mindspore as ms
    import numpy as np

    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
    namespace = {"__name__": "ms_case", "ms": ms, "np": np, "Tensor": ms.Tensor, "Parameter": ms.Parameter}
    record = {"mindspore": ms.__version__, "cases": run_cases(namespace)}
    Path(argv[0]).write_text(json.dumps(record, indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
