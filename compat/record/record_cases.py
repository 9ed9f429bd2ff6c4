"""Record what real MindSpore 2.10 gives for every case of ms_cases.py, and its Tensor API.

    python compat/record/record_cases.py compat/tests/recorded/g_cases_reference.json
    python compat/record/record_cases.py --cases ms_cases_training \
        compat/tests/recorded/h_training_cases.json

Also writes ``g_tensor_api.json`` beside it: the public members of ``mindspore.Tensor`` (and the
four dunders the layer dispatches) and the members only ``mindspore.Parameter`` adds.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import mindspore as ms
import numpy as np
from mindspore import Parameter, Tensor, nn, ops

sys.path.insert(0, str(Path(__file__).parent))
import importlib  # noqa: E402

import ms_cases  # noqa: E402


def encode(value):
    """A JSON form of a case result: tensors as {shape, dtype, values}, containers recursively."""
    if isinstance(value, Tensor):
        array = value.asnumpy()
        return {"tensor": True, "param": isinstance(value, Parameter), "shape": list(array.shape),
                "dtype": str(value.dtype), "values": array.astype(np.float64).tolist()
                if array.dtype != np.bool_ else array.tolist()}
    if isinstance(value, tuple | list):
        return {"seq": type(value).__name__, "items": [encode(v) for v in value]}
    if isinstance(value, float | int | bool | str) or value is None:
        return {"py": type(value).__name__, "value": value}
    return {"py": type(value).__name__, "value": repr(value)}


def _check_overflow_on_cpu(cell_class):
    """Select MindSpore's IsFinite overflow check on every ``TrainOneStepWithLossScaleCell``: its
    Ascend and GPU checks have no CPU kernel (see ms_cases_training.py)."""
    init = cell_class.__init__

    def patched(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self.ascend_910b_target, self.enable_allfinite = True, False

    cell_class.__init__ = patched


def run(source):
    namespace = {"__name__": "ms_case", "ms": ms, "nn": nn, "ops": ops, "Tensor": Tensor,
                 "Parameter": Parameter, "np": np}
    namespace.update(ms_cases.inputs())
    try:
        exec(compile(source, "<case>", "exec"), namespace)
        return encode(namespace["result"])  # PyNative may raise only when a value is read
    except Exception as error:  # recorded: the layer must raise too
        return {"error": type(error).__name__, "message": str(error).split("\n")[0][:300]}


def main(argv):
    module = ms_cases
    if argv[:1] == ["--cases"]:
        module, argv = importlib.import_module(argv[1]), argv[2:]
        _check_overflow_on_cpu(nn.TrainOneStepWithLossScaleCell)
    out = Path(argv[0] if argv else "compat/tests/recorded/g_cases_reference.json")
    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
    ms.set_seed(0)
    record = {"mindspore": ms.__version__, "numpy": np.__version__, "cases": {}}
    for group, cases in module.GROUPS.items():
        for name, source in cases.items():
            record["cases"][f"{group}/{name}"] = {"source": source, "result": run(source)}
    out.write_text(json.dumps(record, indent=0, sort_keys=True) + "\n")
    errors = [k for k, v in record["cases"].items() if "error" in v["result"]]
    if module is not ms_cases:
        print(len(record["cases"]), "cases;", "errors:", errors)
        return
    dunders = ("__getitem__", "__setitem__", "__str__", "__repr__")
    api = {"mindspore": ms.__version__,
           "Tensor": sorted(n for n in dir(Tensor) if not n.startswith("_") or n in dunders),
           "Parameter_only": sorted(n for n in dir(Parameter)
                                    if not n.startswith("_") and n not in dir(Tensor))}
    (out.parent / "g_tensor_api.json").write_text(json.dumps(api, indent=0) + "\n")
    print(len(record["cases"]), "cases;", "errors:", errors)


if __name__ == "__main__":
    main(sys.argv[1:])
