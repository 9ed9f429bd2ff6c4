# ruff: noqa  (MindSpore's documented code, kept verbatim)
# The example of MindSpore 2.10's mindspore.recompute docstring, as published.
# compat/mindspore_originals/a_recompute_docstring.py is the original (run it unmodified with `paddle-mindspore`);
# compat/a_recompute_docstring.py differs from it only in its import lines (mindspore -> paddle_mindspore).
import numpy as np
import mindspore.nn as nn
from mindspore import ops
from mindspore import Tensor, recompute


class MyCell(nn.Cell):
    def __init__(self):
        super(MyCell, self).__init__(auto_prefix=False)
        self.conv = nn.Conv2d(2, 2, 2, has_bias=False, weight_init='ones')
        self.relu = ops.ReLU()

    def construct(self, x):
        y = recompute(self.conv, x)
        return self.relu(y)


inputs = Tensor(np.ones([2, 2, 2, 2]).astype(np.float32) * 2)
my_net = MyCell()
grad = ops.grad(my_net)(inputs)
print(grad)
