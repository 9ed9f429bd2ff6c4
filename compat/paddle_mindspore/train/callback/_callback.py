"""``Callback``, ``RunContext`` and the ``cb_params`` that ``Model`` fills for them.

As in MindSpore, each ``on_train_*`` hook calls the older name by default (``on_train_begin``
-> ``begin``, ``on_train_epoch_end`` -> ``epoch_end``, ``on_train_step_end`` -> ``step_end``,
``on_train_end`` -> ``end``), so callbacks written either way run; ``on_eval_*`` hooks do
nothing by default.
"""

from __future__ import annotations

from contextlib import ExitStack
from typing import Any

__all__ = ["set_cur_net", "Callback", "RunContext", "CallbackParams", "CallbackList"]

_TRAIN_HOOKS = {
    "on_train_begin": "begin",
    "on_train_epoch_begin": "epoch_begin",
    "on_train_epoch_end": "epoch_end",
    "on_train_step_begin": "step_begin",
    "on_train_step_end": "step_end",
    "on_train_end": "end",
}
_EVAL_HOOKS = (
    "on_eval_begin",
    "on_eval_epoch_begin",
    "on_eval_epoch_end",
    "on_eval_step_begin",
    "on_eval_step_end",
    "on_eval_end",
)


class CallbackParams(dict):
    """``cb_params``: a dict whose keys read as attributes (``cb_params.cur_step_num``)."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name: str, value: Any) -> None:
        self[name] = value


class RunContext:
    """What a callback receives: ``original_args()`` is ``cb_params``; ``request_stop()`` ends
    training after the current step."""

    def __init__(self, original_args: Any):
        if not isinstance(original_args, dict):
            raise TypeError(
                f"The argument 'original_args' of RunContext should be dict type, "
                f"but got {type(original_args)}."
            )
        self._original_args = original_args
        self._stop_requested = False

    def original_args(self) -> Any:
        return self._original_args

    def request_stop(self) -> None:
        self._stop_requested = True

    def get_stop_requested(self) -> bool:
        return self._stop_requested


class Callback:
    def __enter__(self) -> Callback:
        return self

    def __exit__(self, *err: Any) -> None:
        return None

    def begin(self, run_context: RunContext) -> None: ...
    def epoch_begin(self, run_context: RunContext) -> None: ...
    def epoch_end(self, run_context: RunContext) -> None: ...
    def step_begin(self, run_context: RunContext) -> None: ...
    def step_end(self, run_context: RunContext) -> None: ...
    def end(self, run_context: RunContext) -> None: ...

    def on_train_begin(self, run_context: RunContext) -> None:
        self.begin(run_context)

    def on_train_epoch_begin(self, run_context: RunContext) -> None:
        self.epoch_begin(run_context)

    def on_train_epoch_end(self, run_context: RunContext) -> None:
        self.epoch_end(run_context)

    def on_train_step_begin(self, run_context: RunContext) -> None:
        self.step_begin(run_context)

    def on_train_step_end(self, run_context: RunContext) -> None:
        self.step_end(run_context)

    def on_train_end(self, run_context: RunContext) -> None:
        self.end(run_context)

    def on_eval_begin(self, run_context: RunContext) -> None: ...
    def on_eval_epoch_begin(self, run_context: RunContext) -> None: ...
    def on_eval_epoch_end(self, run_context: RunContext) -> None: ...
    def on_eval_step_begin(self, run_context: RunContext) -> None: ...
    def on_eval_step_end(self, run_context: RunContext) -> None: ...
    def on_eval_end(self, run_context: RunContext) -> None: ...


class CallbackList:
    """Calls a hook on every callback in order. As a context manager (as ``Model`` uses it) it
    enters every callback first and calls hooks on what each ``__enter__`` returned, exiting them
    in reverse order afterwards, as MindSpore's ``_CallbackManager`` does (mindcv's
    ``StateMonitor`` opens its ``SummaryRecord`` in ``__enter__``)."""

    def __init__(self, callbacks: Any):
        items = (
            []
            if callbacks is None
            else list(callbacks)
            if isinstance(callbacks, list | tuple)
            else [callbacks]
        )
        bad = [c for c in items if not isinstance(c, Callback)]
        if bad:
            raise TypeError(
                f"When the 'callbacks' is a list, the elements in 'callbacks' must be Callback "
                f"functions, but got {type(bad[0])}."
            )
        self.callbacks = items

    def __enter__(self) -> CallbackList:
        self._stack = ExitStack().__enter__()
        entered = []
        for callback in self.callbacks:
            target = self._stack.enter_context(callback)
            entered.append(target if isinstance(target, Callback) else callback)
        self.callbacks = entered
        return self

    def __exit__(self, *err: Any) -> Any:
        return self._stack.__exit__(*err)

    def call(self, hook: str, run_context: RunContext) -> None:
        for callback in self.callbacks:
            getattr(callback, hook)(run_context)


_CUR_NET = None


def set_cur_net(net) -> None:
    """MindSpore's ``set_cur_net``: remembers the network being trained, for checkpoint callbacks."""
    global _CUR_NET
    _CUR_NET = net
