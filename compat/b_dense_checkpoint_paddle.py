# ruff: noqa: UP008  (kept as the page's code)
# The PyTorch half of "Code Example 1" on MindSpore's page "Differences with
# torch.utils.checkpoint.checkpoint", written with Paddle and paddle-recompute:
# torch -> paddle, torch.utils.checkpoint.checkpoint -> paddle_recompute.recompute,
# nn.Module -> nn.Layer, torch.randn(2, 12) -> paddle.randn([2, 12]).
# (paddle.nn.Linear stores its weight as (in, out): the transpose of torch's and MindSpore's.)
import paddle
import paddle.nn as nn

from paddle_recompute import recompute as cp


class Net(nn.Layer):
    def __init__(self):
        super(Net, self).__init__()
        self.fc1 = nn.Linear(12, 24)
        self.fc2 = nn.Linear(24, 48)
        self.fc3 = nn.Linear(48, 2)

    def forward(self, x):
        x = nn.functional.relu(self.fc1(x))
        x = cp(self._checkpoint, x)
        x = self.fc3(x)
        return x

    def _checkpoint(self, x):
        x = nn.functional.relu(self.fc2(x))
        return x

x = paddle.randn([2, 12])
model = Net()
output = model(x)
output.sum().backward()
print(model.fc1.weight.grad)
