"""``mindspore.log``: MindSpore's logger, on Python's ``logging`` (logger name ``mindspore``).

MindSpore's own logger writes to stderr at WARNING and above by default (``GLOG_v=2``); so
does this one.
"""

from __future__ import annotations

import logging
import sys

__all__ = ["logging", "get_logger", "debug", "info", "warning", "error", "critical", "exception"]

_LOGGER = logging.getLogger("mindspore")
if not _LOGGER.handlers:
    _handler = logging.StreamHandler(sys.stderr)
    _handler.setFormatter(logging.Formatter("[%(levelname)s] ME(%(process)d): %(message)s"))
    _LOGGER.addHandler(_handler)
    _LOGGER.setLevel(logging.WARNING)
    _LOGGER.propagate = False


def get_logger() -> logging.Logger:
    return _LOGGER


def debug(msg, *args, **kwargs):
    _LOGGER.debug(msg, *args, **kwargs)


def info(msg, *args, **kwargs):
    _LOGGER.info(msg, *args, **kwargs)


def warning(msg, *args, **kwargs):
    _LOGGER.warning(msg, *args, **kwargs)


def error(msg, *args, **kwargs):
    _LOGGER.error(msg, *args, **kwargs)


def critical(msg, *args, **kwargs):
    _LOGGER.critical(msg, *args, **kwargs)


def exception(msg, *args, **kwargs):
    _LOGGER.exception(msg, *args, **kwargs)
