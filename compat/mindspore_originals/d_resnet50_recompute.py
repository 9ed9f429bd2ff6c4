# ruff: noqa  (MindSpore's documented code, kept verbatim)
# ResNet-50 as in MindSpore's model zoo (official/cv/resnet/src/resnet.py, condensed) with the
# recomputation of MindSpore's recompute tutorial: `self.relu.recompute()` on the ReLU primitive
# and `resnet_block.recompute()` on the residual blocks built in `_make_layer`; trained a few
# steps with value_and_grad and Momentum on synthetic CIFAR-10-shaped data (no download).
# compat/mindspore_originals/d_resnet50_recompute.py is the original (run it unmodified with `paddle-mindspore`);
# compat/d_resnet50_recompute.py differs from it only in its import lines (mindspore -> paddle_mindspore).
import argparse

import numpy as np
import mindspore as ms
from mindspore import nn, ops


def _conv3x3(in_channel, out_channel, stride=1):
    return nn.Conv2d(in_channel, out_channel, kernel_size=3, stride=stride, padding=0, pad_mode='same',
                     weight_init='he_normal')


def _conv1x1(in_channel, out_channel, stride=1):
    return nn.Conv2d(in_channel, out_channel, kernel_size=1, stride=stride, padding=0, pad_mode='same',
                     weight_init='he_normal')


def _conv7x7(in_channel, out_channel, stride=1):
    return nn.Conv2d(in_channel, out_channel, kernel_size=7, stride=stride, padding=0, pad_mode='same',
                     weight_init='he_normal')


def _bn(channel):
    return nn.BatchNorm2d(channel, eps=1e-4, momentum=0.9, gamma_init=1, beta_init=0, moving_mean_init=0,
                          moving_var_init=1)


def _bn_last(channel):
    return nn.BatchNorm2d(channel, eps=1e-4, momentum=0.9, gamma_init=0, beta_init=0, moving_mean_init=0,
                          moving_var_init=1)


def _fc(in_channel, out_channel):
    return nn.Dense(in_channel, out_channel, has_bias=True, weight_init='normal', bias_init=0)


class ResidualBlock(nn.Cell):
    """Bottleneck: 1x1 reduce, 3x3, 1x1 expand, plus the (projected) shortcut."""
    expansion = 4

    def __init__(self, in_channel, out_channel, stride=1):
        super(ResidualBlock, self).__init__()
        channel = out_channel // self.expansion
        self.conv1 = _conv1x1(in_channel, channel, stride=1)
        self.bn1 = _bn(channel)
        self.conv2 = _conv3x3(channel, channel, stride=stride)
        self.bn2 = _bn(channel)
        self.conv3 = _conv1x1(channel, out_channel, stride=1)
        self.bn3 = _bn_last(out_channel)
        self.relu = nn.ReLU()
        self.down_sample = stride != 1 or in_channel != out_channel
        if self.down_sample:
            self.down_sample_layer = nn.SequentialCell([_conv1x1(in_channel, out_channel, stride),
                                                        _bn(out_channel)])

    def construct(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        if self.down_sample:
            identity = self.down_sample_layer(identity)
        out = out + identity
        return self.relu(out)


class ResNet(nn.Cell):
    def __init__(self, block, layer_nums, in_channels, out_channels, strides, num_classes, recompute=True):
        super(ResNet, self).__init__()
        self.recompute_blocks = recompute
        self.conv1 = _conv7x7(3, 64, stride=2)
        self.bn1 = _bn(64)
        self.relu = ops.ReLU()
        if recompute:
            self.relu.recompute()
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, pad_mode="same")
        self.layer1 = self._make_layer(block, layer_nums[0], in_channels[0], out_channels[0], strides[0])
        self.layer2 = self._make_layer(block, layer_nums[1], in_channels[1], out_channels[1], strides[1])
        self.layer3 = self._make_layer(block, layer_nums[2], in_channels[2], out_channels[2], strides[2])
        self.layer4 = self._make_layer(block, layer_nums[3], in_channels[3], out_channels[3], strides[3])
        self.mean = ops.ReduceMean(keep_dims=True)
        self.flatten = nn.Flatten()
        self.end_point = _fc(out_channels[3], num_classes)

    def _make_layer(self, block, layer_num, in_channel, out_channel, stride):
        layers = []
        resnet_block = block(in_channel, out_channel, stride=stride)
        layers.append(resnet_block)
        for _ in range(1, layer_num):
            resnet_block = block(out_channel, out_channel, stride=1)
            if self.recompute_blocks:
                resnet_block.recompute()
            layers.append(resnet_block)
        return nn.SequentialCell(layers)

    def construct(self, x):
        x = self.conv1(x)
        x = self.bn1(x)
        x = self.relu(x)
        c1 = self.maxpool(x)
        c2 = self.layer1(c1)
        c3 = self.layer2(c2)
        c4 = self.layer3(c3)
        c5 = self.layer4(c4)
        out = self.mean(c5, (2, 3))
        out = self.flatten(out)
        return self.end_point(out)


def resnet50(class_num=10, recompute=True):
    return ResNet(ResidualBlock, [3, 4, 6, 3], [64, 256, 512, 1024], [256, 512, 1024, 2048], [1, 2, 2, 2],
                  class_num, recompute)


def train(net, steps, batch_size, seed):
    """A few Momentum steps on random CIFAR-10-shaped batches; returns the losses."""
    loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction='mean')
    optimizer = nn.Momentum(net.trainable_params(), learning_rate=0.01, momentum=0.9)

    def forward_fn(data, label):
        logits = net(data)
        return loss_fn(logits, label), logits

    grad_fn = ms.value_and_grad(forward_fn, None, optimizer.parameters, has_aux=True)
    net.set_train()
    rng = np.random.RandomState(seed)
    losses = []
    for step in range(steps):
        data = ms.Tensor(rng.randn(batch_size, 3, 32, 32).astype(np.float32))
        label = ms.Tensor(rng.randint(0, 10, (batch_size,)).astype(np.int32))
        (loss, _), grads = grad_fn(data, label)
        optimizer(grads)
        losses.append(float(loss))
        print(f"step: {step}, loss is {float(loss):.6f}")
    return losses


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-recompute", action="store_true")
    args = parser.parse_args()
    ms.set_seed(args.seed)
    train(resnet50(10, recompute=not args.no_recompute), args.steps, args.batch_size, args.seed)
