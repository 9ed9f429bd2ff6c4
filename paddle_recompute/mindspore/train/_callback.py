"""``mindspore.train.Callback``: the base of training callbacks."""

from __future__ import annotations

from typing import Any

__all__ = ["Callback"]


class Callback:
    """Every hook does nothing unless a subclass overrides it (MindSpore's base class: the
    ``on_train_*`` hooks call the legacy ``begin``/``epoch_*``/``step_*`` hooks, as there)."""

    def __enter__(self) -> Callback:
        return self

    def __exit__(self, *err: Any) -> None:
        return None

    def begin(self, run_context: Any) -> None:
        """Called once before training."""

    def epoch_begin(self, run_context: Any) -> None:
        """Called before each epoch."""

    def epoch_end(self, run_context: Any) -> None:
        """Called after each epoch."""

    def step_begin(self, run_context: Any) -> None:
        """Called before each step."""

    def step_end(self, run_context: Any) -> None:
        """Called after each step."""

    def end(self, run_context: Any) -> None:
        """Called once after training."""

    def on_train_begin(self, run_context: Any) -> None:
        self.begin(run_context)

    def on_train_epoch_begin(self, run_context: Any) -> None:
        self.epoch_begin(run_context)

    def on_train_epoch_end(self, run_context: Any) -> None:
        self.epoch_end(run_context)

    def on_train_step_begin(self, run_context: Any) -> None:
        self.step_begin(run_context)

    def on_train_step_end(self, run_context: Any) -> None:
        self.step_end(run_context)

    def on_train_end(self, run_context: Any) -> None:
        self.end(run_context)

    def on_eval_begin(self, run_context: Any) -> None:
        """Called once before evaluation."""

    def on_eval_epoch_begin(self, run_context: Any) -> None:
        """Called before each evaluation epoch."""

    def on_eval_epoch_end(self, run_context: Any) -> None:
        """Called after each evaluation epoch."""

    def on_eval_step_begin(self, run_context: Any) -> None:
        """Called before each evaluation step."""

    def on_eval_step_end(self, run_context: Any) -> None:
        """Called after each evaluation step."""

    def on_eval_end(self, run_context: Any) -> None:
        """Called once after evaluation."""
