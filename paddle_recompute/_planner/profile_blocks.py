"""Name the layers a profiled call runs, and find or resolve its blocks."""

from __future__ import annotations

from collections.abc import Sequence

from paddle import nn

__all__ = ["layer_table", "resolve_blocks", "detect_blocks"]


def layer_table(model_or_fn, roots: tuple, blocks) -> dict[str, nn.Layer]:
    """Qualified name -> layer: ``""`` and ``model.named_sublayers()`` for a Layer; for a
    function, ``roots[i]``-prefixed names for the Layers it reaches, then any block Layers
    not among them as ``blocks[i]``."""
    if isinstance(model_or_fn, nn.Layer):
        return {"": model_or_fn, **dict(model_or_fn.named_sublayers())}
    table: dict[str, nn.Layer] = {}
    for i, root in enumerate(roots):
        _add_tree(table, f"roots[{i}]", root)
    for i, block in enumerate(blocks or ()):
        if isinstance(block, nn.Layer) and not any(v is block for v in table.values()):
            _add_tree(table, f"blocks[{i}]", block)
    return table


def _add_tree(table: dict, prefix: str, layer: nn.Layer) -> None:
    if any(v is layer for v in table.values()):
        return
    table[prefix] = layer
    for name, sub in layer.named_sublayers():
        table.setdefault(f"{prefix}.{name}", sub)


def detect_blocks(layers: dict[str, nn.Layer]) -> list[str]:
    """Children of the longest ``LayerList`` (1 or more children) or ``Sequential`` (2 or
    more) whose children all have one type; ``[]`` when there is none."""
    best: list[str] = []
    for name, layer in layers.items():
        if not isinstance(layer, (nn.LayerList, nn.Sequential)):
            continue
        kids = [(k, v) for k, v in layer._sub_layers.items() if v is not None]
        least = 1 if isinstance(layer, nn.LayerList) else 2
        if len(kids) >= least and len({type(v) for _, v in kids}) == 1 and len(kids) > len(best):
            best = [f"{name}.{k}" if name else k for k, _ in kids]
    return best


def resolve_blocks(model_or_fn, layers: dict, blocks: Sequence | None) -> list[str]:
    """Block names from ``blocks`` (Layers or names), or detected when ``None``.

    Raises:
        ValueError: a block is unknown or nested in another, or none can be detected.
        TypeError: ``blocks`` is not a sequence of Layers or names.
    """
    if blocks is None:
        found = detect_blocks(layers)
        if not found and isinstance(model_or_fn, nn.Layer):
            raise ValueError("profile: found no LayerList/Sequential of repeated blocks; pass "
                             "blocks=[...] (sublayers or their names), or blocks=[] for none")
        return found
    if isinstance(blocks, (str, bytes, nn.Layer)) or not isinstance(blocks, Sequence):
        raise TypeError(f"profile: `blocks` must be a list of Layers or sublayer names, got {blocks!r}")
    by_id = {}
    for name, layer in layers.items():
        by_id.setdefault(id(layer), name)
    names = [_name_of(b, layers, by_id) for b in blocks]
    for a in names:
        for b in names:
            if a != b and (a == "" or b.startswith(a + ".")):
                raise ValueError(f"profile: block {b!r} is nested inside block {a!r}; blocks must "
                                 "be disjoint")
    if len(set(names)) != len(names):
        raise ValueError(f"profile: a block is listed twice in {names}")
    return names


def _name_of(block, layers: dict, by_id: dict) -> str:
    if isinstance(block, str):
        if block not in layers:
            raise ValueError(f"profile: {block!r} is not a sublayer name; names: {sorted(layers)[:20]}")
        return block
    if isinstance(block, nn.Layer):
        if id(block) not in by_id:
            raise ValueError(f"profile: block {type(block).__name__} is not part of the profiled model")
        return by_id[id(block)]
    raise TypeError(f"profile: `blocks` entries must be Layers or names, got {type(block).__name__}")
