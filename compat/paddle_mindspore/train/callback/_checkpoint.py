"""``CheckpointConfig`` and ``ModelCheckpoint``: MindSpore's schedule, file names and contents.

Files are ``<prefix>-<epoch>_<step in epoch>.ckpt`` in ``directory`` (default: the current
directory), written every ``save_checkpoint_steps`` steps (or ``save_checkpoint_seconds``) and
at the end of training unless that step was just saved; only the newest
``keep_checkpoint_max`` files of the prefix are kept; a prefix whose files already exist
becomes ``<prefix>_1`` (``_2``, ...). A file holds the training network's parameters, then the
optimizer's state under MindSpore's names (``global_step``, ``learning_rate``, ``momentum``,
``moments.*``) and ``append_info``.
"""

from __future__ import annotations

import os
import time
from typing import Any

from ..._unprovided import unprovided_class as _unprovided_class
from ..._validate import not_provided
from .._optimizer_state import optimizer_entries
from .._surface import named_parameters
from ..serialization import save_checkpoint
from ._callback import Callback, RunContext

__all__ = ["CheckpointManager", "CheckpointConfig", "ModelCheckpoint"]


def _non_negative(value: Any, name: str) -> Any:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
        raise ValueError(
            f"For 'CheckpointConfig', the argument '{name}' must be a non-negative int, but got {value!r}."
        )
    return value


class CheckpointConfig:
    def __init__(
        self,
        save_checkpoint_steps: int = 1,
        save_checkpoint_seconds: int = 0,
        keep_checkpoint_max: int = 5,
        keep_checkpoint_per_n_minutes: int = 0,
        integrated_save: bool = True,
        async_save: Any = False,
        saved_network: Any = None,
        append_info: Any = None,
        enc_key: bytes | None = None,
        enc_mode: str = "AES-GCM",
        exception_save: bool = False,
        crc_check: bool = False,
        remove_redundancy: bool = False,
        format: str = "ckpt",
        **kwargs: Any,
    ):
        steps = _non_negative(save_checkpoint_steps, "save_checkpoint_steps")
        seconds = _non_negative(save_checkpoint_seconds, "save_checkpoint_seconds")
        keep = _non_negative(keep_checkpoint_max, "keep_checkpoint_max")
        minutes = _non_negative(keep_checkpoint_per_n_minutes, "keep_checkpoint_per_n_minutes")
        if not steps and not seconds and not keep and not minutes:
            raise ValueError(
                "For 'CheckpointConfig', the input arguments 'save_checkpoint_steps', "
                "'save_checkpoint_seconds', 'keep_checkpoint_max' and "
                "'keep_checkpoint_per_n_minutes' can't be all None or 0."
            )
        if minutes or exception_save or enc_key is not None or remove_redundancy:
            raise not_provided(
                "CheckpointConfig(keep_checkpoint_per_n_minutes / exception_save / enc_key / "
                "remove_redundancy)"
            )
        if format not in ("ckpt", "safetensors"):
            raise ValueError(
                f"For 'save_checkpoint', the format must be 'safetensors' or 'ckpt', but got {format}."
            )
        self.save_checkpoint_steps = steps
        self.save_checkpoint_seconds = None if steps else seconds
        self.keep_checkpoint_max = keep if keep else 1
        self.integrated_save, self.async_save, self.saved_network = integrated_save, async_save, saved_network
        self.append_dict = (
            dict(append_info[0])
            if isinstance(append_info, list) and append_info and isinstance(append_info[0], dict)
            else {n: 0 for n in (append_info or []) if isinstance(n, str)}
        )
        self.crc_check, self.format = crc_check, format


def _free_prefix(directory: str, prefix: str) -> str:
    """``prefix``, or ``prefix_N`` when checkpoint files of that prefix are already there."""
    suffix = 0
    for name in os.listdir(directory):
        stem, ext = os.path.splitext(name)
        if ext not in (".ckpt", ".safetensors") or not name.startswith(prefix) or name[len(prefix)].isalpha():
            continue
        dash = name[len(prefix) :].find("-")
        number = name[len(prefix) + 1 : len(prefix) + dash]
        suffix = max(suffix, 1) if dash == 0 else max(suffix, int(number) + 1) if number.isdigit() else suffix
    return f"{prefix}_{suffix}" if suffix else prefix


class ModelCheckpoint(Callback):
    def __init__(
        self, prefix: str = "CKP", directory: str | None = None, config: CheckpointConfig | None = None
    ):
        super().__init__()
        if callable(prefix) or callable(directory):
            raise not_provided("ModelCheckpoint with a callable prefix or directory")
        if not isinstance(prefix, str) or "/" in prefix:
            raise ValueError(
                f"For 'ModelCheckpoint', the argument 'prefix' for checkpoint file name is invalid, "
                f"it must be callable or string that does not contain '/', but got {prefix}."
            )
        if config is not None and not isinstance(config, CheckpointConfig):
            raise TypeError(
                f"For 'ModelCheckpoint', the type of argument 'config' should be 'CheckpointConfig', "
                f"but got {type(config)}."
            )
        self._directory = os.path.realpath(directory if directory is not None else os.getcwd())
        os.makedirs(self._directory, exist_ok=True)
        self._config = config or CheckpointConfig()
        self._prefix = _free_prefix(self._directory, prefix)
        self._last_step, self._last_time = 0, time.time()
        self._latest_ckpt_file_name = ""

    @property
    def latest_ckpt_file_name(self) -> str:
        return self._latest_ckpt_file_name

    def step_end(self, run_context: RunContext) -> None:
        self._save(run_context.original_args(), force=False)

    def end(self, run_context: RunContext) -> None:
        self._save(run_context.original_args(), force=True)

    def _due(self, step: int, force: bool) -> bool:
        if self._config.save_checkpoint_steps:
            return force or step >= self._last_step + self._config.save_checkpoint_steps
        if self._config.save_checkpoint_seconds and (
            force or time.time() - self._last_time > self._config.save_checkpoint_seconds
        ):
            self._last_time = time.time()
            return True
        return False

    def _save(self, cb_params: Any, force: bool) -> None:
        step = cb_params.cur_step_num
        if step == self._last_step or not self._due(step, force):
            return
        fmt = self._config.format
        kept = sorted(
            (
                os.path.join(self._directory, f)
                for f in os.listdir(self._directory)
                if f.startswith(self._prefix + "-") and f.endswith("." + fmt)
            ),
            key=os.path.getmtime,
        )
        while kept and len(kept) >= self._config.keep_checkpoint_max:
            os.chmod(kept[0], 0o600)
            os.remove(kept.pop(0))
        in_epoch = (step - 1) % cb_params.batch_num + 1
        path = os.path.join(self._directory, f"{self._prefix}-{cb_params.cur_epoch_num}_{in_epoch}.{fmt}")
        self._last_step = step
        save_checkpoint(
            self._entries(cb_params),
            path,
            append_dict=self._config.append_dict or None,
            crc_check=self._config.crc_check,
            format=fmt,
        )
        self._latest_ckpt_file_name = path

    def _entries(self, cb_params: Any) -> list[dict]:
        if self._config.saved_network is not None:
            network, optimizer = self._config.saved_network, None
        else:
            network, optimizer = cb_params.train_network, cb_params.get("optimizer")
        entries = list(named_parameters(network))
        entries += optimizer_entries(optimizer, cb_params.cur_step_num)
        return [{"name": name, "data": _tensor(value)} for name, value in entries]


def _tensor(value: Any) -> Any:
    import paddle

    return value if isinstance(value, paddle.Tensor) else paddle.to_tensor(value)


# Raise MissingAPIError when used (see _unprovided.py).
CheckpointManager = _unprovided_class("mindspore.train.callback._checkpoint.CheckpointManager")
