"""``paddle.jit.to_static``: regions run eagerly inside SOT programs; full-graph programs
get Paddle's static marking, with a warning once (or an error where that cannot work).

NOTE [ to_static ]: SOT (``to_static``'s default mode) translates the bytecode of every
Python function a decorated function calls, ours included, and fails on our bookkeeping:
the RNG capture (``rng.py``) came out as ``UnboundLocalError: '___graph_fn_saved_orig_1'``.
Paddle's own files are on SOT's skip list: SOT breaks the graph at a call into them and
runs the call eagerly, which is how Paddle's built-in recompute trains under SOT.  So
this package's directory joins that list (:func:`skip_in_sot`, at import): a region in a
decorated model, block or function runs eagerly, exactly as without ``to_static``, and
the code around it is still compiled.  Measured on a 4-block MLP (tests/core/test_to_static.py):
the same losses and gradients as no recompute, and the forward holds what Paddle's
built-in reentrant recompute holds under SOT (1.5 MiB, against 17.5 MiB without recompute).

Under ``full_graph=True`` (the AST translator) the whole function becomes one static
program, and ``recompute`` there is Paddle's static marking
(``paddle.distributed.auto_parallel.interface.recompute``), which only Paddle's static
recompute pass acts on: the same 4-block MLP holds 17.5 MiB with ours, with Paddle's
built-in and without recompute.  :func:`warn_full_graph` says so once per process.  The
AST translator would also rewrite our functions' source (and lose that branch), so the
package's public functions are on its ignore list too (:func:`keep_out_of_ast`).
"""

from __future__ import annotations

import os
import warnings

import paddle

__all__ = ["skip_in_sot", "keep_out_of_ast", "warn_full_graph", "FULL_GRAPH_MESSAGE"]

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_WARNED: list = []

FULL_GRAPH_MESSAGE = (
    "paddle_recompute.recompute inside paddle.jit.to_static(full_graph=True): the region is "
    "marked for Paddle's static recompute pass and saves no memory without it (a full-graph "
    "program holds every activation, as with Paddle's built-in recompute). Apply the pass "
    "(paddle.distributed.fleet with DistributedStrategy.recompute, or the auto-parallel "
    "engine), or use to_static without full_graph: under SOT, regions run eagerly and save "
    "memory."
)


def skip_in_sot() -> bool:
    """Put this package on SOT's skip list (NOTE [ to_static ]); False if SOT is absent."""
    try:
        from paddle.jit.sot.opcode_translator import skip_files
    except ImportError:
        return False
    names = skip_files.skip_file_names
    if _PACKAGE_DIR not in names:
        names.add(_PACKAGE_DIR)
        paddle.framework.core.eval_frame_skip_file_prefix(tuple(names))
    return True


def keep_out_of_ast(module) -> None:
    """Let ``to_static(full_graph=True)`` call ``module``'s functions as they are."""
    paddle.jit.ignore_module([module])


def warn_full_graph() -> None:
    """Warn, once per process, that full-graph regions need Paddle's static pass."""
    if not _WARNED:
        _WARNED.append(True)
        warnings.warn(FULL_GRAPH_MESSAGE, UserWarning, stacklevel=4)  # the caller of recompute
