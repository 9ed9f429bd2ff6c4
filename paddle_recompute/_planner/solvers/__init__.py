"""The planner's solvers: pure Python, no framework import, one signature per family
(``solver(choices, budget) -> solution``), so they are tested on numbers alone."""
