"""``scale_profile``: a profile of a model too large to profile, from profiles of a smaller
configuration of it.

NOTE [ Scaled profiles ]: a model whose activations do not fit cannot be profiled, but its
parameters usually fit, and a smaller configuration of it (fewer of the same blocks, a
shorter sequence or a smaller batch) can be profiled.  ``scale_profile`` takes profiles of
the small configuration and the large model with inputs of the large size, and returns the
profile the large model would give: first at the large size (NOTE [ Sizes ] in
``sizes.py``), then at the large depth (NOTE [ Depth ] in ``depth.py``).  The large model is
never run: it is needed for its layer names and parameter shapes (to match its blocks to
the profiled ones and to apply the plan), and its inputs for their shapes alone, so a
model whose parameters fit can be built and given ``paddle.zeros`` inputs of the size it
will train at.  ``plan(model, *inputs, profile=scaled)`` then plans without running the
model (``_planner/plan/scaled.py``): it offers only what needs no measurement in the model
(``keep``, ``full``, ``sub``, kept-tensor kinds, and policy kinds measured on every
profile given), takes the region overhead from the profiles (0 when none was measured:
plan the small model once on its profile to measure it) and returns the solver's plan
unmeasured.  The scaled profile records the sizes and depths it came from in
``structure["scaled_from"]``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import paddle

from ..._core.layers import find_roots
from .blocks import layer_table, resolve_blocks
from .depth import deepen
from .files import check_structure, structure_of
from .result import Profile
from .sizes import at_size, input_sizes

__all__ = ["scale_profile", "SCALED"]

SCALED = "scaled_from"  # the key in Profile.structure that marks a scaled profile


def scale_profile(
    profiles: Profile | Sequence[Profile],
    model_or_fn: Callable[..., Any],
    *inputs: Any,
    blocks: Sequence[paddle.nn.Layer | str] | None = None,
    **kwargs: Any,
) -> Profile:
    """The profile of ``model_or_fn(*inputs, **kwargs)``, built from ``profiles`` of a
    smaller configuration of the same model without running it (NOTE [ Scaled profiles ]).

    Args:
        profiles: one :class:`Profile` (to change the number of blocks only), or profiles
            of the small model at two or more sizes of one input dimension (sequence length
            or batch; three sizes fit constant terms too).
        model_or_fn: the large model, as :func:`plan` will get it.
        *inputs: its inputs (only their shapes and dtypes are read).
        blocks: its blocks, as in :func:`profile` (default: detected).
        **kwargs: keyword inputs of the call.

    Returns:
        A :class:`Profile` to pass to ``plan(model_or_fn, *inputs, profile=...)``.

    Raises:
        TypeError: ``profiles`` holds something other than profiles.
        ValueError: the profiles and the model differ in more than depth and one size;
            only one size was profiled but the inputs are of another; fewer than 3 blocks
            were profiled for another depth.

    Example:
        >>> small = [planner.profile(small_model, ids[:, :s]) for s in (32, 64, 128)]  # doctest: +SKIP
        >>> x = paddle.zeros([2, 512], "int64")  # doctest: +SKIP
        >>> big = planner.scale_profile(small, large_model, x)  # doctest: +SKIP
        >>> plan = planner.plan(large_model, x, budget=0.5, profile=big)  # doctest: +SKIP
    """
    api = "scale_profile"
    profs = [profiles] if isinstance(profiles, Profile) else list(profiles)
    if not profs or not all(isinstance(p, Profile) for p in profs):
        raise TypeError(f"{api}: `profiles` must be a Profile or a list of Profiles, got {profiles!r}")
    for p in profs[1:]:
        check_structure(api, "a profile given", {k: v for k, v in p.structure.items() if k != "inputs"},
                        {k: v for k, v in profs[0].structure.items() if k != "inputs"})
    roots = find_roots(model_or_fn, inputs, kwargs)
    table = layer_table(model_or_fn, roots, blocks)
    structure = structure_of(table, (inputs, kwargs))
    sizes, n = input_sizes(api, profs, structure["inputs"])
    sized = at_size(api, profs, sizes, n)
    out = deepen(api, sized, table, resolve_blocks(model_or_fn, table, blocks), structure)
    if out.region_s is None:
        measured = [p for p in profs if p.region_s is not None]
        out.region_s = measured[-1].region_s if measured else 0.0
        out.save_s = measured[-1].save_s if measured else 0.0
    out.structure = {**structure, SCALED: {"sizes": sorted(set(sizes)), "size": n,
                                            "blocks": len(profs[0].blocks), "to_blocks": len(out.blocks)}}
    return out
