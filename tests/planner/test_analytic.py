"""``planner.transformer_layer_bytes`` / ``korthikanti_bytes``: the analytic count of what a
transformer layer saves for backward (NOTE [ Analytic layer bytes ]), term by term and
against what PaddleFormers' layers save, measured by the profiler."""

import _real_models as rm
import paddle
import pytest

from paddle_recompute import planner
from paddle_recompute.bench import causal_lm

SIZES = [(2048, 1, 4096, 32), (128, 2, 64, 4), (512, 3, 96, 6), (1, 1, 8, 1)]


@pytest.mark.parametrize("s,b,h,a", SIZES)
def test_the_defaults_are_the_papers_formula(s, b, h, a):
    """s*b*h*(34 + 5*a*s/h), in integers: s*b*(34*h + 5*a*s)."""
    assert planner.korthikanti_bytes(s, b, h, a) == s * b * (34 * h + 5 * a * s)
    assert planner.transformer_layer_bytes(s, b, h, a) == planner.korthikanti_bytes(s, b, h, a)


def test_each_switch_adds_its_term():
    s, b, h, a = 128, 2, 64, 4
    per_token = s * b
    base = dict(dropout=False, element_bytes=4)
    plain = planner.transformer_layer_bytes(s, b, h, a, **base)
    assert plain == per_token * 4 * (16 * h + a * s)  # no masks, no dropped softmax
    gqa = planner.transformer_layer_bytes(s, b, h, a, kv_heads=2, **base)
    assert plain - gqa == per_token * 4 * 2 * (h - h // 2)  # K and V at half width
    assert planner.transformer_layer_bytes(s, b, h, a, kv_heads=2, repeat_kv=True, **base) == plain
    swiglu = planner.transformer_layer_bytes(s, b, h, a, mlp="swiglu", intermediate=128, **base)
    assert swiglu - plain == per_token * 4 * (4 * 128 - 2 * 4 * h)
    rms = planner.transformer_layer_bytes(s, b, h, a, norm="rmsnorm", **base)
    assert rms - plain == per_token * 4 * 2 * (h + 1)
    rope = planner.transformer_layer_bytes(s, b, h, a, rope=True, **base)
    assert rope - plain == per_token * 4 * 2 * (h + h)


@pytest.mark.parametrize("kwargs,match", [
    ({"seq": 0}, "`seq` must be a positive int"),
    ({"heads": 5}, r"`heads` \(5\) must divide `hidden` \(64\)"),
    ({"mlp": "relu"}, "`mlp` must be one of"),
    ({"norm": "batchnorm"}, "`norm` must be one of"),
    ({"element_bytes": True}, "`element_bytes` must be a positive int"),
])
def test_bad_arguments_are_named(kwargs, match):
    args = {"seq": 8, "batch": 1, "hidden": 64, "heads": 4, **kwargs}
    with pytest.raises(ValueError, match="transformer_layer_bytes: " + match):
        planner.transformer_layer_bytes(**args)


@pytest.mark.skipif(not rm.paddleformers_available(), reason="needs paddleformers")
@pytest.mark.parametrize("family", ["llama", "ernie4_5", "phi3"])
def test_the_eager_count_against_paddleformers_layers(family):
    """With the eager switches the count equals Llama's layer to the byte; Ernie 4.5 and
    Phi-3 save 2*head_dim elements a token more (NOTE [ Analytic layer bytes ])."""
    s, b, h, a, kv = 64, 2, 64, 4, 2
    model = causal_lm(family, vocab=64, hidden=h, heads=a, kv_heads=kv, layers=3, positions=256,
                      dropout=0.0)
    ids = paddle.randint(0, 64, [b, s])
    prof = planner.profile(model, input_ids=ids, labels=ids, repeats=1)
    measured = prof.layers[prof.blocks[1]].saved_bytes
    counted = planner.transformer_layer_bytes(s, b, h, a, kv_heads=kv, intermediate=2 * h, mlp="swiglu",
                                              dropout=False, element_bytes=4, norm="rmsnorm",
                                              rope=True, repeat_kv=True)
    extra = 0 if family == "llama" else s * b * 2 * (h // a) * 4
    assert measured == counted + extra, (measured, counted)
