"""Paddle's own recompute unit-test scenario, rebuilt: five dropout MLP blocks, SGD, ten steps.

Every loss, every parameter and every gradient of every step must equal, bit for bit, the
run without recompute.
"""

import functools
import random

import numpy as np
import paddle
import pytest
from paddle import nn

from paddle_recompute import recompute, recompute_sequential
from paddle_recompute.testing import assert_tensors_equal, snapshot_grads, snapshot_params

SIZE = 10
STEPS = 10
N_BLOCKS = 5


def fc_block(index: int, is_last: bool) -> nn.Sequential:
    name = f"block_{index}"
    return nn.Sequential(
        (f"{name}_fc_0", nn.Linear(SIZE, SIZE)),
        (f"{name}_dropout", nn.Dropout(p=0.5)),
        (f"{name}_relu_1", nn.ReLU()),
        (f"{name}_fc_1", nn.Linear(SIZE, SIZE)),
        (f"{name}_relu_2", nn.ReLU()),
        (f"{name}_fc_2", nn.Linear(SIZE, 1 if is_last else SIZE, bias_attr=False)),
    )


class PosBlock(nn.Layer):
    """A block whose forward takes an extra ``pos`` (a tensor, a parameter or a tuple)."""

    def __init__(self, index: int, is_last: bool):
        super().__init__()
        self.body = fc_block(index, is_last)

    def forward(self, x, pos):
        if isinstance(pos, tuple):
            x = x + pos[0] + pos[1]
        else:
            x = x + pos
        return self.body(x)


class Net(nn.Layer):
    """The five blocks; ``recompute_blocks`` go through recompute.

    Args:
        recompute_blocks: indices of the recomputed blocks.
        options: recompute options.
        call: ``"positional"`` or ``"keyword"`` passing of the block input.
        pos: None, ``"tensor"``, ``"param"`` or ``"tuple"``: the extra argument of each block.
    """

    def __init__(self, recompute_blocks=(), options=None, call="positional", pos=None):
        super().__init__()
        self.recompute_blocks = set(recompute_blocks)
        self.options = options or {}
        self.call = call
        self.pos_kind = pos
        block = fc_block if pos is None else PosBlock
        self.blocks = nn.LayerList([block(i, i == N_BLOCKS - 1) for i in range(N_BLOCKS)])
        self.pos_param = self.create_parameter([SIZE]) if pos in ("param", "tuple") else None

    def _pos(self, x):
        if self.pos_kind == "tensor":
            return paddle.to_tensor(np.linspace(-1, 1, SIZE, dtype="float32"))
        if self.pos_kind == "param":
            return self.pos_param
        return (self.pos_param, paddle.full([1, SIZE], 0.5))

    def forward(self, x):
        for i, block in enumerate(self.blocks):
            args, kwargs = self._block_args(x)
            if i in self.recompute_blocks:
                x = recompute(block, *args, **self.options, **kwargs)
            else:
                x = block(*args, **kwargs)
        return x

    def _block_args(self, x):
        if self.pos_kind is None:
            return ((x,), {}) if self.call == "positional" else ((), {"input": x})
        pos = self._pos(x)
        return ((x, pos), {}) if self.call == "positional" else ((), {"x": x, "pos": pos})


class SeqNet(nn.Layer):
    """The same blocks as one ``nn.Sequential`` run through ``recompute_sequential``."""

    def __init__(self, segments=None, options=None):
        super().__init__()
        self.segments = segments
        self.options = options or {}
        self.seq = nn.Sequential(*[fc_block(i, i == N_BLOCKS - 1) for i in range(N_BLOCKS)])

    def forward(self, x):
        if self.segments is None:
            return self.seq(x)
        return recompute_sequential({"segments": self.segments, **self.options}, self.seq, x)


def run_model(make_model, batch: int) -> dict:
    """Paddle's recipe: reset seeds, SGD lr 0.01, ten steps of ``mean(model(x))``."""
    paddle.seed(10)
    np.random.seed(10)
    random.seed(10)
    model = make_model()
    optimizer = paddle.optimizer.SGD(learning_rate=0.01, parameters=model.parameters())
    losses, grads, params = [], [], []
    for _ in range(STEPS):
        x = paddle.to_tensor(np.random.randn(batch, SIZE).astype("float32"))
        loss = model(x).mean()
        loss.backward()
        losses.append(loss.numpy())
        grads.append(snapshot_grads(model))
        optimizer.step()
        optimizer.clear_grad()
        params.append(snapshot_params(model))
    return {"losses": losses, "grads": grads, "params": params}


@functools.cache
def baseline(batch: int, call: str = "positional", pos=None) -> dict:
    return run_model(lambda: Net((), call=call, pos=pos), batch)


def assert_same_training(actual: dict, expected: dict) -> None:
    __tracebackhide__ = True
    missing = [name for step in actual["grads"] for name, g in step.items() if g is None]
    assert not missing, f"parameters without a gradient: {sorted(set(missing))}"
    assert_tensors_equal(actual, expected)


@pytest.mark.parametrize("blocks", [[1], [3], [1, 2, 3], [1, 3]], ids=str)
@pytest.mark.parametrize("batch", [1, 4])
def test_recompute_blocks_match_plain_training(blocks, batch, use_reentrant):
    options = {"preserve_rng_state": True, "use_reentrant": use_reentrant}
    result = run_model(lambda: Net(blocks, options), batch)
    assert_same_training(result, baseline(batch))


def test_all_blocks_recomputed(use_reentrant):
    result = run_model(lambda: Net(range(N_BLOCKS), {"use_reentrant": use_reentrant}), 4)
    assert_same_training(result, baseline(4))


@pytest.mark.parametrize("segments", [1, 2, 3])
def test_recompute_sequential_matches_plain_training(segments, use_reentrant):
    options = {"preserve_rng_state": True, "use_reentrant": use_reentrant}
    expected = run_model(lambda: SeqNet(None), batch=4)
    result = run_model(lambda: SeqNet(segments, options), batch=4)
    assert_same_training(result, expected)


def test_sequential_baseline_equals_block_baseline():
    """SeqNet and Net build the same parameters in the same order: same training."""
    expected = baseline(4)
    result = run_model(lambda: SeqNet(None), batch=4)
    assert_tensors_equal(result["losses"], expected["losses"])


@pytest.mark.parametrize("call", ["positional", "keyword"])
@pytest.mark.parametrize("pos", [None, "tensor", "param", "tuple"])
def test_inputs_by_position_and_keyword_with_extra_pos(call, pos, use_reentrant):
    options = {"use_reentrant": use_reentrant}
    result = run_model(lambda: Net([1, 3], options, call=call, pos=pos), batch=4)
    assert_same_training(result, baseline(4, call, pos))


def test_keyword_and_positional_baselines_agree():
    assert_tensors_equal(baseline(4, "keyword", "tuple"), baseline(4, "positional", "tuple"))


class ScaledBlock(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(SIZE, SIZE)

    def forward(self, x, p, c):
        return paddle.tanh(self.fc(x + p * c))


def shared_leaf_grads(mode: str):
    """Five blocks all using one parameter ``p`` (through a multiply); blocks 1 and 3 recomputed."""
    paddle.seed(1)
    blocks = nn.LayerList([ScaledBlock() for _ in range(N_BLOCKS)])
    p = paddle.create_parameter([SIZE], "float32")
    c = paddle.full([1, SIZE], 0.5)
    x = paddle.randn([4, SIZE])
    for i, block in enumerate(blocks):
        if i not in (1, 3) or mode == "plain":
            x = block(x, p, c)
        elif mode == "builtin":
            from paddle.distributed.fleet.utils import recompute as builtin

            x = builtin(block, x, p, c, use_reentrant=True)
        else:
            x = recompute(block, x, p, c, use_reentrant=mode == "reentrant")
    x.mean().backward()
    return [p.grad] + [q.grad for q in blocks.parameters()]


def test_leaf_shared_by_several_regions():
    """Non-reentrant keeps the graph, so even a leaf used by every block sums its gradient
    in the same order: exact.  Reentrant regions hand back a whole block's contribution at
    once, so the engine adds the five contributions to ``p`` in another order: the same
    result as Paddle's built-in reentrant recompute bit for bit, and the plain result up
    to float rounding.  (Without the multiply, or without sharing, reentrant is exact too:
    see the ``pos`` tests above.)"""
    plain = shared_leaf_grads("plain")
    assert_tensors_equal(shared_leaf_grads("non_reentrant"), plain)
    reentrant = shared_leaf_grads("reentrant")
    assert_tensors_equal(reentrant, shared_leaf_grads("builtin"))
    assert_tensors_equal(reentrant, plain, rtol=1e-6, atol=1e-9)
    assert_tensors_equal(reentrant[1:], plain[1:])  # only the shared leaf differs
