"""Layer 2, selective recompute: which saved tensors to keep.  Policies, operator records,
the policy frame and its rerun, dropout-mask replay, ``tag``, ``no_recompute`` and ``save_on_cpu``.

Imports only ``_core``.  See ARCHITECTURE.md.
"""
