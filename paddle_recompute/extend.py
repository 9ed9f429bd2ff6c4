"""The extension API: what a package built on paddle-recompute may use besides its top-level names.

A layer on top of recompute (the MindSpore layer, ``paddle_mindspore``, is one) imports the
everyday names from :mod:`paddle_recompute` (``recompute``, ``RecomputeError``,
``register_rng_state``, ``register_stateful_layer``, ``saved_tensors_hooks``) and the names
below from here, never a ``paddle_recompute._*`` module.  Each name keeps its contract for as
long as it is listed here; everything else in the package may change without notice.

Saved-tensor frames (how recompute regions own Paddle's saved-tensor hook slot):

- ``pushed(frame)``: context manager that makes ``frame`` this thread's innermost packer for
  the body.  A frame is any object with ``pack(tensor) -> packed``, where ``packed`` has
  ``unpack() -> tensor`` and ``unpack(pack(t))`` equals ``t`` in value, shape, dtype and place.
  Frames nest with recompute regions and with :func:`paddle_recompute.saved_tensors_hooks`;
  exiting out of order raises :class:`~paddle_recompute.RecomputeError`.
- ``active_frames()``: this thread's frames, outermost first (empty outside any region).
- ``Kept(tensor)``: a packed value that keeps ``tensor`` (a detached view: no reference
  cycle through its grad node) for a frame that saves rather than recomputes; ``unpack()``
  returns it once, or every time while the backward retains the graph.

Nested structures (tuples, lists, dicts, their subclasses and named tuples, rebuilt as their own
type; any other value is a constant of the spec):

- ``flatten(tree) -> (leaves, spec)``: the tensors of ``tree`` in order and a spec of the rest.
- ``unflatten(spec, leaves)``: the inverse of ``flatten``.
- ``map_tensors(fn, tree)``: ``tree`` with every tensor replaced by ``fn(tensor)``.

Replaying a forward (what recomputation restores, NOTE [ Replay ] in the implementation):

- ``ForwardState(preserve_rng_state, roots)``: captures the RNG (optional) and AMP state of a
  forward call and the layers under ``roots``; ``state.replayed()`` is a context manager that
  runs its body with that state and the stateful layers' buffers frozen, and puts every piece of
  global state back on exit, also after an error.  Call ``state.forward_done()`` after the
  forward so replay skips generators it did not use.
- ``find_roots(function, args, kwargs)``: the ``paddle.nn.Layer`` objects reachable from a
  callable and its arguments, each once (the ``roots`` a ``ForwardState`` walks): the
  callable, its arguments, partials, closures, the module globals a function reads and a
  holder object's attributes (docs/modes-and-state.md, "Which layers a region runs").
- ``grad_enabled()``: whether Paddle records gradients now (cheaper than
  ``paddle.is_grad_enabled``, the same answer).

Frames on the stack:

- ``OBSERVING_MODULES``: the module-name prefixes of recompute's own code that can stand
  between user code and a ``paddle.Tensor`` operator (inside a selective-recompute region
  the operators are wrapped to observe each call).  A layer that dispatches on its caller
  skips frames whose ``__name__`` starts with one of them to find the code that wrote the
  operator.

Example:
    >>> import paddle
    >>> from paddle_recompute.extend import flatten, unflatten
    >>> leaves, spec = flatten({"a": paddle.ones([2]), "b": 3})
    >>> len(leaves), unflatten(spec, leaves)["b"]
    (1, 3)
"""

from ._core.amp import grad_enabled
from ._core.hooks import Kept, active_frames, pushed
from ._core.layers import find_roots
from ._core.state import ForwardState
from ._core.tree import flatten, map_tensors, unflatten

OBSERVING_MODULES = ("paddle_recompute._core", "paddle_recompute._selective", "paddle_recompute._planner")

__all__ = [
    "OBSERVING_MODULES",
    "ForwardState",
    "Kept",
    "active_frames",
    "find_roots",
    "flatten",
    "grad_enabled",
    "map_tensors",
    "pushed",
    "unflatten",
]
