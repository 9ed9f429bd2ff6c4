"""Profiling: what a model's step saves for backward, per block, sublayer and call, and the
forward and rerun time of each (``measure.profile``; the result types in ``result``)."""
