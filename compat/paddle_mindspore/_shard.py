"""``Primitive.shard``'s checks and the attributes it records (MindSpore 2.10's rules and texts)."""

from __future__ import annotations

from typing import Any

from ._layout import Layout

__all__ = ["record_strategy"]


def _kind(prim: Any, strategy: Any, what: str) -> bool | None:
    """True for a strategy of Layouts, False for one of int tuples, None for ``()``."""
    if not isinstance(strategy, tuple):
        raise TypeError(f"{what} must be tuple type, but got:{type(strategy)}")
    if strategy == ():
        return None
    kinds = []
    for entry in strategy:
        if isinstance(entry, Layout):
            kinds.append(True)
            continue
        if not isinstance(entry, tuple):
            raise TypeError(f"The element of strategy must be tuple/Layout type, but got:{type(entry)}")
        for value in entry:
            if not isinstance(value, int):
                raise TypeError(
                    f"The {what}: {strategy} of {prim.name} is not valid,"
                    f" the value of strategy must be int type, but got:{type(value)}"
                )
        kinds.append(False)
    return kinds[0]


def _layout_value(strategy: tuple) -> tuple:
    return tuple(
        {k: v for k, v in e.to_dict().items() if k != "rank_list"} if isinstance(e, Layout) else e
        for e in strategy
    )


def record_strategy(prim: Any, in_strategy: Any, out_strategy: Any) -> Any:
    if in_strategy is None and out_strategy is None:
        return prim
    in_kind = _kind(prim, in_strategy, "in_strategy") if in_strategy is not None else None
    out_kind = _kind(prim, out_strategy, "out_strategy") if out_strategy is not None else None
    is_layout = in_kind if in_kind is not None else out_kind
    if out_kind is not None and is_layout != out_kind:
        raise ValueError(
            "The in_strategy type must equal to the out_strategy type, "
            "one using tuple(tuple) and the other using tuple(Layout) is not allowed."
        )
    if in_strategy is None:
        raise ValueError(
            f"The out_strategy of {prim.name} is {out_strategy}, need to set in_strategy, but got none"
        )
    if is_layout:
        prim.add_prim_attr("in_layout", _layout_value(in_strategy))
        if out_strategy is not None:
            prim.add_prim_attr("out_layout", _layout_value(out_strategy))
    else:
        prim.add_prim_attr("in_strategy", in_strategy)
        if out_strategy is not None:
            prim.add_prim_attr("out_strategy", out_strategy)
    return prim
