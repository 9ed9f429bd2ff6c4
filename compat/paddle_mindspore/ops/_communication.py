"""``ops.ReduceOp``: the reduction names of the collective operators (their values in MindSpore)."""

__all__ = ["ReduceOp"]


class ReduceOp:
    """``ReduceOp.SUM``, ``MAX``, ``MIN``, ``PROD``, ``AVG``: MindSpore's string constants."""

    SUM = "sum"
    MAX = "max"
    MIN = "min"
    PROD = "prod"
    AVG = "avg"
