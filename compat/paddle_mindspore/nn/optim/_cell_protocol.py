"""What MindSpore's ``nn.Optimizer`` gives its subclasses as a Cell, for optimizers written on it
(mindcv's AdamW, Adan, Lion, NAdam define ``construct`` over these).

- Parameters held as attributes (``global_step``, ``beta1_power``, the ``ParameterTuple`` clones)
  are the optimizer's state, in the order they were set: ``get_parameters()`` and
  ``parameters_and_names()`` yield them (and those of its schedule cells), as MindSpore does.
- Assigning a Tensor to an attribute that holds a Parameter writes into that Parameter
  (``self.beta1_power = beta1_power``), as a Cell's ``set_data`` does.
- The helpers a ``construct`` calls: ``decay_weight``, ``scale_grad``, ``flatten_gradients``,
  ``gradients_centralization``, ``get_weight_decay``, ``_is_dynamic_lr_or_weight_decay``,
  ``_grad_sparse_indices_deduplicate``, ``_set_base_target``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import paddle

from ..._cell import Cell
from ..._surface.data import param_name
from ..._tensor import Parameter, ParameterTuple
from ..._validate import not_provided
from ...ops._graph import HyperMap, Map

__all__ = ["OptimizerCell"]

_TARGETS = ("CPU", "Ascend", "GPU")


class OptimizerCell:
    """Parameter bookkeeping and MindSpore's construct helpers (mixed into ``Optimizer``)."""

    def _start_cell(self) -> None:
        object.__setattr__(self, "_ms_state", {})
        self.map_, self.map_reverse = Map(), Map(None, True)
        self.hyper_map, self.hyper_map_reverse = HyperMap(), HyperMap(None, True)

    def __setattr__(self, name: str, value: Any) -> None:
        state = self.__dict__.get("_ms_state")
        if state is not None:
            held = state.get(name)
            takes_value = isinstance(value, paddle.Tensor) and not isinstance(value, Parameter)
            if isinstance(held, Parameter) and takes_value:
                with paddle.no_grad():  # a Cell's set_data: the Parameter takes the value
                    paddle.assign(value.astype(held.dtype), output=held)
                return
            if isinstance(value, Parameter) or isinstance(value, ParameterTuple | Cell):
                state[name] = value
            else:
                state.pop(name, None)
        object.__setattr__(self, name, value)

    @property
    def cls_name(self) -> str:
        return type(self).__name__

    def parameters_and_names(self) -> Iterator[tuple[str, paddle.Tensor]]:
        """The optimizer's state Parameters (its own, then its schedule cells'), once each."""
        own, scheduled = self.own_and_cell_parameters()
        yield from own
        yield from scheduled

    def own_and_cell_parameters(self) -> tuple[list, list]:
        """``parameters_and_names()`` in its two parts: the Parameters the optimizer holds itself,
        and those of its schedule cells (a list of rates, a ``LearningRateSchedule``), which
        MindSpore names after every state Parameter."""
        seen: set[int] = set()
        own, cells = [], []
        for value in self._ms_state.values():
            if isinstance(value, Cell):
                cells.append(value)
                continue
            for param in value if isinstance(value, ParameterTuple) else (value,):
                if id(param) not in seen:
                    seen.add(id(param))
                    own.append((param_name(param), param))
        scheduled = []
        for cell in cells:
            for name, param in cell.parameters_and_names():
                if id(param) not in seen:
                    seen.add(id(param))
                    scheduled.append((name, param))
        return own, scheduled

    def get_parameters(self, expand: bool = True) -> Iterator[paddle.Tensor]:
        return (param for _, param in self.parameters_and_names())

    def trainable_params(self, recurse: bool = True) -> list[paddle.Tensor]:
        return [p for p in self.get_parameters() if not p.stop_gradient]

    def _is_dynamic_lr_or_weight_decay(self) -> bool:
        return self.dynamic_lr or self.dynamic_weight_decay

    def get_weight_decay(self) -> Any:
        return self.weight_decay

    def decay_weight(self, gradients: tuple) -> tuple:
        """``g + weight_decay * p`` for the parameters whose decay flag is set."""
        if not self.exec_weight_decay:
            return gradients
        decays = self.weight_decay if self.is_group else (self.weight_decay,) * len(gradients)
        return tuple(
            g + p * d.astype(p.dtype) if flag else g
            for d, flag, p, g in zip(decays, self.decay_flags, self._parameters, gradients, strict=True)
        )

    def scale_grad(self, gradients: tuple) -> tuple:
        """Gradients times ``1 / loss_scale`` (unchanged when the loss scale is 1)."""
        if not self.need_scale:
            return gradients
        return tuple(g * self.reciprocal_scale.astype(g.dtype) for g in gradients)

    def flatten_gradients(self, gradients: tuple) -> tuple:
        return gradients  # MindSpore flattens only parameters made contiguous, never here

    def gradients_centralization(self, gradients: tuple) -> tuple:
        return gradients  # grad_centralization=True raises at construction (optimizer.py)

    def _grad_sparse_indices_deduplicate(self, gradients: tuple) -> tuple:
        return gradients  # dense gradients only: MindSpore returns them unchanged

    def _set_base_target(self, value: Any) -> None:
        if not isinstance(value, str):
            raise TypeError(f"For 'Optimizer', the property 'target' must be string, but got {type(value)}")
        if value not in _TARGETS:
            raise ValueError(
                "For 'Optimizer', the property 'target' must be one of ['CPU', 'Ascend' ,'GPU'], "
                f"but got {value}"
            )
        if value != "CPU":
            raise ValueError(
                "For 'Optimizer', the property 'target' cannot be set to 'GPU' or 'Ascend' in the 'CPU' "
                "environment."
            )
        object.__setattr__(self, "_target", value)

    def broadcast_params(self, optim_result: Any) -> Any:
        raise not_provided("mindspore.nn.Optimizer.broadcast_params (the parallel optimizer)")
