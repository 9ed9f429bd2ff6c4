"""Benchmark machinery behind ``paddle-recompute bench``: models, modes, measurement, report.

Private: the command line, ``examples/`` and ``benchmarks/`` use it; its names may change.
"""
