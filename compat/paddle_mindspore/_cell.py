"""``nn.Cell`` and the ``.recompute()`` it shares with opted-in Paddle Layers.

``Cell`` is a ``paddle.nn.Layer`` whose ``forward`` is ``construct``. ``Cell.recompute(...)``
makes every later call of the cell a recompute region (MindSpore's PyNative semantics: in
backward every operator inside the cell is recomputed; the cell's output is kept, as it is
the region's output). :class:`RecomputeMixin` carries that method; plain Paddle Layers get it
only on request (see ``_layer_optin.py``).
"""

from __future__ import annotations

import inspect
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any

import paddle
from paddle.base.framework import EagerParamBase

from . import _cell_names as _names
from . import _recipes
from ._bprop import call_with_bprop, has_bprop
from ._checkparam import check_non_negative_int
from ._forward_reuse import recorded_call, set_grad
from ._one_device import note_cell_options
from ._region import RecomputeConfig, run_region
from ._surface.data import param_name, set_data
from ._tensor import ParameterTuple
from ._validate import bind, check_bool, check_bool_param

__all__ = ["RecomputeMixin", "Cell", "parse_recompute_options", "recompute_signature"]

_OPTION_KEYS = ("mp_comm_recompute", "parallel_optimizer_comm_recompute", "recompute_slice_activation")


def _signature(*, use_reentrant: bool = True, output_recompute: bool = False, early_stop: bool = True,
               context_fn: Callable | None = None, **kwargs: Any) -> None:
    """The signature of ``Cell.recompute`` (used to bind calls the way MindSpore does)."""


def parse_recompute_options(args: tuple, kwargs: dict) -> RecomputeConfig:
    """Validate ``Cell.recompute(*args, **kwargs)`` with MindSpore 2.10's errors.

    Raises:
        TypeError: a positional argument (``too many positional arguments``), a non-bool flag.
        ValueError: an unknown keyword, or ``context_fn`` with ``use_reentrant=True``.
    """
    bound = bind(_signature, args, kwargs).arguments
    use_reentrant = check_bool(bound.get("use_reentrant", True))
    output_recompute = check_bool(bound.get("output_recompute", False))
    early_stop = check_bool(bound.get("early_stop", True))
    options = dict(bound.get("kwargs", {}))
    for key, value in options.items():
        if key not in _OPTION_KEYS:
            raise ValueError(
                f"For 'recompute', keyword '{key}' is not recognized! the key kwargs must be "
                + ", ".join(f"'{k}'" for k in _OPTION_KEYS)
            )
        check_bool_param(key, value)
    return make_config(use_reentrant, output_recompute, early_stop, bound.get("context_fn"), options)


def make_config(use_reentrant: bool, output_recompute: bool, early_stop: bool,
                context_fn: Callable | None, options: dict | None = None) -> RecomputeConfig:
    """Apply MindSpore's rules: ``output_recompute`` implies non-reentrant; ``context_fn`` needs it."""
    if output_recompute:
        use_reentrant = False
        _recipes.enable()
    if context_fn is not None and use_reentrant:
        raise ValueError("context_fn is only supported when use_reentrant=False.")
    if context_fn is not None and not callable(context_fn):
        raise TypeError(f"context_fn must be callable, but got {type(context_fn).__name__}.")
    return RecomputeConfig(use_reentrant, output_recompute, early_stop, context_fn, options or {})


class RecomputeMixin:
    """Adds MindSpore's ``recompute()`` to a ``paddle.nn.Layer`` subclass.

    Example:
        >>> import paddle
        >>> from paddle_mindspore import RecomputeMixin
        >>> class Block(RecomputeMixin, paddle.nn.Layer):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.fc = paddle.nn.Linear(4, 4)
        ...     def forward(self, x):
        ...         return paddle.nn.functional.relu(self.fc(x))
        >>> block = Block()
        >>> block.recompute()
    """

    _ms_recompute: RecomputeConfig | None = None

    def recompute(self, *args: Any, **kwargs: Any) -> None:
        """``recompute(*, use_reentrant=True, output_recompute=False, early_stop=True, context_fn=None,
        **kwargs)``.

        Every later call of this layer is a recompute region: in backward every operator
        inside it (sublayers included) is recomputed, except its output, which is kept.
        ``mp_comm_recompute``, ``parallel_optimizer_comm_recompute`` and
        ``recompute_slice_activation`` are validated and recorded; they concern model- and
        optimizer-parallel communication, which a single device does not have: asking for one
        logs a warning once per process (NOTE [ Options for several devices ]).
        """
        self._ms_recompute = parse_recompute_options(args, kwargs)
        note_cell_options(self._ms_recompute.options)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        with _recipes.scope():
            return recorded_call(self, self._ms_region_call, args, kwargs)

    def _ms_region_call(self, *args: Any, **kwargs: Any) -> Any:
        config = self._ms_recompute
        if config is None:
            return super().__call__(*args, **kwargs)
        return run_region(self._ms_call, args, kwargs, config, (self,))

    def _ms_call(self, *args: Any, **kwargs: Any) -> Any:
        """The plain Layer call (hooks included), run inside the region."""
        return super().__call__(*args, **kwargs)


class Cell(RecomputeMixin, paddle.nn.Layer):
    """``mindspore.nn.Cell``: a ``paddle.nn.Layer`` whose forward is ``construct``.

    As in MindSpore, a new Cell is in inference mode (``training`` False) until
    ``set_train()``; parameters assigned as attributes are registered by Paddle.
    """

    requires_grad = False  # set_grad's flag, as MindSpore's Cell has it

    def __init__(self, auto_prefix: bool = True, flags: dict | None = None):
        super().__init__()
        self.training = False
        self._ms_flags = dict(flags or {})
        self._ms_auto_prefix = auto_prefix

    def __dir__(self) -> list[str]:
        """MindSpore's: the instance's and class's attributes, without its child cells and
        parameters (MindSpore keeps those apart, in ``_cells`` and ``_params``); mindformers'
        pattern recompute walks ``dir(cell)`` for primitives and ``_cells`` for cells."""
        return object.__dir__(self)

    def __setattr__(self, name: str, value: Any) -> None:
        params = self.__dict__.get("_parameters")
        if (params is not None and params.get(name) is not None and isinstance(value, paddle.Tensor)
                and not isinstance(value, EagerParamBase)):
            set_data(params[name], value)  # MindSpore: a Tensor assigned over a Parameter sets its data
            return
        if isinstance(value, ParameterTuple) and params is not None:
            self._register_tuple(name, value)
        super().__setattr__(name, value)
        _names.adopt(self, name, value)

    def _register_tuple(self, name: str, params: ParameterTuple) -> None:
        """MindSpore registers the parameters of a ParameterTuple attribute under their own names
        (``pos_embed.0``); Paddle's names cannot hold a dot, so they go in as ``name__i``."""
        paths = self.__dict__.setdefault("_ms_param_paths", {})
        listed = self.__dict__.setdefault("_ms_tuple_buffers", [])
        for i, param in enumerate(params):
            if not isinstance(param, EagerParamBase):
                # a running statistic (a buffer here) stays with the cell that owns it, but is
                # listed here, where MindSpore registers it (its order in parameters_and_names)
                listed.append((len(self._parameters), param_name(param), param))
                continue
            key = f"{name}__{i}"
            self.add_parameter(key, param)
            paths[key] = param_name(param)

    def add_sublayer(self, name: str, sublayer: paddle.nn.Layer) -> paddle.nn.Layer:
        out = super().add_sublayer(name, sublayer)
        _names.adopt(self, name, sublayer)
        return out

    def construct(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define construct()")

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        if has_bprop(self):  # NOTE [ Custom bprop ]
            return call_with_bprop(self, args, kwargs)
        return self.construct(*args, **kwargs)

    def set_train(self, mode: bool = True) -> Cell:
        """Training mode on (or off) for this cell and every sub-cell."""
        if mode:
            self.train()
        else:
            self.eval()
        return self

    def set_grad(self, requires_grad: bool = True) -> Cell:
        """Mark the cell so a gradient transform over it reuses its last forward (NOTE [
        Reusing a grad-flagged cell's forward] in ``_forward_reuse.py``); returns the cell."""
        return set_grad(self, requires_grad)

    def trainable_params(self, recurse: bool = True) -> list:
        """Parameters that require gradients, in MindSpore's order."""
        return [p for _, p in _names.ms_parameters(self, "", recurse) if not p.stop_gradient]

    def untrainable_params(self, recurse: bool = True) -> list:
        """Parameters that do not (BatchNorm moving statistics included)."""
        return [p for _, p in _names.ms_parameters(self, "", recurse) if p.stop_gradient]

    def get_parameters(self, expand: bool = True) -> Iterator:
        """Every parameter, BatchNorm moving statistics included, in MindSpore's order."""
        return (p for _, p in _names.ms_parameters(self, "", expand))

    def parameters_and_names(self, name_prefix: str = "", expand: bool = True) -> Iterator[tuple[str, Any]]:
        """``(path, parameter)`` pairs, named as MindSpore names them (``blocks.0.ln1.gamma``)."""
        yield from _names.ms_parameters(self, name_prefix, expand)

    def cells(self) -> list:
        return list(self.children())

    def init_parameters_data(self, auto_parallel_mode: bool = False) -> dict:
        """MindSpore's ``{original: initialised}`` map of every parameter. Parameters here hold their
        data from creation (MindSpore's PyNative mode), so each maps to itself."""
        return {p: p for p in self.get_parameters()}

    def extend_repr(self) -> str:
        """The cell's own settings, shown inside its ``repr`` (override in subclasses)."""
        return ""

    def __repr__(self) -> str:
        """MindSpore's form: ``Name(settings)``, or the settings and ``(child): repr`` lines."""
        extra = self.extend_repr()
        children = self.named_children()
        lines = [f"({key}): {value!r}" for key, value in children]
        if not lines:
            return f"{type(self).__name__}({extra})"
        body = "\n".join(([extra] if extra else []) + lines)
        return f"{type(self).__name__}(\n  " + body.replace("\n", "\n  ") + "\n)"

    def name_cells(self) -> OrderedDict:
        return OrderedDict(self.named_children())

    def cells_and_names(self, cells: Any = None, name_prefix: str = "") -> Iterator[tuple[str, Any]]:
        yield from self.named_sublayers(prefix=name_prefix, include_self=True)

    @property
    def _cells(self) -> OrderedDict:
        """MindSpore's ``Cell._cells``: the live name -> sub-cell dict (Paddle's sublayer registry),
        which mindformers walks to place its selective recompute marks."""
        return self._sub_layers

    @property
    def cls_name(self) -> str:
        """The Cell's class name (MindSpore's ``Cell.cls_name``)."""
        return type(self).__name__

    def set_comm_fusion(self, fusion_type: int, recurse: bool = True) -> Cell:
        """``Cell.set_comm_fusion``: sets ``comm_fusion`` on the trainable parameters, as MindSpore
        does; the value groups gradient communication across devices, of which there is one here,
        so it is recorded only. Returns ``self``.

        Raises:
            TypeError / ValueError: ``fusion_type`` is not a non-negative int (MindSpore's texts).
        """
        check_non_negative_int(fusion_type)
        for param in self.trainable_params(recurse):
            param.comm_fusion = fusion_type
        return self


def recompute_signature() -> inspect.Signature:
    """MindSpore's ``Cell.recompute`` signature (``self`` first, keyword-only options)."""
    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    params += list(inspect.signature(_signature).parameters.values())
    return inspect.Signature(params, return_annotation=None)


RecomputeMixin.recompute.__signature__ = recompute_signature()  # type: ignore[attr-defined]
