"""MindSpore's functional differentiation: ``grad``, ``value_and_grad`` and ``GradOperation``.

Gradients come from a backward that frees activations as it goes, read from the ``.grad`` of
the differentiated tensors, their earlier ``.grad`` put back (NOTE [ A lean backward ] in
``_backward.py``), or from ``paddle.grad`` where that cannot give the same gradients: either
way parameters' ``.grad`` are left as they were, as MindSpore's functional transforms are
pure. The inputs being differentiated are the function's own leaves: each is passed as a
detached copy that requires grad.  The output is seeded with
ones (``sens``), so for several outputs the gradient is that of their sum.  Gradients that do
not exist (an input the output does not depend on) are zeros, as in MindSpore.  The forward
runs inside a recipe scope, so ``Primitive.recompute`` takes effect in it. A grad-flagged
Cell's recorded forward is reused as MindSpore reuses it (``_forward_reuse.py``); the hooks
registered on the inputs and weights run on their gradients (``_grad_hooks.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import paddle

from paddle_recompute import extend

from . import _backward, _recipes
from . import _grad_hooks as hooks
from ._forward_reuse import Run, own_forward, take
from ._tensor import Parameter
from ._validate import not_provided

__all__ = ["grad", "value_and_grad", "GradOperation"]


def _positions(grad_position: Any) -> tuple[int, ...]:
    """MindSpore's checks and texts (``_convert_grad_position_type``), in its order: a bool is
    an int (``True`` is position 1), a list is refused, duplicates are looked for first."""
    if grad_position is None:
        return ()
    if isinstance(grad_position, tuple):
        if len(set(grad_position)) != len(grad_position):
            raise ValueError("There are duplicate positions in `grad_position`, please check it")
        for p in grad_position:
            if not isinstance(p, int):
                raise TypeError("For 'F.grad', the element in 'grad_position' must be int.")
            if p < 0:
                raise ValueError("The element in grad_position must be >= 0.")
        return tuple(int(p) for p in grad_position)
    if isinstance(grad_position, int):
        if grad_position < 0:
            raise ValueError("grad_position must be >= 0.")
        return (int(grad_position),)
    raise TypeError("For 'F.grad', the 'grad_position' must be int or tuple.")


def _weight_list(weights: Any) -> list:
    if weights is None:
        return []
    if isinstance(weights, Parameter):
        return [weights]
    if isinstance(weights, Sequence) and all(isinstance(w, paddle.Tensor) for w in weights):
        return list(weights)
    raise TypeError(f"For 'grad', the 'weights' must be a Parameter, a ParameterTuple or a list of "
                    f"Parameters, but got {type(weights).__name__}.")


def _leaf(arg: Any, position: int) -> paddle.Tensor:
    if not isinstance(arg, paddle.Tensor):
        raise TypeError(f"For 'grad', the input at grad_position {position} must be a Tensor, "
                        f"but got {type(arg).__name__}.")
    leaf = arg.detach()
    if leaf.is_floating_point():
        leaf.stop_gradient = False
    return leaf


def _differentiated(out: Any, has_aux: bool) -> Any:
    if not has_aux:
        return out
    if not isinstance(out, tuple) or len(out) < 2:
        raise ValueError("For 'grad', when 'has_aux' is True, the function must return a tuple "
                         "with at least two elements.")
    return out[0]


def _gradients(targets: Any, requested: list, sens: Any, private: Sequence = (),
               others: Sequence = ()) -> list:
    """The gradient of each requested tensor, None where the targets do not depend on it.
    ``private``: the transform's own copies of inputs, which the backward may give a ``.grad``;
    ``others``: tensors the function may reach and must leave alone (``_backward.py``)."""
    outs = extend.flatten(targets)[0]
    seeds = [paddle.ones_like(t) for t in outs] if sens is None else extend.flatten(sens)[0]
    if len(seeds) != len(outs):
        raise ValueError(f"For 'grad', the sens must match the outputs: {len(outs)} outputs, "
                         f"{len(seeds)} sens.")
    pairs = [(t, s) for t, s in zip(outs, seeds, strict=True) if not t.stop_gradient]
    wanted = [i for i, r in enumerate(requested) if not r.stop_gradient]
    found: list = [None] * len(requested)
    if pairs and wanted:
        unique = {id(requested[i]): requested[i] for i in wanted}  # a tensor asked for twice
        roots, cotangents, asked = [t for t, _ in pairs], [s for _, s in pairs], list(unique.values())
        grads = _backward.lean_gradients(roots, cotangents, asked, private, others)
        if grads is None:
            grads = paddle.grad(roots, asked, grad_outputs=cotangents, allow_unused=True)
        by_id = dict(zip(unique, grads, strict=True))
        for i in wanted:
            found[i] = by_id[id(requested[i])]
    return found


def differentiate(fn: Callable[..., Any], args: tuple, kwargs: dict, positions: Sequence[int],
                  weights: list, has_aux: bool = False, sens: Any = None) -> tuple[Any, list, list]:
    """Run ``fn`` (or reuse its recorded forward: ``_forward_reuse.py``) and return ``(output,
    input gradients, weight gradients)``, each through the hooks registered on its input or
    weight (NOTE [ Gradient hooks on copies ] in ``_grad_hooks.py``)."""
    for p in positions:
        if not 0 <= p < len(args):  # MindSpore's text (a RuntimeError from its C++ side)
            raise RuntimeError(f"Position index {p} is exceed input size.")
    run = take(fn, args, kwargs)
    if run is not None and _reusable(run, positions):
        out, leaves = run.out, [run.passed[p] for p in positions]
        private = [t for t, given in zip(run.passed, run.given, strict=True) if t is not given]
        received = [*run.passed, *run.kwargs.values()]
    else:
        passed = list(args)
        for i in sorted({p % len(args) for p in positions}):  # a position named twice: one leaf
            passed[i] = _leaf(args[i], i)
        leaves = [passed[p] for p in positions]
        with _recipes.scope(), own_forward():
            out = fn(*passed, **kwargs)
        private = leaves
        received = [*passed, *kwargs.values()]
    requested = leaves + list(weights)
    others = _cell_parameters(fn) + received  # what the function can reach that we know of
    found = _gradients(_differentiated(out, has_aux), requested, sens, private, others)
    sources = [args[p] for p in positions] + list(weights)
    # a gradient that does not exist is zeros, and runs no hook (recorded)
    grads = [paddle.zeros_like(r) if g is None else hooks.apply(s, g)
             for r, s, g in zip(requested, sources, found, strict=True)]
    return _detached(out), grads[:len(positions)], grads[len(positions):]


def _cell_parameters(fn: Any) -> list:
    """The parameters of ``fn`` when it is a Cell (or any Paddle Layer), else none."""
    return list(paddle.nn.Layer.parameters(fn)) if isinstance(fn, paddle.nn.Layer) else []


def _reusable(run: Run, positions: Sequence[int]) -> bool:
    """Whether the recorded forward gives the requested inputs' gradients: each is a leaf (a
    non-leaf input's gradient would pass its own Paddle hooks too)."""
    return all(isinstance(run.passed[p], paddle.Tensor) and run.passed[p].is_leaf for p in positions)


def _detached(out: Any) -> Any:
    return extend.map_tensors(lambda t: t.detach(), out)


def _arrange(input_grads: list, weight_grads: list, grad_position: Any, weights: Any) -> Any:
    # one position, given as an int or as a tuple of one, is one Tensor in MindSpore (recorded)
    ig = input_grads[0] if len(input_grads) == 1 else tuple(input_grads)
    wg = weight_grads[0] if isinstance(weights, Parameter) else tuple(weight_grads)
    if grad_position is None:
        return wg
    if weights is None:
        return ig
    return ig, wg


def _check_targets(grad_position: Any, weights: Any) -> None:
    if grad_position is None and weights is None:
        raise ValueError("`grad_position` and `weight` can not be None at the same time.")


def _check_called(positions: tuple, grad_position: Any) -> None:
    """What MindSpore checks when the transform is called (its texts, RuntimeErrors)."""
    if grad_position is not None and not positions:
        raise RuntimeError("grad_position should not be empty when grad by position!")


def grad(fn: Callable[..., Any], grad_position: Any = 0, weights: Any = None, has_aux: bool = False,
         return_ids: bool = False) -> Callable[..., Any]:
    """``mindspore.grad``: a function returning the gradients of ``fn`` (and ``aux`` if ``has_aux``)."""
    _check_targets(grad_position, weights)
    if return_ids:
        raise not_provided("mindspore.grad(return_ids=True)")
    positions, wlist = _positions(grad_position), _weight_list(weights)

    def grad_fn(*args: Any, **kwargs: Any) -> Any:
        _check_called(positions, grad_position)
        out, ig, wg = differentiate(fn, args, kwargs, positions, wlist, has_aux)
        grads = _arrange(ig, wg, grad_position, weights)
        return (grads, tuple(out[1:])) if has_aux else grads

    return grad_fn


def value_and_grad(fn: Callable[..., Any], grad_position: Any = 0, weights: Any = None,
                   has_aux: bool = False, return_ids: bool = False) -> Callable[..., Any]:
    """``mindspore.value_and_grad``: a function returning ``(fn's outputs, gradients)``.

    With ``has_aux=True`` only the first output is differentiated; all outputs are returned.
    """
    _check_targets(grad_position, weights)
    if return_ids:
        raise not_provided("mindspore.value_and_grad(return_ids=True)")
    positions, wlist = _positions(grad_position), _weight_list(weights)

    def value_and_grad_fn(*args: Any, **kwargs: Any) -> Any:
        _check_called(positions, grad_position)
        out, ig, wg = differentiate(fn, args, kwargs, positions, wlist, has_aux)
        return out, _arrange(ig, wg, grad_position, weights)

    return value_and_grad_fn


class GradOperation:
    """``ops.GradOperation(get_all=False, get_by_list=False, sens_param=False)``.

    ``GradOperation()(net)(*inputs)`` is the gradient with respect to the first input;
    ``get_all`` gives all inputs', ``get_by_list`` the ``weights``' (pass them as
    ``GradOperation(...)(net, weights)``), both give ``(inputs', weights')``;
    ``sens_param`` takes the output's sensitivity as the last input.
    """

    def __init__(self, get_all: bool = False, get_by_list: bool = False, sens_param: bool = False):
        self.get_all, self.get_by_list, self.sens_param = get_all, get_by_list, sens_param

    def __call__(self, fn: Callable[..., Any], weights: Any = None) -> Callable[..., Any]:
        if self.get_by_list and weights is None:
            raise ValueError("For 'GradOperation', 'weights' must be given when 'get_by_list' is True.")
        wlist = _weight_list(weights) if self.get_by_list else []

        def after_grad(*args: Any, **kwargs: Any) -> Any:
            sens = None
            if self.sens_param:
                *args, sens = args
            if self.get_all:
                positions = [i for i, a in enumerate(args) if isinstance(a, paddle.Tensor)]
            else:
                positions = [0] if not self.get_by_list else []
            _, ig, wg = differentiate(fn, tuple(args), kwargs, positions, wlist, False, sens)
            if self.get_all and self.get_by_list:
                return tuple(ig), tuple(wg)
            if self.get_by_list:
                return tuple(wg)
            return tuple(ig) if self.get_all else ig[0]

        return after_grad
