# ruff: noqa  (MindSpore's documented code, kept verbatim)
# The MindSpore half of "Code Example 1" on MindSpore's page "Differences with
# torch.utils.checkpoint.checkpoint" (docs/mindspore/source_en/note/api_mapping/pytorch_diff/checkpoint.md).
# compat/mindspore_originals/b_dense_cell_recompute.py is the original (run it unmodified with `paddle-mindspore`);
# compat/b_dense_cell_recompute.py differs from it only in its import lines (mindspore -> paddle_mindspore).
import mindspore
import numpy as np
from mindspore import nn, ops

class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Dense(12, 24)
        self.relu1 = ops.ReLU()
        self.fc2 = nn.Dense(24, 48)
        self.fc2.recompute()
        self.relu2 = ops.ReLU()
        self.relu2.recompute()
        self.fc3 = nn.Dense(48, 2)

    def construct(self, x):
        x = self.fc1(x)
        x = self.relu1(x)
        x = self.fc2(x)
        x = self.relu2(x)
        x = self.fc3(x)
        return x

model = Net()

def forward_fn(data, label):
    logits = model(data)
    loss = logits.sum()
    return loss, logits

grad_fn = mindspore.value_and_grad(forward_fn, None, (model.fc1.weight,), has_aux=True)

x = mindspore.Tensor(np.random.randn(2, 12), dtype=mindspore.float32)
label = mindspore.Tensor(np.random.randn(2, 12), dtype=mindspore.float32)
(loss, _), grads = grad_fn(x, label)
print(grads)
