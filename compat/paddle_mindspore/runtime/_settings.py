"""``mindspore.runtime.set_memory`` and ``set_cpu_affinity``: settings each process makes once.

On one device as MindSpore's CPU build runs them: ``set_memory`` checks its sizes as MindSpore
does and keeps them (Paddle's CPU allocator grows as needed, as MindSpore's CPU memory pool
does up to ``max_size``; a network that needs more than ``max_size`` is not stopped here);
``set_cpu_affinity(True, cpus)`` binds the calling (main) thread to those cores with
``os.sched_setaffinity``; without a list MindSpore binds its main thread to the cores the
process may use, which it already runs on. Both raise ``RuntimeError`` when called again,
as MindSpore does.
"""

from __future__ import annotations

import os
import re
from typing import Any

from .._validate import not_provided

__all__ = ["set_memory", "set_cpu_affinity"]

_MEMORY = re.compile(r"^\d+(\.\d+)?GB$")
_RANGE = re.compile(r"^(\d+)-(\d+)$")
_settings: dict[str, Any] = {}


def _size(value: Any) -> float:
    if not isinstance(value, str) or not _MEMORY.match(value):
        raise ValueError(
            "The memory value should be in correct format!It must be a string ending with 'GB', in "
            "addition to that, it must contain only numbers or decimal points, such as \"5GB\" or "
            f"\"3.5GB\", but got {value}."
        )
    if value in ("0GB", "0.0GB"):
        raise ValueError("The memory value should not be \"0GB\".")
    return float(value[:-2])


def set_memory(init_size: str = "2GB", increase_size: str = "2GB", max_size: str = "1024GB",
               optimize_level: str = "O0", huge_page_reserve_size: str = "0GB") -> None:
    """Set the memory pool's sizes, once per process (MindSpore's checks and texts).

    Raises:
        RuntimeError: called again. ValueError: a size not like ``"2GB"`` (or ``"0GB"``), or
            ``optimize_level`` not ``"O0"``/``"O1"``.
    """
    if "memory" in _settings:
        raise RuntimeError("The 'set_memory' can not be set repeatedly.")
    sizes = [_size(v) for v in (init_size, increase_size, max_size)]
    if not isinstance(huge_page_reserve_size, str) or not _MEMORY.match(huge_page_reserve_size):
        raise ValueError(
            f"'huge_page_reserve_size' should be like \"0GB\", but got {huge_page_reserve_size}.")
    if optimize_level not in ("O0", "O1"):
        raise ValueError(f"The optimize_level must be one of ['O0', 'O1'], but got {optimize_level}.")
    _settings["memory"] = {"init_size": sizes[0], "increase_size": sizes[1], "max_size": sizes[2],
                           "optimize_level": optimize_level,
                           "huge_page_reserve_size": float(huge_page_reserve_size[:-2])}


def _cpus(affinity_cpu_list: Any) -> set[int]:
    if not isinstance(affinity_cpu_list, list):
        raise TypeError(f"The parameter 'affinity_cpu_list' must be list, but got {type(affinity_cpu_list)}")
    cpus: set[int] = set()
    for item in affinity_cpu_list:
        if not isinstance(item, str):
            raise TypeError(f"The item in 'affinity_cpu_list' must be str, but got {type(item)}")
        found = _RANGE.match(item)
        if not found or int(found[1]) > int(found[2]):
            raise ValueError(f"The item in 'affinity_cpu_list' must be like 'cpuidX-cpuidY', but got {item}")
        cpus.update(range(int(found[1]), int(found[2]) + 1))
    return cpus


def set_cpu_affinity(enable_affinity: bool, affinity_cpu_list: Any = None, module_to_cpu_dict: Any = None,
                     bind_file: Any = None) -> None:
    """Bind the main thread to CPU cores, once per process (see the module docstring).

    Raises:
        RuntimeError: called again, or a listed core is not available to the process.
        TypeError / ValueError: malformed arguments (MindSpore's checks).
        NotImplementedError: ``module_to_cpu_dict`` naming a module other than ``"main"``, or a
            ``bind_file`` (MindSpore's runtime, PyNative and dataset threads do not exist here).
    """
    if not isinstance(enable_affinity, bool):
        raise TypeError(f"The parameter 'enable_affinity' must be bool, but got {type(enable_affinity)}")
    if "cpu_affinity" in _settings:
        raise RuntimeError("The 'mindspore.runtime.set_cpu_affinity' cannot be set repeatedly.")
    if bind_file is not None:
        raise not_provided("mindspore.runtime.set_cpu_affinity(bind_file=...)", "pass affinity_cpu_list")
    cpus = _cpus(affinity_cpu_list) if affinity_cpu_list else set()
    if module_to_cpu_dict:
        if not isinstance(module_to_cpu_dict, dict):
            raise TypeError(
                f"The parameter 'module_to_cpu_dict' must be dict, but got {type(module_to_cpu_dict)}")
        if set(module_to_cpu_dict) - {"main"}:
            raise not_provided(f"mindspore.runtime.set_cpu_affinity(module_to_cpu_dict={module_to_cpu_dict})",
                               "only the 'main' module's thread exists here")
        cpus = {int(c) for c in module_to_cpu_dict["main"]}
    _settings["cpu_affinity"] = {"enable": enable_affinity, "cpus": sorted(cpus)}
    if not (enable_affinity and cpus):
        return
    available = os.sched_getaffinity(0)
    if not cpus <= available:
        raise RuntimeError(f"set_cpu_affinity: cores {sorted(cpus - available)} are not available "
                           f"in the environment (available: {sorted(available)})")
    os.sched_setaffinity(0, cpus)
