"""``mindspore.dataset.engine``."""
