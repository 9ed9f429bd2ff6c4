"""Dataset pipelines without shuffling, written against ``mindspore.dataset`` (run by real
MindSpore in record_datasets.py and by the layer in compat/tests/test_ms_dataset.py).

Each function takes the folder of make_dataset_files.py and returns a dataset; the outputs
of ``create_tuple_iterator(output_numpy=True)`` over every row are compared.
"""

from __future__ import annotations

import mindspore as ms
import mindspore.dataset as ds
import mindspore.dataset.transforms as transforms
import mindspore.dataset.vision as vision
import numpy as np


def mnist_raw(root):
    return ds.MnistDataset(f"{root}/mnist", shuffle=False).skip(28).take(8)


def mnist_test_usage(root):
    return ds.MnistDataset(f"{root}/mnist", usage="test", shuffle=False, num_samples=5)


def mnist_all_samples(root):
    return ds.MnistDataset(f"{root}/mnist", usage="all", shuffle=False, num_samples=6)


def mnist_tutorial(root):
    """The beginner tutorial's ``datapipe``."""
    dataset = ds.MnistDataset(f"{root}/mnist", shuffle=False, num_samples=14)
    image_transforms = [
        vision.Rescale(1.0 / 255.0, 0),
        vision.Normalize(mean=(0.1307,), std=(0.3081,)),
        vision.HWC2CHW(),
    ]
    dataset = dataset.map(image_transforms, "image")
    dataset = dataset.map(transforms.TypeCast(ms.int32), "label")
    return dataset.batch(4)


def cifar_raw(root):
    return ds.Cifar10Dataset(f"{root}/cifar10", shuffle=False, num_samples=6)


def cifar_test(root):
    return ds.Cifar10Dataset(f"{root}/cifar10", usage="test", shuffle=False, num_samples=5)


def cifar_all(root):
    return ds.Cifar10Dataset(f"{root}/cifar10", usage="all", shuffle=False).skip(9998).take(4)


def cifar_pipeline(root):
    dataset = ds.Cifar10Dataset(f"{root}/cifar10", usage="train", shuffle=False, num_samples=10)
    dataset = dataset.map(
        [
            vision.CenterCrop(24),
            vision.Rescale(1.0 / 255.0, 0.0),
            vision.Normalize([0.4914, 0.4822, 0.4465], [0.2023, 0.1994, 0.2010]),
            vision.HWC2CHW(),
        ],
        input_columns="image",
    )
    dataset = dataset.map(transforms.Compose([transforms.TypeCast(ms.int32), transforms.OneHot(10)]), "label")
    return dataset.batch(4, drop_remainder=True)


def cifar_resize(root):
    dataset = ds.Cifar10Dataset(f"{root}/cifar10", usage="test", shuffle=False, num_samples=5)
    return dataset.map([vision.Resize((20, 24)), vision.Resize(12)], "image")


def cifar_resize_nearest(root):
    dataset = ds.Cifar10Dataset(f"{root}/cifar10", usage="test", shuffle=False, num_samples=5)
    return dataset.map(vision.Resize((40, 20), vision.Inter.NEAREST), "image")


def folder_raw(root):
    dataset = ds.ImageFolderDataset(f"{root}/folder", shuffle=False)
    return dataset.map(vision.Decode(), "image")


def folder_decoded(root):
    dataset = ds.ImageFolderDataset(
        f"{root}/folder", shuffle=False, decode=True, class_indexing={"cat": 2, "dog": 0, "eel": 1}
    )
    return dataset.map([vision.CenterCrop((20, 16)), vision.ToTensor()], "image")


def folder_extensions(root):
    return ds.ImageFolderDataset(f"{root}/folder", shuffle=False, extensions=[".png"], decode=True)


def folder_pil(root):
    dataset = ds.ImageFolderDataset(f"{root}/folder", shuffle=False)
    return dataset.map([vision.Decode(to_pil=True), vision.CenterCrop(12), vision.ToTensor()], "image")


def _rows():
    for i in range(7):
        yield np.arange(i, i + 6, dtype=np.float32).reshape(2, 3), np.int64(i % 3)


def generator_ops(root):
    dataset = ds.GeneratorDataset(_rows, column_names=["data", "label"], shuffle=False)
    dataset = dataset.map(lambda x: (x * 2, x.sum()), input_columns="data", output_columns=["twice", "total"])
    dataset = dataset.rename("label", "target").project(["target", "total", "twice"])
    return dataset.repeat(2).batch(3)


class _Source:
    def __init__(self):
        self.values = np.linspace(0.0, 1.0, 10, dtype=np.float32)

    def __getitem__(self, index):
        return self.values[index], index

    def __len__(self):
        return len(self.values)


def generator_random_access(root):
    dataset = ds.GeneratorDataset(_Source(), ["value", "index"], shuffle=False)
    return dataset.batch(4, drop_remainder=False)


def numpy_slices_dict(root):
    data = {"a": np.arange(12, dtype=np.float32).reshape(6, 2), "b": [1, 2, 3, 4, 5, 6], "c": [0.5] * 6}
    return ds.NumpySlicesDataset(data, shuffle=False).batch(4)


def numpy_slices_tuple(root):
    return ds.NumpySlicesDataset(
        (np.ones((3, 2), np.int32), [0.25, 0.5, 0.75]), column_names=["x", "y"], shuffle=False
    )


def numpy_slices_list(root):
    return ds.NumpySlicesDataset([[1, 2], [3, 4], [5, 6]], shuffle=False).map(transforms.OneHot(8))


PIPELINES = {
    name: fn
    for name, fn in globals().items()
    if callable(fn) and not name.startswith("_") and fn.__module__ == __name__
}
