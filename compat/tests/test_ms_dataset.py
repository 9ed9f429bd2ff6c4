"""``mindspore.dataset`` pipelines against real MindSpore 2.10's outputs on the same files.

``compat/record/record_datasets.py`` ran every pipeline of ``compat/record/ds_pipelines.py``
(MindSpore code, no shuffling) under MindSpore on the files of ``make_dataset_files.py``
(``compat/tests/recorded/datasets``; CIFAR-10 is written into a temporary folder, MindSpore's
reader wants 10000 records per file). Here the same pipelines run on the layer: every value,
dtype, shape, column name and size must be MindSpore's.
"""

from __future__ import annotations

import importlib.util
import json
import sys

import numpy as np
import pytest
from _ms_helpers import COMPAT

import paddle_mindspore as ms
from paddle_mindspore import dataset as ds

DATA = COMPAT / "tests" / "recorded" / "datasets"
META = json.loads((DATA / "reference.json").read_text())
REF = np.load(DATA / "reference.npz")


def _load(name):
    spec = importlib.util.spec_from_file_location(name, COMPAT / "record" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def pipelines():
    """ds_pipelines.py imported with ``mindspore`` aliased to the layer."""
    ms.install_import_alias()
    try:
        return _load("ds_pipelines")
    finally:
        ms.uninstall_import_alias()


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("datasets")
    sys.path.insert(0, str(COMPAT / "record"))
    try:
        _load("make_dataset_files").cifar10(tmp / "cifar10")
    finally:
        sys.path.remove(str(COMPAT / "record"))
    for name in ("mnist", "folder"):
        (tmp / name).symlink_to(DATA / name)
    return tmp


@pytest.mark.parametrize("name", sorted(META))
def test_pipeline_equals_mindspore(pipelines, root, name):
    dataset = pipelines.PIPELINES[name](str(root))
    meta = META[name]
    assert dataset.get_col_names() == meta["columns"]
    assert dataset.get_dataset_size() == meta["size"]
    rows = list(dataset.create_tuple_iterator(output_numpy=True, num_epochs=1))
    assert len(rows) == meta["rows"]
    assert [str(v.dtype) for v in rows[0]] == meta["dtypes"]
    for r, row in enumerate(rows):
        for c, value in enumerate(row):
            expected = REF[f"{name}/{r}/{c}"]
            assert value.shape == expected.shape, (name, r, c)
            np.testing.assert_array_equal(value, expected, err_msg=f"{name} row {r} column {c}")


def _rows(n=5):
    return ds.NumpySlicesDataset(
        {"x": np.arange(n * 2, dtype=np.float32).reshape(n, 2), "y": list(range(n))}, shuffle=False
    )


def test_iterators_give_tensors_dicts_and_count_epochs():
    rows = list(_rows().create_tuple_iterator())
    assert str(rows[0][0].dtype) == "paddle.float32" and str(rows[0][1].dtype) == "paddle.int64"
    first = next(_rows().create_dict_iterator(output_numpy=True))
    assert set(first) == {"x", "y"} and isinstance(first["x"], np.ndarray)
    it = _rows().create_tuple_iterator(num_epochs=2)
    assert len(list(it)) == 5 and len(list(it)) == 5
    with pytest.raises(RuntimeError, match="beyond the specified number of epochs"):
        next(it)
    assert [len(list(_rows().create_tuple_iterator(columns=["y"])))] == [5]


def test_mnist_uint32_labels_become_int64_tensors():
    label = next(ds.MnistDataset(str(DATA / "mnist"), shuffle=False).create_tuple_iterator())[1]
    assert str(label.dtype) == "paddle.int64"  # Paddle has no uint32


def test_shuffles_follow_the_dataset_seed():
    def order():
        ds.config.set_seed(7)
        return [int(r[1]) for r in _rows(20).shuffle(4).create_tuple_iterator(output_numpy=True)]

    def sampled():
        ds.config.set_seed(7)
        source = ds.NumpySlicesDataset(list(range(20)))  # shuffled by default, as MindSpore's sources
        return [int(r[0]) for r in source.create_tuple_iterator(output_numpy=True)]

    assert order() == order() and sorted(order()) == list(range(20)) and order() != list(range(20))
    assert sampled() == sampled() and sorted(sampled()) == list(range(20)) and sampled() != list(range(20))


def test_random_vision_ops_keep_shapes_and_follow_the_seed():
    image = np.arange(30 * 40 * 3, dtype=np.uint8).reshape(30, 40, 3)
    ops = [
        ds.vision.RandomCrop(24, padding=4),
        ds.vision.RandomResizedCrop((16, 20)),
        ds.vision.RandomHorizontalFlip(1.0),
    ]
    shapes = [(24, 24, 3), (16, 20, 3), (30, 40, 3)]
    for op, shape in zip(ops, shapes, strict=True):
        ds.config.set_seed(3)
        first = op(image)
        ds.config.set_seed(3)
        assert first.shape == shape and first.dtype == np.uint8
        np.testing.assert_array_equal(op(image), first)
    np.testing.assert_array_equal(ops[2](image), image[:, ::-1])


def test_map_repeat_skip_take_and_sizes():
    dataset = _rows().map(lambda x: x * 2, "x").repeat(3).skip(2).take(9)
    assert dataset.get_dataset_size() == 9 and dataset.get_repeat_count() == 3
    values = [int(r[1]) for r in dataset.create_tuple_iterator(output_numpy=True)]
    assert values == [2, 3, 4, 0, 1, 2, 3, 4, 0]
    assert _rows().batch(2).output_shapes() == [[2, 2], [2]]  # MindSpore 2.10's answers
    assert _rows().batch(2).output_types() == [np.dtype("float32"), np.dtype("int64")]
    assert _rows().batch(2).get_batch_size() == 2 and _rows().batch(2, True).get_dataset_size() == 2


@pytest.mark.parametrize(
    "call, error, text",
    [
        (lambda: _rows().batch(0), ValueError, r"batch_size is not within the required interval of \[1"),
        (lambda: _rows().shuffle(1), ValueError, r"buffer_size is not within the required interval of \[2"),
        (lambda: _rows().project(["zz"]), RuntimeError, "zz does not exist"),
        (lambda: _rows().map(lambda v: v, "zz"), RuntimeError, "zz does not exist"),
        (lambda: ds.MnistDataset("/nonexistent"), ValueError, "does not exist or is not a directory"),
        (lambda: ds.MnistDataset(str(DATA / "mnist"), usage="val"), ValueError, "usage"),
        (lambda: ds.GeneratorDataset([1], None), ValueError, "Neither columns_names nor schema"),
        (lambda: ds.MnistDataset(str(DATA / "mnist"), num_shards=2), ValueError, "num_shards and shard_id"),
        (lambda: _rows().zip(_rows()), ms.MissingAPIError, "mindspore.dataset.Dataset.zip"),
        (lambda: ds.CocoDataset, ms.MissingAPIError, "mindspore.dataset.CocoDataset"),
        (lambda: ds.vision.Perspective, ms.MissingAPIError, "mindspore.dataset.vision.Perspective"),
        (lambda: ds.transforms.Fill, ms.MissingAPIError, "mindspore.dataset.transforms.Fill"),
        (
            lambda: ds.vision.Resize(8, ds.vision.Inter.AREA)(np.zeros((4, 4, 3), np.uint8)),
            NotImplementedError,
            "Resize of numpy images",
        ),
        (lambda: ds.transforms.OneHot(0), ValueError, "num_classes"),
    ],
)
def test_bad_arguments_and_missing_apis(call, error, text):
    with pytest.raises(error, match=text):
        call()


def test_generator_rows_with_a_wrong_width_fail_clearly():
    dataset = ds.GeneratorDataset(lambda: iter([(1, 2, 3)]), ["a", "b"])
    with pytest.raises(RuntimeError, match="got 3 values for 2 column"):
        list(dataset.create_tuple_iterator())


def test_mindspore_set_seed_seeds_the_pipeline_too():
    ms.set_seed(11)  # as MindSpore's set_seed calls dataset.config.set_seed
    assert ds.config.get_seed() == 11

    def order():
        rows = ds.NumpySlicesDataset(list(range(10))).create_tuple_iterator(output_numpy=True)
        return [int(r[0]) for r in rows]

    first = order()
    ms.set_seed(11)
    assert order() == first and sorted(first) == list(range(10))
