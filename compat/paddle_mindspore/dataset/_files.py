"""``MnistDataset``, ``Cifar10Dataset``, ``Cifar100Dataset`` and ``ImageFolderDataset``: the
standard on-disk formats.

MNIST: the idx files (``train-images-idx3-ubyte``, ``t10k-labels-idx1-ubyte``, ...); image
uint8 ``(28, 28, 1)``, label uint32. CIFAR-10: the binary version (``data_batch_*.bin``,
``test_batch.bin``, records of one label byte and 3072 CHW pixels); image uint8
``(32, 32, 3)`` HWC, label uint32. Image folder: one sub-folder per class; image the file's
bytes (uint8, 1-D) or, with ``decode=True``, RGB HWC uint8 decoded by Pillow; label int32.
``usage=None`` (or ``"all"``) reads MNIST's test files before its train files and CIFAR-10's
train files before its test file, as MindSpore 2.10 does (recorded).
"""

from __future__ import annotations

import os
import struct
from typing import Any

import numpy as np

from ._pipeline import Dataset
from ._source import MappableSource, source_sampler
from .samplers import Sampler
from .vision import Decode

__all__ = ["MnistDataset", "Cifar10Dataset", "Cifar100Dataset", "ImageFolderDataset"]


def _folder(dataset_dir: Any) -> str:
    if not isinstance(dataset_dir, str) or not os.path.isdir(dataset_dir):
        raise ValueError(
            f"The folder {dataset_dir} does not exist or is not a directory or permission denied!"
        )
    return dataset_dir


def _usages(usage: Any, api: str, everything: tuple = ("train", "test")) -> list[str]:
    if usage is None or usage == "all":
        return list(everything)
    if usage not in ("train", "test"):
        raise ValueError(f"Input usage is not within the valid set of ['train', 'test', 'all'] ({api}).")
    return [usage]


def _idx(path: str, magic: int) -> np.ndarray:
    with open(path, "rb") as f:
        content = f.read()
    dims = content[3]
    header = struct.unpack(f">{1 + dims}I", content[: 4 * (1 + dims)])
    if header[0] != magic:
        raise RuntimeError(f"Invalid MNIST file {path}: magic number {header[0]}, expected {magic}.")
    return np.frombuffer(content, np.uint8, offset=4 * (1 + dims)).reshape(header[1:])


class _Arrays(MappableSource):
    def __init__(self, images: np.ndarray, labels: np.ndarray, sampler: Sampler):
        super().__init__(["image", "label"], sampler)
        self._images, self._labels = images, labels

    def _count(self) -> int:
        return len(self._labels)

    def _row(self, index: int) -> tuple:
        return self._images[index].copy(), np.array(self._labels[index], np.uint32)


def MnistDataset(
    dataset_dir: str,
    usage: str | None = None,
    num_samples: int | None = None,
    num_parallel_workers: int | None = None,
    shuffle: bool | None = None,
    sampler: Any = None,
    num_shards: int | None = None,
    shard_id: int | None = None,
    cache: Any = None,
) -> Dataset:
    """``mindspore.dataset.MnistDataset`` (shuffled unless ``shuffle=False``)."""
    root = _folder(dataset_dir)
    sampler = source_sampler(
        "MnistDataset",
        num_samples,
        shuffle,
        sampler=sampler,
        num_shards=num_shards,
        shard_id=shard_id,
        cache=cache,
    )
    images, labels = [], []
    for usage_name in _usages(usage, "MnistDataset", ("test", "train")):
        prefix = os.path.join(root, "train" if usage_name == "train" else "t10k")
        if not os.path.exists(f"{prefix}-images-idx3-ubyte"):
            continue
        images.append(_idx(f"{prefix}-images-idx3-ubyte", 2051)[..., None])
        labels.append(_idx(f"{prefix}-labels-idx1-ubyte", 2049))
    if not labels:
        raise RuntimeError(f"MnistDataset: no MNIST files for usage {usage!r} in {root}.")
    return Dataset(_Arrays(np.concatenate(images), np.concatenate(labels), sampler))


def _cifar_records(path: str) -> np.ndarray:
    records = np.fromfile(path, np.uint8)
    if records.size % 3073:
        raise RuntimeError(
            f"Invalid cifar10 file, failed to read data from: {path}, re-download dataset(make sure "
            f"it is CIFAR-10 binary version)."
        )
    return records.reshape(-1, 3073)


def Cifar10Dataset(
    dataset_dir: str,
    usage: str | None = None,
    num_samples: int | None = None,
    num_parallel_workers: int | None = None,
    shuffle: bool | None = None,
    sampler: Any = None,
    num_shards: int | None = None,
    shard_id: int | None = None,
    cache: Any = None,
) -> Dataset:
    """``mindspore.dataset.Cifar10Dataset`` (binary version; shuffled unless ``shuffle=False``)."""
    root = _folder(dataset_dir)
    sampler = source_sampler(
        "Cifar10Dataset",
        num_samples,
        shuffle,
        sampler=sampler,
        num_shards=num_shards,
        shard_id=shard_id,
        cache=cache,
    )
    files = sorted(os.listdir(root))
    wanted = {
        "train": [f for f in files if f.startswith("data_batch_") and f.endswith(".bin")],
        "test": [f for f in files if f == "test_batch.bin"],
    }
    chosen = [f for u in _usages(usage, "Cifar10Dataset") for f in wanted[u]]
    if not chosen:
        raise RuntimeError(f"Cifar10Dataset: no CIFAR-10 binary files for usage {usage!r} in {root}.")
    records = np.concatenate([_cifar_records(os.path.join(root, f)) for f in chosen])
    images = records[:, 1:].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1)
    return Dataset(_Arrays(images, records[:, 0], sampler))


class _Cifar100(MappableSource):
    def __init__(self, records: np.ndarray, sampler: Sampler):
        super().__init__(["image", "coarse_label", "fine_label"], sampler)
        self._records = records

    def _count(self) -> int:
        return len(self._records)

    def _row(self, index: int) -> tuple:
        record = self._records[index]
        image = record[2:].reshape(3, 32, 32).transpose(1, 2, 0).copy()
        return image, np.array(record[0], np.uint32), np.array(record[1], np.uint32)


def Cifar100Dataset(
    dataset_dir: str,
    usage: str | None = None,
    num_samples: int | None = None,
    num_parallel_workers: int | None = None,
    shuffle: bool | None = None,
    sampler: Any = None,
    num_shards: int | None = None,
    shard_id: int | None = None,
    cache: Any = None,
) -> Dataset:
    """``mindspore.dataset.Cifar100Dataset`` (binary version: ``train.bin``, ``test.bin``, records of
    a coarse and a fine label byte and 3072 CHW pixels); columns ``image`` (uint8 HWC),
    ``coarse_label`` and ``fine_label`` (uint32); shuffled unless ``shuffle=False``."""
    root = _folder(dataset_dir)
    sampler = source_sampler("Cifar100Dataset", num_samples, shuffle, sampler=sampler, num_shards=num_shards,
                             shard_id=shard_id, cache=cache)
    usages = _usages(usage, "Cifar100Dataset")
    chosen = [f"{u}.bin" for u in usages if os.path.exists(os.path.join(root, f"{u}.bin"))]
    if not chosen:
        raise RuntimeError(f"Cifar100Dataset: no CIFAR-100 binary files for usage {usage!r} in {root}.")
    records = [np.fromfile(os.path.join(root, f), np.uint8) for f in chosen]
    if any(r.size % 3074 for r in records):
        raise RuntimeError(f"Invalid cifar100 file in {root}: its size is not a multiple of 3074 bytes (make "
                           f"sure it is the CIFAR-100 binary version).")
    return Dataset(_Cifar100(np.concatenate([r.reshape(-1, 3074) for r in records]), sampler))


class _Folder(MappableSource):
    def __init__(self, files: list[tuple[str, int]], decode: bool, sampler: Sampler):
        super().__init__(["image", "label"], sampler)
        self._files, self._decode = files, decode

    def _count(self) -> int:
        return len(self._files)

    def _row(self, index: int) -> tuple:
        path, label = self._files[index]
        data = np.fromfile(path, np.uint8)
        if self._decode:
            data = Decode()(data)
        return data, np.array(label, np.int32)


def _classes(root: str, class_indexing: Any) -> dict[str, int]:
    if class_indexing is None:
        names = sorted(d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d)))
        return {name: i for i, name in enumerate(names)}
    if not isinstance(class_indexing, dict):
        raise TypeError(
            f"Argument class_indexing with value {class_indexing!r} is not of type [<class 'dict'>]."
        )
    return dict(class_indexing)


def ImageFolderDataset(
    dataset_dir: str,
    num_samples: int | None = None,
    num_parallel_workers: int | None = None,
    shuffle: bool | None = None,
    sampler: Any = None,
    extensions: Any = None,
    class_indexing: dict | None = None,
    decode: bool = False,
    num_shards: int | None = None,
    shard_id: int | None = None,
    cache: Any = None,
    decrypt: Any = None,
) -> Dataset:
    """``mindspore.dataset.ImageFolderDataset``: classes are the sorted sub-folders (or
    ``class_indexing``), read in the order of their names, files sorted by name in each
    (shuffled unless ``shuffle=False``)."""
    root = _folder(dataset_dir)
    sampler = source_sampler(
        "ImageFolderDataset",
        num_samples,
        shuffle,
        sampler=sampler,
        num_shards=num_shards,
        shard_id=shard_id,
        cache=cache,
        decrypt=decrypt,
    )
    suffixes = tuple(extensions) if extensions else None
    files = []
    for name, label in sorted(_classes(root, class_indexing).items()):
        folder = os.path.join(root, name)
        for file in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
            if suffixes is None or os.path.splitext(file)[1] in suffixes:
                files.append((os.path.join(folder, file), label))
    return Dataset(_Folder(files, decode, sampler))
