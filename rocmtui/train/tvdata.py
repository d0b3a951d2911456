"""Datasets in torchvision's folder layout, read (and downloaded) through torchvision itself."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from rocmtui.base.errors import DataError, first_line
from rocmtui.train.dataset import Arrays

CIFAR_FILES = tuple(f"cifar-10-batches-py/{name}" for name in ("data_batch_1", "test_batch", "batches.meta"))
MNIST_FILES = ("train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")
FOLDERS = {"mnist": "MNIST", "fashionmnist": "FashionMNIST"}


def missing_files(dataset: str, root: Path) -> list[str]:
    """Files that torchvision's layout needs under ``root`` and that are absent (cheap: no reading)."""
    needed = list(CIFAR_FILES) if dataset == "cifar10" else [f"{FOLDERS[dataset]}/raw/{n}" for n in MNIST_FILES]
    return [name for name in needed if not (root / name).is_file()]


def source_files(dataset: str, root: Path) -> list[Path]:
    """Every file torchvision reads for ``dataset`` under ``root``: what a cache built from it depends on."""
    if dataset == "cifar10":
        names = [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch", "batches.meta"]
        return [root / "cifar-10-batches-py" / name for name in names]
    return [root / FOLDERS[dataset] / "raw" / name for name in MNIST_FILES]


def _dataset_class(dataset: str) -> Any:
    from torchvision import datasets

    return {"cifar10": datasets.CIFAR10, "mnist": datasets.MNIST, "fashionmnist": datasets.FashionMNIST}[dataset]


CIFAR_CLASSES = ("airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck")


def class_names(dataset: str) -> tuple[str, ...]:
    """Label names, for archives that do not carry them (torchvision reads CIFAR's from batches.meta)."""
    if dataset == "cifar10":
        return CIFAR_CLASSES
    return tuple(str(c) for c in _dataset_class(dataset).classes)


def load(dataset: str, root: Path, download: bool) -> Arrays:
    """Read both splits with torchvision (its integrity checks, its downloader and progress bar)."""
    cls = _dataset_class(dataset)
    try:
        train = cls(str(root), train=True, download=download)
        test = cls(str(root), train=False, download=download)
    except (RuntimeError, OSError, ValueError, EOFError) as err:
        hint = "" if download else "; add --download to fetch it"
        raise DataError(f"cannot read {dataset} from {root}: {first_line(err)}{hint}") from None
    except Exception as err:  # pickle and archive errors from a truncated file: name them in one line
        raise DataError(f"cannot read {dataset} from {root}: {first_line(err, with_type=True)}") from None
    return Arrays(
        train_images=_images(train.data),
        train_labels=np.asarray(train.targets, dtype=np.int64),
        test_images=_images(test.data),
        test_labels=np.asarray(test.targets, dtype=np.int64),
        classes=tuple(str(c) for c in train.classes),
    )


def _images(data: Any) -> np.ndarray:
    """torchvision keeps CIFAR as a NHWC numpy array and MNIST as an NHW uint8 tensor."""
    array = data.numpy() if hasattr(data, "numpy") else np.asarray(data)
    array = np.ascontiguousarray(array, dtype=np.uint8)
    return array if array.ndim == 4 else array[..., None]
