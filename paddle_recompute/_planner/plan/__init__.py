"""Planning: ``make.plan`` (measure, solve, choose), the ``Plan`` value and ``apply_plan``
(``value``), the tree planner (``tree``), the final measured choice, and the automatic
segments of ``recompute_sequential`` (``segments``)."""
