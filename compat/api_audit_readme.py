"""The API audit's counts in the layer's README (``compat/paddle_mindspore/README.md``).

    python compat/api_audit.py --readme   # rewrite the block; prints it

The block sits between ``<!-- api-audit -->`` and ``<!-- /api-audit -->``;
``compat/tests/test_ms_api_audit.py`` checks that it equals what the audit finds now, so a
change to the layer that changes a count fails that test until the block is written again.
Sources: the installed mindformers (whole package, and the files importing
``mindformers.models.llama`` loads under MindSpore 2.10, recorded) and mindcv, read from their
folders, never imported.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
from pathlib import Path

import api_audit

README = api_audit.ROOT / "compat" / "paddle_mindspore" / "README.md"
LLAMA = api_audit.RECORDED / "mindformers_llama_imports.json"
BEGIN, END = "<!-- api-audit -->", "<!-- /api-audit -->"


def package_dir(name: str) -> Path:
    """The installed package's folder, found without importing it."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(f"api_audit --readme: {name} is not installed; install it (no dependencies "
                           f"needed: pip install --no-deps {name}) to count its MindSpore names")
    return Path(spec.submodule_search_locations[0])


def results() -> dict[str, dict]:
    """Label -> audit result, for each row of the README's table; each row carries
    ``in_mindspore`` from the package's recorded presence (``compat/record/record_api_presence.py``)."""
    mindformers = _with_presence(api_audit.audit(package_dir("mindformers")), "mindformers")
    version = importlib.metadata.version("mindformers")
    files = api_audit.entry_files(LLAMA)
    modules = len(list(package_dir("mindformers").rglob("*.py")))
    return {
        f"mindformers {version}, whole package ({modules} modules)": mindformers,
        f"mindformers {version}, `import mindformers.models.llama` ({len(files)} modules)":
            api_audit.restrict(mindformers, files),
        f"mindcv {importlib.metadata.version('mindcv')}":
            _with_presence(api_audit.audit(package_dir("mindcv")), "mindcv"),
    }


def _with_presence(result: dict, package: str) -> dict:
    present = json.loads((api_audit.RECORDED / f"{package}_api_presence.json").read_text())["present"]
    for row in result["rows"]:
        row["in_mindspore"] = present.get(row["name"])
    return result


def _methods_line(result: dict) -> str:
    rows = [r for r in result["rows"] if r["kind"] in ("cell", "primitive")]
    rows.sort(key=lambda r: (-sum(r["calls"].values()) - sum(r["unsure"].values()), r["name"]))

    def item(r: dict) -> str:
        mark = " (Paddle's)" if r.get("paddle") else ""
        return f"`{r['name']}`{mark} {sum(r['calls'].values())}+{sum(r['unsure'].values())}"

    missing = ", ".join(item(r) for r in rows if not r["provided"]) or "none"
    present = ", ".join(item(r) for r in rows if r["provided"]) or "none"
    return f"missing: {missing}; provided: {present}."


def block(counted: dict[str, dict] | None = None) -> str:
    counted = counted or results()
    lines = [BEGIN, "| MindSpore names referenced | names | provided | missing | of them not in MindSpore "
             "2.10 either | Cell / Primitive methods among the names (missing) |",
             "|---|---:|---:|---:|---:|---:|"]
    for label, result in counted.items():
        methods = [r for r in result["rows"] if r["kind"] in ("cell", "primitive")]
        absent = sum(not r["provided"] and r["in_mindspore"] is False for r in result["rows"])
        lines.append(f"| {label} | {result['total']} | {result['provided']} | "
                     f"{result['total'] - result['provided']} | {absent} | "
                     f"{len(methods)} ({sum(not r['provided'] for r in methods)}) |")
    llama = list(counted.values())[1]
    lines += ["", "Cell and Primitive methods called on the Llama import path (call sites whose receiver is "
              "known to be one + sites whose receiver the audit cannot tell, counted for each class with "
              "that method): " + _methods_line(llama), END]
    return "\n".join(lines)


def update(readme: Path = README, counted: dict[str, dict] | None = None) -> str:
    """Write the block into ``readme`` (between the markers) and return it."""
    text = readme.read_text()
    if BEGIN not in text or END not in text:
        raise RuntimeError(f"api_audit --readme: {readme} has no {BEGIN} ... {END} block; add the two "
                           f"markers where the counts belong")
    new = block(counted)
    head, rest = text.split(BEGIN, 1)
    readme.write_text(head + new + rest.split(END, 1)[1])
    return new
