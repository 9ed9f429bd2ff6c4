"""Record the exception type MindSpore 2.10 raises for bad arguments to the dataset and train APIs.

    /work/msvenv/bin/python compat/record/record_errors.py compat/tests/recorded/errors.json

``CASES`` is MindSpore code; compat/tests/test_ms_train.py runs it under the layer and
expects the same type for every case (``"no error"`` included).
"""

import json
import sys
from pathlib import Path

import mindspore as ms
import mindspore.dataset as ds
import numpy as np
from mindspore import nn
from mindspore.train import Accuracy, CheckpointConfig, LossMonitor, Model, ModelCheckpoint

MNIST = str(Path(__file__).resolve().parents[1] / "tests" / "recorded" / "datasets" / "mnist")


def rows():
    return ds.NumpySlicesDataset({"x": np.ones((5, 2), np.float32), "y": [0, 1, 0, 1, 0]}, shuffle=False)


def cases():
    net = nn.Dense(2, 2)
    return {
        "gen_shuffle_iterable": lambda: ds.GeneratorDataset(lambda: iter([(1,)]), ["a"], shuffle=True),
        "gen_no_names": lambda: ds.GeneratorDataset([1], None),
        "mnist_usage": lambda: ds.MnistDataset(MNIST, usage="val"),
        "onehot0": lambda: ds.transforms.OneHot(0),
        "model_str": lambda: Model("net"),
        "train_epoch0": lambda: Model(net, nn.MSELoss(), nn.SGD(net.trainable_params())).train(0, rows()),
        "eval_no_metrics": lambda: Model(net, nn.MSELoss(), nn.SGD(net.trainable_params())).eval(rows()),
        "callbacks_int": lambda: Model(
            net, nn.SoftmaxCrossEntropyWithLogits(sparse=True), nn.SGD(net.trainable_params())
        ).train(1, rows().batch(2), callbacks=[3]),
        "ckpt_config_zero": lambda: CheckpointConfig(0, 0, 0, 0),
        "ckpt_prefix_slash": lambda: ModelCheckpoint("a/b"),
        "lossmonitor_neg": lambda: LossMonitor(-1),
        "accuracy_empty": lambda: Accuracy().eval(),
        "accuracy_one_input": lambda: Accuracy().update(1),
        "lpin_list": lambda: ms.load_param_into_net(net, [1]),
        "take0": lambda: rows().take(0),
        "repeat0": lambda: rows().repeat(0),
        "rename_len": lambda: rows().rename(["x", "y"], ["a"]),
        "tuple_iter_epochs0": lambda: rows().create_tuple_iterator(num_epochs=0),
        "ckpt_file_missing": lambda: ms.load_checkpoint("/nonexistent.ckpt"),
        "topk0": lambda: ms.train.TopKCategoricalAccuracy(0),
    }


def outcomes():
    found = {}
    for name, call in cases().items():
        try:
            call()
            found[name] = "no error"
        except Exception as error:  # the type is the record
            found[name] = type(error).__name__
    return found


if __name__ == "__main__":
    Path(sys.argv[1]).write_text(json.dumps(outcomes(), indent=0, sort_keys=True) + "\n")
