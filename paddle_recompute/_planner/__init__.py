"""Layer 4, the planner: choose what to recompute under a memory budget.

Subpackages by concern, each importing only those before it in this list:

* ``solvers/``: pure Python (no paddle): blocks (multiple-choice knapsack), the call tree,
  operators, chain segments.  Tested on numbers alone.
* ``harness.py``: the measuring harness: the planning clock, one timed training step, and
  ``Session`` (the call, its layers, their roots and the profile) every measurement shares.
* ``profile/``: what a model saves for backward, per block, sublayer and call.
* ``options/``: the option kinds (``full``, ``sub``, policies, ``ops``) and their pricing
  (measured rounds, operator recording, calibration, region overhead).
* ``plan/``: the ``plan`` function, the ``Plan`` value and ``apply_plan``, the tree planner,
  the final measured choice, ``recompute_sequential``'s automatic segments, and pipeline
  stages' plans (``plan_stage``).

Imports only the layers below.  Public as :mod:`paddle_recompute.planner`.  See ARCHITECTURE.md.
"""
