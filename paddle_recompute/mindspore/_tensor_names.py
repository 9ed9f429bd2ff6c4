"""Which Tensor members MindSpore 2.10 and Paddle 3.3 share, and how the layer treats each.

The shared names are those in both ``dir(mindspore.Tensor)`` (recorded in
``tests/mindspore/data/g_tensor_api.json``) and ``dir(paddle.Tensor)``; a test checks that
every one is dispatched, ``SAME`` or ``GUARDED`` (see ``_tensor_install.py``).
"""

__all__ = ["SAME", "GUARDED"]

# same meaning for every call MindSpore accepts (values checked in tests/mindspore where the
# cases of g_cases_reference.json cover them; the rest are elementwise maps or casts)
SAME = frozenset("""
T __getitem__ __setitem__ abs acos acosh add add_ all any argmax argmin asin asinh atan atan2 atanh
bfloat16 bmm bool broadcast_to byte ceil clamp clamp_ clip clone contiguous copy_ cos cosh cumsum
dim div div_ divide double dtype eq erf exp exp_ expm1 fill_ float floor floor_ ge greater
greater_equal gt half int is_contiguous is_floating_point isfinite isinf isnan item le less
less_equal log log10 log1p log2 log_ logical_and logical_not logical_or logical_xor long lt
masked_fill masked_fill_ matmul maximum minimum mul mul_ multiply ndim ndimension ne neg negative
not_equal numel numpy pow prod reciprocal requires_grad round rsqrt short sigmoid sigmoid_ sign sin
sinh size sqrt square sub sub_ subtract tan tanh tanh_ tile tolist true_divide trunc unsqueeze zero_
""".split())

# shared but not checked: MindSpore code gets MissingAPIError instead of Paddle's meaning
GUARDED = frozenset("""
H absolute acos_ addmm addmm_ allclose amax amin angle argsort argwhere baddbmm bernoulli_ bincount
bitwise_and bitwise_left_shift bitwise_not bitwise_or bitwise_right_shift bitwise_xor cholesky
cholesky_inverse cholesky_solve chunk conj copysign count_nonzero cov cross cummax cummin cumprod
data data_ptr deg2rad device diag diagflat diagonal diagonal_scatter diff digamma dot dsplit eigvals
equal erfinv erfinv_ expand expand_as exponential_ fill_diagonal_ flip floor_divide floor_divide_
fmax fmin frac gather gather_nd gcd heaviside hsplit hypot i0 imag index_add index_add_ index_fill
index_fill_ index_put index_put_ index_select inner inverse is_complex isclose isneginf isposinf
isreal itemsize kthvalue lcm ldexp lerp lgamma logaddexp logcumsumexp logit logsumexp lstsq mT
masked_scatter masked_scatter_ masked_select matrix_power median mm moveaxis msort multinomial
nan_to_num nanmean nanmedian nanquantile nansum narrow new_empty new_full new_ones new_zeros
nextafter nonzero norm normal_ ormqr outer pin_memory qr quantile rad2deg random_ ravel real
register_hook remainder remainder_ renorm repeat repeat_interleave requires_grad_ reverse roll rot90
scatter scatter_ scatter_add scatter_add_ select_scatter set_ sgn signbit sinc slice_scatter slogdet
softmax sort split stride strides swapdims t take tensor_split to topk trace tril triu type type_as
unbind unfold uniform_ unique unique_consecutive value view_as vsplit where
""".split())
