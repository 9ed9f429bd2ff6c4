"""MindSpore's beginner tutorial (quick start), end to end: a MNIST pipeline, a Dense network,
a train/test loop with ``value_and_grad``, then save, reload and predict.

Unmodified MindSpore code: it runs under real MindSpore and, on Paddle, with
``paddle-mindspore compat/g_tutorial_mnist.py --data DIR ...``. Changes
from the published tutorial, so that runs can be compared: the pipeline does not shuffle, the
hidden layers are 64 wide, the initial weights come from ``--init`` (a ``.ckpt``), optionally
scaled by ``1 + noise * N(0, 1)`` (``--noise``, ``--noise-seed``, to measure MindSpore's own noise floor), and
``--recompute`` marks each hidden block ``.recompute()``. Prints one JSON line.
"""
import argparse
import json
import os

import mindspore
import numpy as np
from mindspore import nn
from mindspore.dataset import MnistDataset, transforms, vision


def datapipe(path, usage, batch_size):
    image_transforms = [
        vision.Rescale(1.0 / 255.0, 0),
        vision.Normalize(mean=(0.1307,), std=(0.3081,)),
        vision.HWC2CHW()
    ]
    label_transform = transforms.TypeCast(mindspore.int32)

    dataset = MnistDataset(path, usage=usage, shuffle=False)
    dataset = dataset.map(image_transforms, 'image')
    dataset = dataset.map(label_transform, 'label')
    dataset = dataset.batch(batch_size)
    return dataset


class Network(nn.Cell):
    def __init__(self, recompute=False):
        super().__init__()
        self.flatten = nn.Flatten()
        self.hidden1 = nn.SequentialCell(nn.Dense(28*28, 64), nn.ReLU())
        self.hidden2 = nn.SequentialCell(nn.Dense(64, 64), nn.ReLU())
        self.dense = nn.Dense(64, 10)
        if recompute:
            self.hidden1.recompute()
            self.hidden2.recompute()

    def construct(self, x):
        x = self.flatten(x)
        logits = self.dense(self.hidden2(self.hidden1(x)))
        return logits


def load_initial(model, path, noise, seed=0):
    param_dict = mindspore.load_checkpoint(path)
    if noise:
        rng = np.random.RandomState(seed)
        for name in sorted(param_dict):
            value = param_dict[name].asnumpy()
            noisy = value * (1 + noise * rng.standard_normal(value.shape))
            param_dict[name] = mindspore.Parameter(mindspore.Tensor(noisy.astype(np.float32)), name=name)
    param_not_load, _ = mindspore.load_param_into_net(model, param_dict)
    return param_not_load


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", required=True)
    parser.add_argument("--init", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--noise", type=float, default=0.0)
    parser.add_argument("--noise-seed", type=int, default=0)
    parser.add_argument("--recompute", action="store_true")
    args = parser.parse_args()

    train_dataset = datapipe(args.data, 'train', 16)
    test_dataset = datapipe(args.data, 'test', 16)
    model = Network(args.recompute)
    not_loaded = load_initial(model, args.init, args.noise, args.noise_seed)

    loss_fn = nn.CrossEntropyLoss()
    optimizer = nn.SGD(model.trainable_params(), 1e-2)

    def forward_fn(data, label):
        logits = model(data)
        loss = loss_fn(logits, label)
        return loss, logits

    grad_fn = mindspore.value_and_grad(forward_fn, None, optimizer.parameters, has_aux=True)

    def train_step(data, label):
        (loss, _), grads = grad_fn(data, label)
        optimizer(grads)
        return loss

    record = {"not_loaded": not_loaded, "losses": [], "accuracy": [], "test_loss": []}

    def train(model, dataset):
        size = dataset.get_dataset_size()
        model.set_train()
        for batch, (data, label) in enumerate(dataset.create_tuple_iterator()):
            loss = train_step(data, label)
            record["losses"].append(float(loss.asnumpy()))
            if batch % 2 == 0:
                loss, current = loss.asnumpy(), batch
                print(f"loss: {loss:>7f}  [{current:>3d}/{size:>3d}]")

    def test(model, dataset, loss_fn):
        num_batches = dataset.get_dataset_size()
        model.set_train(False)
        total, test_loss, correct = 0, 0, 0
        for data, label in dataset.create_tuple_iterator():
            pred = model(data)
            total += len(data)
            test_loss += loss_fn(pred, label).asnumpy()
            correct += (pred.argmax(1) == label).asnumpy().sum()
        test_loss /= num_batches
        correct /= total
        record["accuracy"].append(float(correct))
        record["test_loss"].append(float(test_loss))
        print(f"Test: \n Accuracy: {(100*correct):>0.1f}%, Avg loss: {test_loss:>8f} \n")

    for t in range(args.epochs):
        print(f"Epoch {t+1}\n-------------------------------")
        train(model, train_dataset)
        test(model, test_dataset, loss_fn)
    print("Done!")

    os.makedirs(args.out, exist_ok=True)
    mindspore.save_checkpoint(model, os.path.join(args.out, "model.ckpt"))
    print("Saved Model to model.ckpt")

    model = Network()
    param_dict = mindspore.load_checkpoint(os.path.join(args.out, "model.ckpt"))
    param_not_load, _ = mindspore.load_param_into_net(model, param_dict)
    record["param_not_load"] = param_not_load
    model.set_train(False)
    for data, label in test_dataset:
        pred = model(data)
        predicted = pred.argmax(1)
        print(f'Predicted: "{predicted[:10]}", Actual: "{label[:10]}"')
        record["predicted"] = predicted.asnumpy().tolist()
        record["logits"] = pred.asnumpy()[:2].tolist()
        break
    print(json.dumps(record))


if __name__ == '__main__':
    main()
