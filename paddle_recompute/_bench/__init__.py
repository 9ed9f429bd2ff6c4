"""Benchmark machinery behind ``paddle-recompute bench``: models, modes, measurement, report.

Private: ``paddle_recompute.bench`` re-exports the names ``examples/`` and ``benchmarks/``
use; the rest may change.
"""
