"""Allocator statistics: Paddle's host allocator on CPU, the device allocator on GPU.

The host statistics exist only when ``FLAGS_enable_host_memory_stat=1`` was in the
environment when Paddle was imported; :meth:`HostMemory.enabled` probes for them.
"""

from __future__ import annotations

import paddle
from paddle.base import core

__all__ = ["HostMemory", "DeviceMemory", "memory_for_current_place", "MiB"]

MiB = 1024 * 1024


class HostMemory:
    """Bytes held by Paddle's host (CPU) allocator."""

    kind = "host allocator"

    def current(self) -> int:
        return core.host_memory_stat_current_value("Allocated", 0)

    def reset_peak(self) -> None:
        core.host_memory_stat_reset_peak_value("Allocated", 0)

    def peak(self) -> int:
        return core.host_memory_stat_peak_value("Allocated", 0)

    def sync(self) -> None:
        """CPU kernels run synchronously: nothing to wait for."""

    def enabled(self) -> bool:
        """True when allocations move the counter (the flag was set before Paddle's import)."""
        before = self.current()
        probe = paddle.empty([MiB // 4], dtype="float32")  # noqa: F841  (alive while we read)
        return self.current() - before >= MiB


class DeviceMemory:
    """Bytes held by the current GPU's allocator (``paddle.device.cuda`` statistics)."""

    kind = "device allocator"

    def current(self) -> int:
        return paddle.device.cuda.memory_allocated()

    def reset_peak(self) -> None:
        paddle.device.cuda.reset_max_memory_allocated()

    def peak(self) -> int:
        return paddle.device.cuda.max_memory_allocated()

    def sync(self) -> None:
        """Wait for queued kernels, so times and counters include them."""
        paddle.device.cuda.synchronize()

    def enabled(self) -> bool:
        return True


def memory_for_current_place() -> HostMemory | DeviceMemory:
    """Device statistics when Paddle's current device is a GPU, host statistics otherwise."""
    if paddle.get_device().startswith("gpu"):
        return DeviceMemory()
    return HostMemory()
