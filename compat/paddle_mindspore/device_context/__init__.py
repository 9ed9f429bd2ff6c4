"""``mindspore.device_context``: per-backend device settings."""
