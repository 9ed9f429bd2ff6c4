"""Saved tensors whose identity matters come back in backward as themselves.

NOTE [ Saved leaves ]: a ``PyLayer`` of a large-model stack saves its weight
(``ctx.save_for_backward(x, weight)``) and, in backward, accumulates the weight's gradient
on the weight object: into ``weight.main_grad`` (Paddle's ``mp_layers.py`` with
``mp_fused_linear_param_grad_add``, PaddleFormers' FP8 linear, ``MixPrecisionLayer``), or
into ``weight.grad`` in place.  Handed a copy (a detached view, a recomputed value, a host
copy) it writes the gradient into the copy and the gradient is lost without an error.  So
every frame keeps a saved tensor that is a parameter (``persistable``) or a leaf that needs
a gradient as the very object it was given, and never recomputes or copies it:

* it costs no memory: its layer (or the caller) holds it anyway, and the region would
  hold it as an input for the rerun;
* it cannot form the cycle of NOTE [ No cycles ] in ``hooks.py``: a leaf's grad node is
  its accumulation node, which holds no saver;
* the slot still counts in a rerun (the k-th saved tensor stays the k-th), but no rerun
  needs it; a rerun runs with each such leaf's ``stop_gradient`` as it was in the forward
  (``FlagsReplayed`` in ``nonreentrant.py``), so freezing a layer between a forward and
  its backward changes neither what the rerun saves nor the gradient Paddle gives it.

Paddle hands a pack hook the object a ``PyLayer`` passed to ``save_for_backward``, and a
new wrapper (same buffer and leaf flag) for what a C++ operator saves: only the first has
an identity to keep, and for the second keeping the wrapper is as good as a view.

A reentrant region reruns its function with parameters swapped for detached aliases
(NOTE [ Reentrant inputs ] in ``reentrant.py``); a ``PyLayer`` inside the rerun saves
the alias, so ``save_for_backward`` maps aliases back to their parameters (``unaliased``).

Any other saved tensor comes back as a detached view (or a recomputed, kept or host
value) with the saved tensor's ``stop_gradient`` (``detached``): a ``PyLayer``'s backward
reads it (``None if x.stop_gradient else dx``), and ``Tensor.detach()`` alone would turn
every gradient it returns for an activation into None.

NOTE [ Inputs as aliases ]: a region keeps its inputs for the rerun (NOTE [ Inputs only for
a rerun ] in ``nonreentrant.py``), and a caller may free the data of a tensor object it
holds once it is done with it: Paddle's ``PipelineParallel`` clears each output a stage has
sent (``_release_output``: ``Tensor._clear_dataptr()``, on every stage but the last).  A
stage passes its attention mask on as it is, the same object that each recomputed block
took, so a region that kept that object found it empty in its rerun ("Tensor ... has not
been initialized"; Paddle's own non-reentrant recompute crashes the process there).
Clearing empties that one object; another tensor over the same memory keeps it.  So a
region keeps each input but parameters and buffers as a :func:`detached` alias of its own,
taken when the forward ends: it costs no memory (the same allocation), and it shares the
input's in-place version counter (NOTE [ Rerun inputs ] in ``versions.py`` reads it).  A
parameter stays itself: its layer holds it, and nothing frees a parameter.  The rerun
detached every input anyway; the reentrant region keeps the inputs themselves beside the
aliases, for their identity (a leaf that needs a gradient, below) and their grad nodes
(``paddle.grad`` pruning), and reruns from the aliases.
"""

from __future__ import annotations

__all__ = ["keeps_identity", "detached", "kept", "rerun_aliases", "Itself", "ALIAS_OF", "unaliased",
           "aliasing"]

ALIAS_OF = "_paddle_recompute_alias_of"  # on a reentrant rerun's alias: its parameter
_ALIASING = [0]  # reentrant reruns running with aliases, all threads


def keeps_identity(tensor) -> bool:
    """Whether a saved ``tensor`` must come back as itself: a parameter (or buffer), or a
    leaf that needs a gradient (NOTE [ Saved leaves ])."""
    return tensor.persistable or (not tensor.stop_gradient and tensor.is_leaf)


def detached(tensor):
    """A view of ``tensor`` without autograd meta (NOTE [ No cycles ] in ``hooks.py``) that
    keeps its ``stop_gradient`` (NOTE [ Saved leaves ])."""
    d = tensor.detach()
    if not tensor.stop_gradient:
        d.stop_gradient = False
    return d


def kept(tensor):
    """What a frame that keeps a saved ``tensor`` (rather than recomputing it) holds: the
    tensor itself when its identity matters (NOTE [ Saved leaves ]), else a :func:`detached`
    view.  Callers tell the two apart by ``kept(t) is t``."""
    return tensor if keeps_identity(tensor) else detached(tensor)


def rerun_aliases(tensors: list, skip=()) -> list:
    """What a region keeps of its input ``tensors`` for the rerun: a :func:`detached` alias of
    each but parameters and buffers (and the indices in ``skip``, kept as they are); see
    NOTE [ Inputs as aliases ]."""
    if not skip:  # loops, not a comprehension with enumerate: this runs for every region
        return [t if t.persistable else detached(t) for t in tensors]
    return [t if i in skip or t.persistable else detached(t) for i, t in enumerate(tensors)]


class Itself:
    """A saved tensor kept as the same object (NOTE [ Saved leaves ])."""

    __slots__ = ("tensor",)

    def __init__(self, tensor):
        self.tensor = tensor

    def unpack(self):
        return self.tensor


class aliasing:
    """Context manager: a reentrant rerun with parameter aliases runs in the body."""

    __slots__ = ()

    def __enter__(self) -> None:
        _ALIASING[0] += 1

    def __exit__(self, *exc: object) -> None:
        _ALIASING[0] -= 1


def unaliased(tensors: tuple) -> tuple:
    """``tensors`` with each reentrant alias replaced by its parameter."""
    if not _ALIASING[0]:
        return tensors
    return tuple(_param_of(t) for t in tensors)


def _param_of(t):
    try:
        return t.__dict__.get(ALIAS_OF, t)
    except AttributeError:  # not an object with attributes (None, a number)
        return t
