"""Tensor operators that bypass ``paddle._C_ops``: ``x @ y``, ``x + y``, ``x * y``, ``x[i]`` ...

NOTE [ Tensor operators ]: in Paddle 3.3 the arithmetic operators of ``paddle.Tensor``
(``__add__``, ``__mul__``, ``__matmul__``, their reflected forms, ``__sub__``,
``__truediv__``, ``__pow__``, ``__mod__``, ``__floordiv__``) and indexing
(``_getitem_dygraph``, behind ``__getitem__``) are C methods of the tensor type
(``eager_math_op_patch.cc``, ``eager_method.cc``).  They call the kernels' autograd
functions directly, so observing ``paddle._C_ops`` never sees them; yet real model code is
written with them (residual ``h + attn``, SwiGLU's ``silu(gate) * up``, RoPE's ``q * cos``,
attention as ``q @ k.T``).  Named Tensor methods (``x.matmul(y)``, ``x.pow(2)``,
``x.astype``) are Python and go through ``_C_ops``, so they need nothing.

The tensor type is a heap type, so while a policy region runs its C methods are replaced on
the class by thin wrappers that hand the call to the same ``observe`` function as the
``_C_ops`` wrappers, under the name of the kernel the method runs: ``matmul``, ``add``,
``subtract``, ``multiply``, ``divide``, ``elementwise_pow``, ``remainder``,
``floor_divide``; with a Python number as the other operand, Paddle runs ``scale``
(``x + 1``, ``x * 0.5``, ``1 - x``), ``div_scale`` (``x / 2``) or ``pow`` (``x ** 2``), and
those names are used (checked against the grad nodes Paddle builds in
tests/core/test_tensor_methods.py).
Indexing is ``getitem`` (one call that may run ``slice``, ``strided_slice`` or a gather).
Comparisons, ``__setitem__`` (in place) and copies are left alone: they save nothing a
policy would keep.  The originals go back when the last region exits (``ops.installed``).

The methods through which Python reads a tensor's values (``numpy``, ``item``, ``tolist``,
``bool(t)``, ``int(t)``, ``float(t)``, ``t.__index__``, ``np.asarray(t)``...: :data:`READS`) are
wrapped for the same span too: each call is first shown to the innermost frame on the
thread's hook stack that has an ``observe_read(tensor)`` (a policy region: what Python read
must be real in its rerun, NOTE [ Dead operators ] in ``_selective/liveness.py``).
"""

from __future__ import annotations

import paddle

__all__ = ["ORIGINALS", "READS", "wrapped", "current", "reads_wrapped"]

_TENSOR = paddle.Tensor

# method -> (kernel with a Tensor operand, kernel with a Python number operand)
_KERNELS = {
    "__add__": ("add", "scale"), "__radd__": ("add", "scale"),
    "__sub__": ("subtract", "scale"), "__rsub__": ("subtract", "scale"),
    "__mul__": ("multiply", "scale"), "__rmul__": ("multiply", "scale"),
    "__truediv__": ("divide", "div_scale"), "__div__": ("divide", "div_scale"),
    "__rtruediv__": ("divide", "divide"), "__rdiv__": ("divide", "divide"),
    "__matmul__": ("matmul", "matmul"), "__rmatmul__": ("matmul", "matmul"),
    "__pow__": ("elementwise_pow", "pow"), "__rpow__": ("elementwise_pow", "elementwise_pow"),
    "__mod__": ("remainder", "remainder"), "__rmod__": ("remainder", "remainder"),
    "__floordiv__": ("floor_divide", "floor_divide"),
    "__rfloordiv__": ("floor_divide", "floor_divide"),
    "_getitem_dygraph": ("getitem", "getitem"),
}

#: The C methods as Paddle installed them (only those this Paddle has).
ORIGINALS = {name: vars(_TENSOR)[name] for name in _KERNELS if name in vars(_TENSOR)}

#: The methods that hand a tensor's values to Python, as Paddle installed them.
READS = {name: vars(_TENSOR)[name] for name in (
    "numpy", "item", "tolist", "__bool__", "__nonzero__", "__int__", "__long__", "__float__",
    "__index__", "__array__", "__complex__", "_getitem_from_offset") if name in vars(_TENSOR)}


def _wrap(method: str, fn, observer):
    with_tensor, with_number = _KERNELS[method]

    def call(self, *args, **kwargs):
        observe = observer()
        if observe is not None:
            name = with_tensor if args and isinstance(args[0], _TENSOR) else with_number
            return observe(name, fn, (self, *args), kwargs)
        return fn(self, *args, **kwargs)

    call.__name__ = call.__qualname__ = method
    call.__wrapped__ = fn
    return call


def current() -> dict:
    """The methods ``paddle.Tensor`` holds now, for the names of :data:`ORIGINALS` and :data:`READS`."""
    return {name: vars(_TENSOR).get(name, fn) for name, fn in (*ORIGINALS.items(), *READS.items())}


def _wrap_read(method: str, fn, reader):
    def call(self, *args, **kwargs):
        read = reader()
        if read is not None:
            read(self)
        return fn(self, *args, **kwargs)

    call.__name__ = call.__qualname__ = method
    call.__wrapped__ = fn
    return call


def reads_wrapped(reader, methods: dict) -> dict:
    """Wrappers for the :data:`READS` among ``methods`` that first hand the tensor to
    ``reader()`` (a frame's ``observe_read``, or None)."""
    return {name: _wrap_read(name, fn, reader) for name, fn in methods.items() if name in READS}


def wrapped(observer, methods: dict | None = None) -> dict:
    """Wrappers for ``methods`` (default :data:`ORIGINALS`) that hand each call to ``observer()``
    (the observing frame's ``observe_op``, or None to call the method directly)."""
    return {name: _wrap(name, fn, observer) for name, fn in (methods or ORIGINALS).items()
            if name in _KERNELS}
