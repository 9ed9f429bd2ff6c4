"""Layer 3, the entry points: ``recompute`` (validate options once, dispatch to a mechanism)
and the presets built on it.

Imports only ``_core`` and ``_selective``.  See ARCHITECTURE.md.
"""
