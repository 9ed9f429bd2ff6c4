"""Paddle's saved-tensor hook slot as recompute shares it, for benchmarks of what a thread
without regions pays while another thread has one open (NOTE [ Threads ] in ``_core/hooks.py``)."""

from __future__ import annotations

from dataclasses import dataclass

from .._core import hooks

__all__ = ["HookSlot", "hook_slot", "release_hook_slot"]


@dataclass(frozen=True)
class HookSlot:
    """Who holds Paddle's single saved-tensor hook slot.

    Attributes:
        installed: recompute's dispatching pair holds the slot, so every tensor any thread
            saves for backward goes through it.
        frames: the saved-tensor frames open now (regions, reruns, hook contexts), all threads.
        thread_frames: those of the calling thread.
    """

    installed: bool
    frames: int
    thread_frames: int


def hook_slot() -> HookSlot:
    """The slot's state now.

    Example:
        >>> from paddle_recompute import bench
        >>> bench.hook_slot()
        HookSlot(installed=False, frames=0, thread_frames=0)
    """
    return HookSlot(hooks.installed(), hooks.frame_count(), len(hooks.active_frames()))


def release_hook_slot() -> bool:
    """Give the slot back now if no frame is open and no other thread runs; True when the
    pair is not installed afterwards.  (While other threads run, the pair stays installed
    between regions; it is given back lazily, on a save after they end.)"""
    return hooks.release_idle()
