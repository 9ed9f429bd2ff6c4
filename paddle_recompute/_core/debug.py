"""Operator traces for ``debug=True``: which layer and op saved each tensor.

A label is read off the Python stack at pack time: the innermost ``paddle.nn.Layer``
being called and the innermost function inside Paddle (the functional op), e.g.
``Linear > linear``.  Only used when the caller asked for it: walking the stack costs
microseconds per saved tensor.
"""

from __future__ import annotations

import os
import sys

import paddle

__all__ = ["op_label", "format_traces"]

_PADDLE_DIR = os.path.dirname(paddle.__file__)
_OWN_DIR = os.path.dirname(__file__)


def op_label() -> str:
    """``Layer > op`` for the code that is saving a tensor right now."""
    op = layer = None
    frame = sys._getframe(1)
    while frame is not None and (op is None or layer is None):
        filename = frame.f_code.co_filename
        if filename.startswith(_OWN_DIR):
            frame = frame.f_back
            continue
        if op is None and filename.startswith(_PADDLE_DIR) and "/nn/layer/" not in filename:
            op = frame.f_code.co_name
        code = frame.f_code
        if layer is None and code.co_name == "forward" and code.co_argcount:
            owner = frame.f_locals.get(code.co_varnames[0])  # `self`, whatever its name
            if isinstance(owner, paddle.nn.Layer):
                layer = type(owner).__name__
        frame = frame.f_back
    return f"{layer or '<function>'} > {op or '<op>'}"


def format_traces(forward: list, recompute: list, upto: int) -> str:
    """Side-by-side traces up to the first divergence or index ``upto``, whichever is first."""
    lines = ["", "Saved-tensor trace (index: forward | recompute) up to the first divergence:"]
    for i in range(min(upto + 1, max(len(forward), len(recompute)))):
        f = forward[i] if i < len(forward) else "<none>"
        r = recompute[i] if i < len(recompute) else "<none>"
        marker = "   <-- first divergence" if f != r else ""
        lines.append(f"  {i}: {f} | {r}{marker}")
        if marker:
            break
    return "\n".join(lines)
