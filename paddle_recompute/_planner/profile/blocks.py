"""Name the layers a profiled call runs, and find or resolve its blocks."""

from __future__ import annotations

from collections.abc import Sequence

from paddle import nn

__all__ = ["layer_table", "resolve_blocks", "detect_blocks", "inside"]


def layer_table(model_or_fn, roots: tuple, blocks) -> dict[str, nn.Layer]:
    """Qualified name -> layer: ``""`` and ``model.named_sublayers()`` for a Layer; for a
    function, ``roots[i]``-prefixed names for the Layers it reaches that are not sublayers
    of another (a holder's list of blocks is named under its model), then any block Layers
    not among them as ``blocks[i]``."""
    if isinstance(model_or_fn, nn.Layer):
        return {"": model_or_fn, **dict(model_or_fn.named_sublayers())}
    table: dict[str, nn.Layer] = {}
    inner = {id(sub) for root in roots for sub in root.sublayers()}
    outer = [root for root in roots if id(root) not in inner]  # a holder's blocks: the model's
    for i, root in enumerate(outer):
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
    """The repeated blocks of a model: see NOTE [ Finding blocks ]; ``[]`` when there are none.

    NOTE [ Finding blocks ]: a *run* is a stretch of consecutive children of one type in a
    ``LayerList`` (1 or more) or ``Sequential`` (2 or more).  Runs inside another run's
    children are left out (the blocks are the outermost repeats), and the blocks are the
    runs of the type with the most children in all: ``model.layers`` of a language model,
    ``encoder.layers``, the 16 bottlenecks of ResNet-50's four stages, the 17 inverted
    residuals inside MobileNetV2's ``features``.
    """
    table_name = {}
    for name, layer in layers.items():
        table_name.setdefault(id(layer), name)  # a layer at several places: its first name
    runs = [r for name, layer in layers.items() if isinstance(layer, (nn.LayerList, nn.Sequential))
            for r in _runs(layer, table_name)]
    outer = [r for r in runs if not any(inside(r[1][0], b) for other in runs if other is not r
                                        for b in other[1])]
    counts: dict[type, int] = {}
    for kind, names in outer:
        counts[kind] = counts.get(kind, 0) + len(names)
    if not counts:
        return []
    best = max(counts, key=counts.get)  # ties: the first type found, in layer order
    return list(dict.fromkeys(n for kind, names in outer if kind is best for n in names))


def _runs(container: nn.Layer, table_name: dict) -> list[tuple[type, list[str]]]:
    least = 1 if isinstance(container, nn.LayerList) else 2
    out: list[tuple[type, list[str]]] = []
    for child in container._sub_layers.values():
        if child is None or id(child) not in table_name:
            continue
        qualified = table_name[id(child)]
        if out and type(child) is out[-1][0]:
            out[-1][1].append(qualified)
        else:
            out.append((type(child), [qualified]))
    return [(kind, names) for kind, names in out if len(names) >= least]


def inside(name: str, block: str) -> bool:
    """True when layer ``name`` is a sublayer of ``block`` (``""``: the model itself)."""
    return name != block and (block == "" or name.startswith(block + "."))


def resolve_blocks(model_or_fn, layers: dict, blocks: Sequence | None) -> list[str]:
    """Block names from ``blocks`` (Layers or names), or detected when ``None``.

    Raises:
        ValueError: a block is unknown or nested in another, or none can be detected.
        TypeError: ``blocks`` is not a sequence of Layers or names.
    """
    if blocks is None:
        found = detect_blocks(layers)
        if found or not isinstance(model_or_fn, nn.Layer):
            return found
        if not isinstance(model_or_fn, (nn.LayerList, nn.Sequential)):
            return [""]  # one layer (a decoder layer): it is the block, its sublayers the parts
        return []  # the planner picks regions from the call tree; blocks are not needed
    if isinstance(blocks, (str, bytes, nn.Layer)) or not isinstance(blocks, Sequence):
        raise TypeError(f"profile: `blocks` must be a list of Layers or sublayer names, got {blocks!r}")
    by_id = {}
    for name, layer in layers.items():
        by_id.setdefault(id(layer), name)
    names = [_name_of(b, layers, by_id) for b in blocks]
    for a in names:
        for b in names:
            if inside(b, a):
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
