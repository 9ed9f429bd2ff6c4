"""``mindspore.dataset.config``: the seed of the pipeline's random choices.

Shuffles, samplers and random vision ops draw from one numpy generator seeded here (MindSpore
draws from its C++ generators, so seeded orders and crops differ from MindSpore's: see
compat/README.md). Without ``set_seed`` the generator starts from fresh entropy.
"""

from __future__ import annotations

import numpy as np

__all__ = ["set_seed", "get_seed", "generator"]

_state: dict = {"seed": None, "rng": np.random.default_rng()}


def set_seed(seed: int) -> None:
    """Seed the pipeline's generator (``ValueError`` outside ``[0, 2**32 - 1]``, as MindSpore)."""
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"seed isn't of type int, but got {type(seed)}.")
    if not 0 <= seed <= 2**32 - 1:
        raise ValueError("Input seed is not within the required interval of [0, 4294967295].")
    _state["seed"] = seed
    _state["rng"] = np.random.default_rng(seed)


def get_seed() -> int | None:
    return _state["seed"]


def generator() -> np.random.Generator:
    """The generator every random choice of a pipeline draws from."""
    return _state["rng"]
