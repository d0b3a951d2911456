"""Where the training data comes from: pick a source cheaply, then load it as uint8 arrays.

Sources, in order: ``--data-dir`` (torchvision's layout, or a ``<dataset>.npz`` in our cache format), the
user's cache, a torchvision download (``--download``), then the bundled CIFAR-10 sample.
"""

from __future__ import annotations

import hashlib
import io
import os
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

from rocmtui.config import TrainConfig
from rocmtui.errors import DataError
from rocmtui.run.files import atomic_write
from rocmtui.train import tvdata

SAMPLE_PATH = Path(__file__).resolve().parent.parent / "data" / "cifar10-sample.npz"
SAMPLE_NOTICE = (
    "Offline: training on the bundled 1,900-image CIFAR-10 sample, not the full dataset; "
    "use --download or --data-dir for all 50,000"
)
NPZ_KEYS = ("train_images", "train_labels", "test_images", "test_labels")

SourceKind = Literal["folder", "npz", "cache", "download", "sample"]


@dataclass(frozen=True)
class DatasetSpec:
    """Shape facts of a dataset: what a loaded array must look like."""

    name: str
    channels: int
    size: int
    num_classes: int = 10


SPECS: dict[str, DatasetSpec] = {
    "cifar10": DatasetSpec("cifar10", 3, 32),
    "mnist": DatasetSpec("mnist", 1, 28),
    "fashionmnist": DatasetSpec("fashionmnist", 1, 28),
}


@dataclass(frozen=True)
class DataSource:
    """A chosen, not yet loaded, source of one dataset."""

    dataset: str
    kind: SourceKind
    path: Path
    description: str
    """One line for RunStarted.data_source, e.g. ``cache /home/u/.cache/rocmtui/cifar10.npz``."""
    notice: str | None = None


@dataclass(frozen=True)
class Arrays:
    """A loaded dataset: NHWC uint8 images, int64 labels, class names."""

    train_images: np.ndarray
    train_labels: np.ndarray
    test_images: np.ndarray
    test_labels: np.ndarray
    classes: tuple[str, ...]


def fingerprint(dataset: str, train_labels: np.ndarray, test_labels: np.ndarray) -> dict[str, str | int]:
    """What identifies the data a run trained on: name, split sizes and a sha256 of the labels (as int64).

    Cheap (labels only) and independent of where the data came from: a folder, an npz or the cache give
    the same fingerprint for the same images and labels in the same order.
    """
    digest = hashlib.sha256()
    for labels in (train_labels, test_labels):
        digest.update(np.ascontiguousarray(labels, dtype="<i8").tobytes())
    return {
        "dataset": dataset,
        "train_size": int(train_labels.shape[0]),
        "test_size": int(test_labels.shape[0]),
        "labels_sha256": digest.hexdigest(),
    }


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/rocmtui`` or ``~/.cache/rocmtui``."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "rocmtui"


def cache_path(dataset: str) -> Path:
    return cache_dir() / f"{dataset}.npz"


def resolve_source(config: TrainConfig) -> DataSource:
    """Choose the data source for ``config`` without loading it; DataError (one line) if there is none."""
    dataset = config.dataset
    if dataset not in SPECS:
        raise DataError(f"unknown dataset {dataset!r}; choose from {', '.join(SPECS)}")
    if config.data_dir is not None:
        return _from_data_dir(config)
    cached = cache_path(dataset)
    if cached.is_file():
        check_npz(cached, SPECS[dataset])
        return DataSource(dataset, "cache", cached, f"cache {cached}")
    if config.download:
        root = cache_dir() / "torchvision"
        return DataSource(dataset, "download", root, f"torchvision download into {root}")
    if dataset == "cifar10":
        check_npz(SAMPLE_PATH, SPECS[dataset])
        return DataSource(dataset, "sample", SAMPLE_PATH, "bundled CIFAR-10 sample (1,900 train images)", SAMPLE_NOTICE)
    raise DataError(
        f"no {dataset} data found: use --download to fetch it, or --data-dir with a folder in torchvision's layout"
    )


def _from_data_dir(config: TrainConfig) -> DataSource:
    assert config.data_dir is not None
    folder = config.data_dir.expanduser()
    spec = SPECS[config.dataset]
    npz = folder / f"{config.dataset}.npz"
    if npz.is_file():
        check_npz(npz, spec)
        return DataSource(config.dataset, "npz", npz, f"file {npz}")
    missing = tvdata.missing_files(config.dataset, folder)
    if not missing:
        return DataSource(config.dataset, "folder", folder, f"folder {folder}")
    if config.download:
        return DataSource(config.dataset, "download", folder, f"torchvision download into {folder}")
    raise DataError(
        f"{folder} has no {config.dataset} data in torchvision's layout (missing {missing[0]}); "
        "add --download to fetch it there"
    )


def check_npz(path: Path, spec: DatasetSpec) -> None:
    """Check an .npz's keys, dtypes and shapes from its array headers (cheap: no pixel data is read)."""
    try:
        with zipfile.ZipFile(path) as archive:
            names = set(archive.namelist())
            shapes: dict[str, tuple[int, ...]] = {}
            for key in NPZ_KEYS:
                if f"{key}.npy" not in names:
                    raise DataError(f"{path} is not a {spec.name} archive: key {key!r} is missing")
                with archive.open(f"{key}.npy") as member:
                    version = np.lib.format.read_magic(member)
                    read = (
                        np.lib.format.read_array_header_1_0
                        if version == (1, 0)
                        else np.lib.format.read_array_header_2_0
                    )
                    shape, _, dtype = read(member)
                if key.endswith("images") and dtype != np.uint8:
                    raise DataError(f"{path}: {key} must be uint8 pixels, found {dtype}")
                shapes[key] = tuple(shape)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as err:
        raise DataError(f"{path} is unreadable or truncated ({type(err).__name__}: {err})") from None
    for split in ("train", "test"):
        check_shapes(path, spec, shapes[f"{split}_images"], shapes[f"{split}_labels"])


def check_shapes(where: object, spec: DatasetSpec, images: tuple[int, ...], labels: tuple[int, ...]) -> None:
    """DataError unless images are (N, H, W[, C]) of the dataset's size and labels are (N,)."""
    want = (spec.size, spec.size) if spec.channels == 1 else (spec.size, spec.size, spec.channels)
    if len(images) < 3 or tuple(images[1:]) not in (want, (spec.size, spec.size, spec.channels)):
        raise DataError(f"{where}: images have shape {images}, expected (N, {', '.join(map(str, want))})")
    if tuple(labels) != (images[0],):
        raise DataError(f"{where}: {images[0]} images but labels of shape {labels}")
    if images[0] == 0:
        raise DataError(f"{where}: the dataset is empty")


def load_arrays(source: DataSource) -> Arrays:
    """Read the chosen source into memory (NHWC uint8); DataError on anything truncated or mis-shaped."""
    spec = SPECS[source.dataset]
    if source.kind in ("npz", "cache", "sample"):
        arrays = _load_npz(source.path, spec)
    else:
        arrays = tvdata.load(source.dataset, source.path, download=source.kind == "download")
        if source.kind == "download":
            save_cache(arrays, cache_path(source.dataset))
    for split in ("train", "test"):
        images, labels = getattr(arrays, f"{split}_images"), getattr(arrays, f"{split}_labels")
        check_shapes(source.path, spec, images.shape, labels.shape)
        if labels.size and (labels.min() < 0 or labels.max() >= spec.num_classes):
            raise DataError(f"{source.path}: {split} labels outside 0..{spec.num_classes - 1}")
    return arrays


def _load_npz(path: Path, spec: DatasetSpec) -> Arrays:
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {key: np.asarray(data[key]) for key in NPZ_KEYS}
            classes = tuple(str(c) for c in data["classes"]) if "classes" in data else tvdata.class_names(spec.name)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, KeyError) as err:
        raise DataError(f"{path} is unreadable or truncated ({type(err).__name__}: {err})") from None
    images = {k: v if v.ndim == 4 else v[..., None] for k, v in arrays.items() if k.endswith("images")}
    return Arrays(
        train_images=images["train_images"],
        train_labels=arrays["train_labels"].astype(np.int64),
        test_images=images["test_images"],
        test_labels=arrays["test_labels"].astype(np.int64),
        classes=classes,
    )


def save_cache(arrays: Arrays, path: Path) -> None:
    """Write ``arrays`` as an uncompressed .npz (fast to read), atomically and fsynced, as checkpoints are."""
    path.parent.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    np.savez(
        buffer,
        train_images=arrays.train_images,
        train_labels=arrays.train_labels.astype(np.uint8),
        test_images=arrays.test_images,
        test_labels=arrays.test_labels.astype(np.uint8),
        classes=np.array(arrays.classes),
    )
    atomic_write(path, buffer.getvalue())
