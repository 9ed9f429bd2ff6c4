"""Which Tensor members MindSpore 2.10 and Paddle 3.3 share, and how the layer treats each.

The shared names are those in both ``dir(mindspore.Tensor)`` (recorded in
``compat/tests/data/g_tensor_api.json``) and ``dir(paddle.Tensor)``; a test checks that
every one is dispatched, ``SAME`` or ``GUARDED`` (see ``install.py``).
"""

__all__ = ["SAME", "GUARDED", "MINDSPORE_ONLY"]

# same meaning for every call MindSpore accepts (values checked in compat/tests where the
# cases of g_cases_reference.json cover them; the rest are elementwise maps or casts)
SAME = frozenset("""
T __getitem__ abs acos acosh add add_ all any argmax argmin asin asinh atan atan2 atanh
bfloat16 bmm bool broadcast_to byte ceil clamp clamp_ clip clone contiguous copy_ cos cosh cumsum
dim div div_ divide double dtype eq erf exp exp_ expand_as expm1 fill_ flip float floor floor_ ge
greater greater_equal gt half int is_contiguous is_floating_point isfinite isinf isnan item le less
less_equal log log10 log1p log2 log_ logical_and logical_not logical_or logical_xor long lt
masked_fill masked_fill_ masked_select matmul maximum minimum mm mul mul_ multiply narrow ndim
lcm ndimension ne neg negative not_equal numel numpy outer pow prod reciprocal requires_grad round rsqrt
short sigmoid sigmoid_ sign sin sinh size sqrt square sub sub_ subtract t tan tanh tanh_ tile tolist
tril triu true_divide trunc  unsqueeze zero_
""".split())

# shared but not checked: MindSpore code gets MissingAPIError instead of Paddle's meaning
GUARDED = frozenset("""
acos_ addmm addmm_ allclose amax amin angle argsort argwhere baddbmm bernoulli_ bincount bitwise_and
bitwise_left_shift bitwise_not bitwise_or bitwise_right_shift bitwise_xor cholesky cholesky_inverse
cholesky_solve conj copysign count_nonzero cov cross cummax cummin cumprod data_ptr deg2rad
device diag diagflat diagonal diagonal_scatter diff digamma dot dsplit eigvals equal erfinv erfinv_
expand exponential_ fill_diagonal_ floor_divide floor_divide_ fmax fmin frac gather gather_nd gcd
heaviside hsplit hypot i0 imag index_add index_add_ index_fill index_fill_ index_put index_put_
index_select inner inverse is_complex isclose isneginf isposinf isreal itemsize kthvalue ldexp
lerp lgamma logaddexp logcumsumexp logit logsumexp lstsq mT masked_scatter masked_scatter_
matrix_power median moveaxis msort multinomial nan_to_num nanmean nanmedian nanquantile nansum
new_empty new_full new_ones new_zeros nextafter nonzero norm normal_ ormqr pin_memory qr quantile
rad2deg random_ ravel real remainder remainder_ renorm
requires_grad_ reverse roll rot90 scatter scatter_ scatter_add scatter_add_ select_scatter set_ sgn
signbit sinc slice_scatter slogdet sort stride strides swapdims take tensor_split topk trace
type_as unfold uniform_ unique unique_consecutive value view_as vsplit
""".split())

# MindSpore's Tensor members Paddle's lacks and the layer does not provide: MindSpore code asking
# for one gets MissingAPIError naming it (other code: Paddle's AttributeError, as before)
MINDSPORE_ONLY = frozenset("""
H absolute addbmm addcdiv addcmul addmv addr adjoint aminmax approximate_equal arccos arccosh arcsin
arcsinh arctan arctan2 arctanh argmax_with_value argmin_with_value assign_value assign_value_cpp
bernoulli cauchy choose col2im const_arg convert_bytes_to_tensor data_sync delete_ delta_seed det
erfc fill fill_diagonal fills fliplr flipud float_power fmod fold from_dlpack
from_numpy gather_elements geqrf ger get_bytes getitem_index_info hardshrink has_init histc
igamma igammac index index_copy_ index_of_parent_ init init_finished init_flag inplace_update inv
invert is_init is_meta is_pinned is_shared is_signed itemset log_matrix_determinant log_normal
logaddexp2 logdet lu_solve mH matrix_determinant move_to movedim mvlgamma nbytes nelement offload
offload_file_path orgqr param_info parent_tensor_ positive ptp put_ random_categorical
resize reverse_sequence scatter_div scatter_max scatter_min scatter_mul scatter_sub
searchsorted select set_cast_dtype set_const_arg set_device_address set_dtype set_init_flag
set_param_info setitem_index_info sign_ soft_shrink storage storage_offset sum_to_size svd
symbolic_shape to_ to_coo to_csr to_dlpack top_k triangular_solve uniform unique_with_pad
unsorted_segment_max unsorted_segment_min unsorted_segment_prod untyped_storage virtual_flag
wait_pipeline xdivy xlogy
""".split())
