"""Where the training data comes from: pick a source cheaply, then load it as uint8 arrays.

Sources, in order: ``--data-dir`` (torchvision's layout, or a ``<dataset>.npz`` in the engine's format), the
user's cache (an earlier download), a torchvision download (``--download``), then the bundled CIFAR-10 sample.

Whatever the source, its first load writes its arrays as uncompressed .npy files under
``<cache>/arrays/`` (``arraycache``); later loads memory-map them instead of inflating an npz or unpickling
torchvision's batches. A cache folder records the source files' sizes and modification times and the data's
fingerprint, and is rebuilt when either no longer matches.
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import threading
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from rocmtui.base.errors import DataError
from rocmtui.base.files import atomic_write
from rocmtui.base.private_dir import first_private, warn_once
from rocmtui.config import TrainConfig
from rocmtui.train import arraycache, tvdata
from rocmtui.train.dataset import Arrays

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
    """One line for RunStarted.data_source, e.g. ``cache /home/u/.cache/rocmtui/torchvision``."""
    notice: str | None = None


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
    """``$XDG_CACHE_HOME/rocmtui``, else ``~/.cache/rocmtui``: made 0700 and checked private (its kernels and
    torchvision's pickles are loaded as code). One that another user owns or can write is refused with one
    warning line, and the next place is used (last, a private temporary folder)."""
    home = Path.home() / ".cache" / "rocmtui"
    xdg = os.environ.get("XDG_CACHE_HOME")
    candidates = [Path(xdg) / "rocmtui", home] if xdg else [home]
    return first_private(candidates, what="cache folder refused")


def legacy_cache_path(dataset: str) -> Path:
    """Where earlier versions cached a download, as an npz: still read (and converted on first load)."""
    return cache_dir() / f"{dataset}.npz"


def download_root() -> Path:
    """The torchvision folder that ``--download`` fills when no ``--data-dir`` is given (private: torchvision
    unpickles what is in it)."""
    return first_private([cache_dir() / "torchvision"], what="download folder refused")


def arrays_dir() -> Path:
    """Where the memory-mapped .npy copies of every source live, one folder per source (private)."""
    return first_private([cache_dir() / "arrays"], what="data cache folder refused")


def resolve_source(config: TrainConfig) -> DataSource:
    """Choose the data source for ``config`` without loading it; DataError (one line) if there is none."""
    dataset = config.dataset
    if dataset not in SPECS:
        raise DataError(f"unknown dataset {dataset!r}; choose from {', '.join(SPECS)}")
    if config.data_dir is not None:
        return _from_data_dir(config)
    legacy = legacy_cache_path(dataset)
    if legacy.is_file():
        check_npz(legacy, SPECS[dataset])
        return DataSource(dataset, "cache", legacy, f"cache {legacy}")
    root = download_root()
    if not tvdata.missing_files(dataset, root):
        return DataSource(dataset, "cache", root, f"cache {root}")
    if config.download:
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
    """The source's arrays (NHWC uint8, int64 labels): memory-mapped from the cache when it matches the source,
    else read from the source and cached. DataError on anything truncated or mis-shaped.
    """
    spec = SPECS[source.dataset]
    folder = arrays_dir() / cache_name(source)
    wait_for_cache(folder)
    try:
        arrays = _read_cache(folder, source)
    except arraycache.CacheMiss as miss:
        if isinstance(miss, arraycache.CacheDamaged):
            warn_once(f"the data cache {folder} is damaged ({miss}); rebuilt from {source.path}")
        before = source_stamp(source)
        arrays = _read_source(source, spec)
        check_arrays(source.path, spec, arrays)
        stamp = source_stamp(source)  # taken here, not behind the run: the source may change once we return
        if stamp == before or any(size is None for _, size, _ in before):  # unchanged, or just downloaded
            _write_later(folder, arrays, source, stamp)
        return arrays
    check_arrays(folder, spec, arrays)
    return arrays


def check_arrays(where: object, spec: DatasetSpec, arrays: Arrays) -> None:
    """DataError unless both splits have the dataset's shapes and labels within its classes."""
    for split in ("train", "test"):
        images, labels = getattr(arrays, f"{split}_images"), getattr(arrays, f"{split}_labels")
        check_shapes(where, spec, images.shape, labels.shape)
        if labels.size and (labels.min() < 0 or labels.max() >= spec.num_classes):
            raise DataError(f"{where}: {split} labels outside 0..{spec.num_classes - 1}")


def _read_source(source: DataSource, spec: DatasetSpec) -> Arrays:
    if source.path.suffix == ".npz":
        return _load_npz(source.path, spec)
    return tvdata.load(source.dataset, source.path, download=source.kind == "download")


def cache_name(source: DataSource) -> str:
    """The cache folder's name: the dataset and a hash of the source's resolved path."""
    where = hashlib.sha256(str(source.path.expanduser().resolve()).encode()).hexdigest()[:16]
    return f"{source.dataset}-{where}"


def source_stamp(source: DataSource) -> list[list[Any]]:
    """[path, size, mtime_ns] of each file the source is read from (None, None when absent): cheap stats only."""
    path = source.path.expanduser().resolve()
    files = [path] if path.suffix == ".npz" else tvdata.source_files(source.dataset, path)
    stamp: list[list[Any]] = []
    for file in files:
        try:
            stat = file.stat()
        except OSError:
            stamp.append([str(file), None, None])
        else:
            stamp.append([str(file), stat.st_size, stat.st_mtime_ns])
    return stamp


def _read_cache(folder: Path, source: DataSource) -> Arrays:
    """The cached arrays when they were built from this source as it is now and still hash to their
    fingerprint; CacheMiss otherwise."""
    mapped, info = arraycache.read(folder)
    if info.get("dataset") != source.dataset or info.get("source") != source_stamp(source):
        raise arraycache.CacheMiss(f"{folder} was built from other data")
    if sorted(mapped) != sorted(NPZ_KEYS):
        raise arraycache.CacheMiss(f"{folder} holds {sorted(mapped)}")
    arrays = Arrays(**mapped, classes=tuple(str(c) for c in info.get("classes", ())))
    if (
        arrays.train_images.dtype != np.uint8
        or arrays.train_images.ndim != 4
        or arrays.train_labels.dtype != np.int64
        or fingerprint(source.dataset, arrays.train_labels, arrays.test_labels) != info.get("fingerprint")
    ):
        raise arraycache.CacheMiss(f"{folder} does not match its fingerprint")
    return arrays


_writing: dict[Path, threading.Thread] = {}
"""The cache writes under way in this process, by folder."""


def _write_later(folder: Path, arrays: Arrays, source: DataSource, stamp: list[list[Any]]) -> None:
    """Write the cache behind the run, which goes on with ``arrays``: CIFAR-10's 184 MB and their fsync are about
    0.25 s of a first run's start on an H200 machine. ``train`` waits for it before it returns (a command may
    leave with ``os._exit``); a write cut short leaves no cache, never a broken one (``arraycache.write``)."""
    thread = threading.Thread(target=_write_cache, args=(folder, arrays, source, stamp), name="rocmtui-data-cache")
    _writing[folder] = thread
    thread.start()


def wait_for_cache(folder: Path | None = None) -> None:
    """Wait for this process's cache write of ``folder`` (None: of every folder) to end."""
    for key in [folder] if folder is not None else list(_writing):
        thread = _writing.pop(key, None)
        if thread is not None:
            thread.join()


def _write_cache(folder: Path, arrays: Arrays, source: DataSource, stamp: list[list[Any]]) -> None:
    """Cache ``arrays``, read from ``source`` as ``stamp`` found it, for the next load. A cache that cannot be
    written (read-only, full) costs only speed."""
    info = {
        "dataset": source.dataset,
        "source": stamp,
        "classes": list(arrays.classes),
        "fingerprint": fingerprint(source.dataset, arrays.train_labels, arrays.test_labels),
    }
    named = {key: getattr(arrays, key) for key in NPZ_KEYS}
    try:
        prune_orphans(folder.parent)
        arraycache.write(folder, named, info)
    except OSError:
        return


def prune_orphans(root: Path) -> None:
    """Remove cache folders whose source files are all gone (a deleted --data-dir, a test's tmp folder)."""
    for folder in sorted(root.glob("*-*")):
        if folder.name.startswith("."):
            continue  # another process's folder in the making
        try:
            files = arraycache.read_info(folder).get("source", [])
        except arraycache.CacheMiss:
            continue  # being built, or broken: a load of its own source rebuilds it
        entries = files if isinstance(files, list) else []
        paths = [Path(str(entry[0])) for entry in entries if isinstance(entry, list) and entry]
        if paths and not any(path.exists() for path in paths):
            shutil.rmtree(folder, ignore_errors=True)


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


def save_npz(arrays: Arrays, path: Path) -> None:
    """Write ``arrays`` as an uncompressed .npz in the engine's format (what ``--data-dir`` reads), atomically."""
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
