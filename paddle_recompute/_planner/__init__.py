"""Layer 4, the planner: profile, solvers (pure Python), plan and apply, automatic segments.

Imports only the layers below.  Public as :mod:`paddle_recompute.planner`.  See ARCHITECTURE.md.
"""
