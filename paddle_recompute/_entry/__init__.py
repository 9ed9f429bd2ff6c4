"""Layer 3, the entry points: ``recompute`` (validate options once, dispatch to a mechanism)
``route_forward`` (the one way to route a layer's forward through it, with an undo handle;
``Applied`` groups them: the public handle)
and the presets built on it.

Imports only ``_core`` and ``_selective``.  See ARCHITECTURE.md.
"""
