"""What a thread with no frame saves while the dispatching pair holds Paddle's slot.

NOTE [ Plain saves ]: with any pair in Paddle's slot, an operator's saved tensor takes
Paddle's hooked path instead of its plain one, and three things differ from a plain save
(``paddle/fluid/eager/tensor_wrapper.h``):

- the hooked path skips Paddle's in-place check, so a saved tensor modified in place
  would silently give wrong gradients instead of Paddle's ``PermissionDenied`` error;
- the packed object lives as long as the grad node, not until the node has run: Paddle
  clears only its own reference after the node runs, so a pack result that holds the
  tensor keeps every activation until the graph is freed (the bench measured a higher
  peak: 12.0 MB against 6.9 MB on its small GPT);
- ``PyLayer`` contexts pack what ``save_for_backward`` got (see ``raw_hooks.py``).

:class:`Plain` restores the first two: it records the tensor's in-place version and raises
Paddle's error when it moved, and it lets go of the tensor once unpacked unless the
backward that unpacks it retains the graph (``retain_graph=True``, or ``paddle.grad`` with
``create_graph``), so the buffer is freed when the node has run, as in plain Paddle.
The saved tensors a region keeps rather than recomputes let go the same way (``Kept``,
the policy region's ``KeepHandle``): otherwise every tensor a ``save_all`` region keeps
lives to the end of backward, and on the CPU (glibc malloc) the step pays for it in page
faults (``benchmarks/observation.py``).
"""

from __future__ import annotations

from .errors import retains_graph
from .versions import modified_in_place

__all__ = ["Plain", "spent"]


class Plain:
    """A tensor saved by a thread without frames, given as its view ``identity.detached``
    makes (NOTE [ No cycles ] in ``hooks.py``, NOTE [ Saved leaves ] in ``identity.py``),
    and the in-place version it had (a view shares its tensor's version counter)."""

    __slots__ = ("tensor", "version")

    def __init__(self, view):
        self.tensor = view
        self.version = view._inplace_version()

    def unpack(self):
        tensor = self.tensor
        if tensor is None:
            raise spent()
        current = tensor._inplace_version()
        if current != self.version:
            raise modified_in_place(current, self.version)
        if not retains_graph():
            self.tensor = None
        return tensor


def spent() -> RuntimeError:
    """The error of unpacking a saved tensor that let go of its buffer (a second backward)."""
    return RuntimeError(
        "Trying to backward through a saved tensor a second time: its buffer was freed "
        "after the first backward. Pass retain_graph=True to the first backward or grad call."
    )
