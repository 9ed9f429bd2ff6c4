"""Saved profiles and plans: reading their JSON with clear errors, the Paddle version they
were made with, and the structure of the model they belong to.

NOTE [ Saved structure ]: a profile (and a plan, which copies its profile's) records what
it was measured on: every layer's qualified name and type, every parameter's shape and
dtype, and every input tensor's shape and dtype.  Loading or applying one for a model that
differs names the first difference instead of wrapping the wrong layers, or planning on
another model's bytes.  Paddle's version is recorded too: another version's kernels may
save other tensors for backward and run at other speeds, so its numbers may be off (a
warning, not an error: the plan still applies).
"""

from __future__ import annotations

import json
import os
import warnings
from typing import Any

import paddle

from ..._core import tree as _tree

__all__ = ["structure_of", "check_structure", "read_saved", "damaged", "version_stamp"]


def structure_of(table: dict, inputs: Any = None) -> dict:
    """The structure of the layers in ``table`` (name -> Layer) and of the input tensors in
    ``inputs`` (any nest), as plain data (NOTE [ Saved structure ])."""
    params = [[f"{name}.{p}" if name else p, list(t.shape), str(t.dtype).replace("paddle.", "")]
              for name, layer in table.items()
              for p, t in layer.named_parameters(include_sublayers=False)]
    out = {"layers": [[name, type(layer).__name__] for name, layer in table.items()],
           "parameters": params}
    if inputs is not None:
        out["inputs"] = [[list(t.shape), str(t.dtype).replace("paddle.", "")]
                         for t in _tree.flatten(inputs)[0]]
    return out


def _entries(structure: dict) -> dict:
    entries = {("layer", name): kind for name, kind in structure.get("layers", ())}
    entries.update({("parameter", name): (list(shape), dtype)
                    for name, shape, dtype in structure.get("parameters", ())})
    entries.update({("input", str(i)): (list(shape), dtype)
                    for i, (shape, dtype) in enumerate(structure.get("inputs", ()))})
    return entries


def _describe(what: str, value) -> str:
    if what == "layer":
        return f"a {value}"
    shape, dtype = value
    return f"{dtype} of shape {shape}"


def check_structure(api: str, source: str, saved: dict | None, here: dict) -> None:
    """Raise when ``here`` (this model) differs from ``saved`` (what ``source`` was made
    for), naming the first difference; nothing to check when ``saved`` is ``None`` (a file
    written before structures were recorded).  Inputs are compared only when both have them.

    Raises:
        ValueError: a layer, parameter or input differs, is missing, or is extra.
    """
    if saved is None:
        return
    if "inputs" not in saved or "inputs" not in here:
        saved, here = ({k: v for k, v in s.items() if k != "inputs"} for s in (saved, here))
    old, new = _entries(saved), _entries(here)
    for key, value in old.items():
        what, name = key
        if key not in new:
            problem = f"{what} {name!r} is missing here ({_describe(what, value)} there)"
        elif new[key] != value:
            problem = (f"{what} {name!r} is {_describe(what, new[key])} here, "
                       f"{_describe(what, value)} there")
        else:
            continue
        whom = "other inputs" if what == "input" else "another model"
        raise ValueError(f"{api}: {source} was made for {whom}: {problem}; "
                         f"profile and plan this model with these inputs instead")
    extra = next((key for key in new if key not in old), None)
    if extra is not None:
        what, name = extra
        raise ValueError(f"{api}: {source} was made for another model: {what} {name!r} "
                         f"({_describe(what, new[extra])}) is not in it; profile and plan this "
                         f"model with these inputs instead")


def version_stamp() -> dict:
    """What a saved file records of the software that made it: Paddle's version."""
    return {"paddle": paddle.__version__}


def read_saved(api: str, path: str | os.PathLike, fmt: str, what: str) -> dict:
    """The JSON object in ``path``, checked to be of format ``fmt``; warns when it was made
    with another Paddle version.

    Raises:
        ValueError: the file is not JSON, is cut short, or is not a saved ``what``.
    """
    name = os.fspath(path)
    with open(path) as fh:
        text = fh.read()
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        # the text stops inside a value: a string never closed, or the error at its very end
        cut = exc.msg.startswith("Unterminated string") or exc.pos >= len(text.rstrip())
        problem = ("it ends early (truncated?)" if cut and text.strip() else
                   "it is empty" if not text.strip() else
                   f"it is not JSON ({exc.msg}: line {exc.lineno}, column {exc.colno})")
        raise ValueError(f"{api}: cannot read {name!r}: {problem}; write it again with "
                         f"{what}.save") from None
    found = data.get("format") if isinstance(data, dict) else type(data).__name__
    if found != fmt:
        raise ValueError(f"{api}: {name!r} is not a {what.lower()} saved by {what}.save "
                         f"(expected format {fmt!r}, got {found!r})")
    made = data.get("paddle")
    if made is not None and made != paddle.__version__:
        warnings.warn(f"{api}: {name!r} was made with Paddle {made}, this is Paddle "
                      f"{paddle.__version__}: the bytes saved for backward and the times it "
                      f"records may differ (other kernels, other saved tensors); profile and "
                      f"plan again to be sure", UserWarning, stacklevel=3)
    return data


def damaged(api: str, path: str | os.PathLike, exc: Exception) -> ValueError:
    """The error for a saved file whose JSON parses but whose fields do not."""
    detail = f"missing field {exc}" if isinstance(exc, KeyError) else str(exc)
    return ValueError(f"{api}: {os.fspath(path)!r} is damaged ({detail}); write it again")
