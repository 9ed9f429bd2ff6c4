"""Host allocator statistics for the command line.

Paddle reads ``FLAGS_enable_host_memory_stat`` once, when it is imported, and importing
``paddle_recompute`` imports Paddle.  So when the program starts without the flag, the
command that needs the statistics re-executes the same command line with the flag set
(``PYTHONPATH`` pointing at this copy of the package, so the same code runs).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ._errors import CLIError

__all__ = ["FLAG", "ensure_host_memory_stats", "use_device"]

FLAG = "FLAGS_enable_host_memory_stat"


def use_device(command: str, device: str | None) -> None:
    """``paddle.set_device(device)`` when one is given, with a clear error for a bad name.

    Raises:
        CLIError: Paddle rejects the device (unknown, or not compiled in).
    """
    if device is None:
        return
    import paddle

    try:
        paddle.set_device(device)
    except (ValueError, RuntimeError) as exc:
        raise CLIError(f"{command}: --device {device!r}: {str(exc).strip().splitlines()[0]}") from None


def _stats_on() -> bool:
    from .._bench.memory import HostMemory

    return HostMemory().enabled()


def ensure_host_memory_stats(command: str, *, may_reexec: bool) -> None:
    """Return when host statistics are recorded; otherwise re-execute (or explain).

    Args:
        command: the subcommand, for the message.
        may_reexec: True when running as the program (``main()`` without ``argv``);
            in-process callers get an error instead.

    Raises:
        CLIError: statistics are off and re-executing is not allowed (or did not help).
    """
    if "paddle" not in sys.modules:
        os.environ[FLAG] = "1"  # Paddle not imported yet: setting it is enough
        return
    if _stats_on():
        return
    if may_reexec and os.environ.get(FLAG) != "1":
        env = dict(os.environ, **{FLAG: "1"})
        root = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
        sys.stdout.flush()
        sys.stderr.flush()
        os.execve(sys.executable, [sys.executable, "-m", "paddle_recompute", *sys.argv[1:]], env)
    raise CLIError(
        f"{command}: Paddle's host memory statistics are off: Paddle was imported before "
        f"{FLAG}=1 was set. Run `{FLAG}=1 python ...`, or set os.environ['{FLAG}'] = '1' "
        f"before the first `import paddle`."
    )
