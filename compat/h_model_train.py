"""``Model.train`` / ``Model.eval`` with callbacks and metrics, the way MindSpore's tutorials
and model zoos train: a LeNet-style network on a MNIST pipeline, ``nn.Momentum``,
``LossMonitor``, ``TimeMonitor``, ``ModelCheckpoint`` with ``CheckpointConfig`` and a custom
``Callback`` reading ``cb_params``; then ``eval`` with six metrics and ``predict``.

Unmodified MindSpore code: it runs under real MindSpore and, on Paddle, with
``paddle-mindspore compat/h_model_train.py --data DIR --init W.ckpt --out DIR``.
``--noise`` scales the initial weights by ``1 + noise * N(0, 1)`` (MindSpore's noise floor;
``--noise-seed`` picks the draw),
``--sink`` passes ``dataset_sink_mode=True``, ``--recompute`` marks the feature blocks
``.recompute()``. Prints LossMonitor's lines, then one JSON line.
"""
import argparse
import json
import os

import mindspore
import numpy as np
from mindspore import nn
from mindspore.dataset import MnistDataset, transforms, vision
from mindspore.train import (
    Accuracy,
    Callback,
    CheckpointConfig,
    Loss,
    LossMonitor,
    Model,
    ModelCheckpoint,
    Precision,
    Recall,
    TimeMonitor,
    Top1CategoricalAccuracy,
    Top5CategoricalAccuracy,
)


def create_dataset(path, usage, batch_size):
    dataset = MnistDataset(path, usage=usage, shuffle=False)
    dataset = dataset.map([vision.Rescale(1.0 / 255.0, 0.0), vision.Normalize((0.1307,), (0.3081,)),
                           vision.HWC2CHW()], input_columns="image")
    dataset = dataset.map(transforms.TypeCast(mindspore.int32), input_columns="label")
    return dataset.batch(batch_size, drop_remainder=True)


class LeNet(nn.Cell):
    def __init__(self, num_class=10, recompute=False):
        super().__init__()
        self.features = nn.SequentialCell(
            nn.Conv2d(1, 6, 5, pad_mode='valid'), nn.ReLU(), nn.MaxPool2d(kernel_size=2, stride=2),
            nn.Conv2d(6, 8, 5, pad_mode='valid'), nn.ReLU(), nn.MaxPool2d(kernel_size=2, stride=2))
        self.flatten = nn.Flatten()
        self.fc1 = nn.Dense(8 * 4 * 4, 32)
        self.relu = nn.ReLU()
        self.fc2 = nn.Dense(32, num_class)
        if recompute:
            self.features.recompute()

    def construct(self, x):
        x = self.flatten(self.features(x))
        return self.fc2(self.relu(self.fc1(x)))


class Recorder(Callback):
    """Reads the cb_params fields common callbacks use."""

    def __init__(self):
        super().__init__()
        self.steps, self.epochs = [], []

    def on_train_begin(self, run_context):
        cb_params = run_context.original_args()
        self.begin = {"epoch_num": cb_params.epoch_num, "batch_num": cb_params.batch_num,
                      "mode": cb_params.mode, "sink": cb_params.dataset_sink_mode}

    def on_train_step_end(self, run_context):
        cb_params = run_context.original_args()
        self.steps.append([cb_params.cur_epoch_num, cb_params.cur_step_num,
                           float(cb_params.net_outputs.asnumpy())])

    def on_train_epoch_end(self, run_context):
        cb_params = run_context.original_args()
        self.epochs.append([cb_params.cur_epoch_num, cb_params.cur_step_num])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", required=True)
    parser.add_argument("--init", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--noise", type=float, default=0.0)
    parser.add_argument("--noise-seed", type=int, default=0)
    parser.add_argument("--sink", action="store_true")
    parser.add_argument("--recompute", action="store_true")
    args = parser.parse_args()

    net = LeNet(recompute=args.recompute)
    param_dict = mindspore.load_checkpoint(args.init)
    if args.noise:
        rng = np.random.RandomState(args.noise_seed)
        for name in sorted(param_dict):
            value = param_dict[name].asnumpy()
            noisy = (value * (1 + args.noise * rng.standard_normal(value.shape))).astype(np.float32)
            param_dict[name] = mindspore.Parameter(mindspore.Tensor(noisy), name=name)
    mindspore.load_param_into_net(net, param_dict)

    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction='mean')
    optim = nn.Momentum(net.trainable_params(), learning_rate=0.05, momentum=0.9)
    metrics = {"accuracy": Accuracy(), "loss": Loss(), "top1": Top1CategoricalAccuracy(),
               "top5": Top5CategoricalAccuracy(), "precision": Precision(), "recall": Recall()}
    model = Model(net, loss_fn=loss, optimizer=optim, metrics=metrics)

    train_dataset = create_dataset(args.data, "train", 16)
    test_dataset = create_dataset(args.data, "test", 8)
    config = CheckpointConfig(save_checkpoint_steps=4, keep_checkpoint_max=2)
    ckpoint = ModelCheckpoint(prefix="lenet", directory=args.out, config=config)
    recorder = Recorder()
    model.train(args.epochs, train_dataset, callbacks=[LossMonitor(2), TimeMonitor(), ckpoint, recorder],
                dataset_sink_mode=args.sink)
    result = model.eval(test_dataset)
    data = next(test_dataset.create_tuple_iterator())[0]
    logits = model.predict(data)
    record = {"begin": recorder.begin, "steps": recorder.steps, "epochs": recorder.epochs,
              "eval": {k: np.asarray(v).tolist() for k, v in result.items()},
              "predict": logits.asnumpy()[:2].tolist(), "files": sorted(os.listdir(args.out))}
    print(json.dumps(record))


if __name__ == '__main__':
    main()
