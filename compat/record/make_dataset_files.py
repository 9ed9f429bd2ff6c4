"""Write the small on-disk datasets of the dataset tests (MNIST idx, CIFAR-10 binary, an image folder).

    python compat/record/make_dataset_files.py compat/tests/recorded/datasets

Pixels come from numpy's RandomState(0) (MNIST images carry a bright band of rows that
depends on the label, so the end-to-end programs have something to learn); images in the
folder are written by Pillow (PNG, and JPEG at quality 90). Runs under any Python with numpy and Pillow.

MindSpore's CIFAR-10 reader insists on 10000 records per file (30 MB), too large to commit:
``cifar10(root)`` writes ``data_batch_1.bin`` and ``test_batch.bin`` from their own seeds
wherever they are needed (the recorder and the tests call it into a temporary folder).
"""

from __future__ import annotations

import struct
import sys
from pathlib import Path

import numpy as np
from PIL import Image


def mnist(root: Path, rng: np.random.RandomState) -> None:
    root.mkdir(parents=True, exist_ok=True)
    for usage, n in (("train", 96), ("t10k", 32)):
        labels = rng.randint(0, 10, size=n).astype(np.uint8)
        images = rng.randint(0, 160, size=(n, 28, 28))
        for image, label in zip(images, labels, strict=True):  # a bright band per class: learnable
            image[2 + 2 * label : 5 + 2 * label] += 95
        images = images.astype(np.uint8)
        header = struct.pack(">IIII", 2051, n, 28, 28)
        (root / f"{usage}-images-idx3-ubyte").write_bytes(header + images.tobytes())
        (root / f"{usage}-labels-idx1-ubyte").write_bytes(struct.pack(">II", 2049, n) + labels.tobytes())


def cifar10(root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    for seed, name in enumerate(("data_batch_1.bin", "test_batch.bin")):
        rng = np.random.RandomState(seed)
        labels = rng.randint(0, 10, size=(10000, 1)).astype(np.uint8)
        pixels = rng.randint(0, 256, size=(10000, 3 * 32 * 32)).astype(np.uint8)  # each record CHW
        (root / name).write_bytes(np.concatenate([labels, pixels], axis=1).tobytes())


def image_folder(root: Path, rng: np.random.RandomState) -> None:
    for cls, count in (("cat", 3), ("dog", 2), ("eel", 2)):
        (root / cls).mkdir(parents=True, exist_ok=True)
        for i in range(count):
            h, w = 24 + 4 * i, 30 - 2 * i
            base = np.linspace(0, 255, h * w * 3).reshape(h, w, 3)
            pixels = np.clip(base + rng.randint(-40, 40, size=(h, w, 3)), 0, 255).astype(np.uint8)
            image = Image.fromarray(pixels, "RGB")
            if i == 1:
                image.save(root / cls / f"{i}.jpg", quality=90)
            else:
                image.save(root / cls / f"{i}.png")


def imagenet_folder(root: Path, size: int = 32) -> None:
    """mindcv's ``imagenet`` layout, ``root/{train,val}/<class>/*.png``: 3 classes, 8 train and 4
    val images each, square (a full-image crop at ``scale=ratio=(1, 1)`` draws no position) and
    PNG (lossless: no decoder differences). Each class brightens its own colour channel."""
    rng = np.random.RandomState(17)
    for split, count in (("train", 8), ("val", 4)):
        for label, cls in enumerate(("ant", "bee", "cow")):
            (root / split / cls).mkdir(parents=True, exist_ok=True)
            for i in range(count):
                pixels = rng.randint(0, 160, size=(size, size, 3))
                pixels[:, :, label] += 95
                Image.fromarray(pixels.astype(np.uint8), "RGB").save(root / split / cls / f"{i}.png")


def main(argv: list[str]) -> None:
    out = Path(argv[0] if argv else "compat/tests/recorded/datasets")
    rng = np.random.RandomState(0)
    mnist(out / "mnist", rng)
    image_folder(out / "folder", rng)


if __name__ == "__main__":
    main(sys.argv[1:])
