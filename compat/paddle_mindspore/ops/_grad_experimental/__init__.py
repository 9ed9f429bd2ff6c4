"""``mindspore.ops._grad_experimental``."""
