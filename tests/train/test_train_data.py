"""Data sources: the resolve order, torchvision's layout and downloader, every bad input, GPU-side batches."""

from __future__ import annotations

import functools
import gzip
import hashlib
import http.server
import struct
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import torch

from rocmtui.base.errors import DataError
from rocmtui.events import RunControl, RunFinished, RunStarted, StepsCompleted, TrainEvent
from rocmtui.train import data, gpudata, tvdata
from rocmtui.train.gpudata import (
    Augmentation,
    alternating_flips,
    augment,
    batch_rows,
    channel_stats,
    epoch_images,
    jittered,
    permutation,
)
from rocmtui.train.loop import train


def write_npz(path: Path, train=(40, 32, 32, 3), test=(10, 32, 32, 3), **overrides: np.ndarray) -> Path:
    rng = np.random.default_rng(0)
    arrays = {
        "train_images": rng.integers(0, 256, train, dtype=np.uint8),
        "train_labels": rng.integers(0, 10, train[:1], dtype=np.uint8),
        "test_images": rng.integers(0, 256, test, dtype=np.uint8),
        "test_labels": rng.integers(0, 10, test[:1], dtype=np.uint8),
    }
    arrays.update(overrides)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path, **arrays)
    return path


def idx_files(n_train: int, n_test: int) -> dict[str, bytes]:
    """MNIST's idx format: big-endian magic, counts and sizes, then the uint8 payload."""
    rng = np.random.default_rng(1)

    def images(n: int) -> bytes:
        return struct.pack(">IIII", 2051, n, 28, 28) + rng.integers(0, 256, (n, 28, 28), dtype=np.uint8).tobytes()

    def labels(n: int) -> bytes:
        return struct.pack(">II", 2049, n) + (np.arange(n) % 10).astype(np.uint8).tobytes()

    return {
        "train-images-idx3-ubyte": images(n_train),
        "train-labels-idx1-ubyte": labels(n_train),
        "t10k-images-idx3-ubyte": images(n_test),
        "t10k-labels-idx1-ubyte": labels(n_test),
    }


def mnist_folder(root: Path, name: str = "MNIST") -> Path:
    raw = root / name / "raw"
    raw.mkdir(parents=True)
    for filename, payload in idx_files(40, 20).items():
        (raw / filename).write_bytes(payload)
    return root


def test_without_data_cifar_falls_back_to_the_bundled_sample_with_a_notice(small) -> None:
    source = data.resolve_source(small())
    assert source.kind == "sample" and source.notice == data.SAMPLE_NOTICE
    arrays = data.load_arrays(source)
    assert arrays.train_images.shape == (1900, 32, 32, 3) and arrays.test_images.shape == (600, 32, 32, 3)
    assert arrays.classes[0] == "airplane"


@pytest.mark.parametrize("dataset", ["mnist", "fashionmnist"])
def test_without_data_mnist_says_how_to_get_it(small, dataset: str) -> None:
    with pytest.raises(DataError) as err:
        data.resolve_source(small(dataset=dataset))
    assert "--download" in str(err.value) and "--data-dir" in str(err.value)


def test_the_cache_comes_before_the_sample(small, private_cache: Path) -> None:
    write_npz(private_cache / "cifar10.npz")
    source = data.resolve_source(small())
    assert source.kind == "cache" and source.notice is None
    assert data.load_arrays(source).train_images.shape == (40, 32, 32, 3)


def test_data_dir_comes_first_and_reads_torchvision_layout(small, tmp_path: Path, private_cache: Path) -> None:
    write_npz(private_cache / "mnist.npz", train=(5, 28, 28), test=(5, 28, 28))
    root = mnist_folder(tmp_path / "d")
    source = data.resolve_source(small(dataset="mnist", data_dir=root))
    assert source.kind == "folder"
    arrays = data.load_arrays(source)
    assert arrays.train_images.shape == (40, 28, 28, 1) and arrays.test_labels.shape == (20,)
    assert arrays.classes[0].startswith("0")


def test_fashion_mnist_uses_its_own_folder(small, tmp_path: Path) -> None:
    root = mnist_folder(tmp_path / "d", "FashionMNIST")
    arrays = data.load_arrays(data.resolve_source(small(dataset="fashionmnist", data_dir=root)))
    assert arrays.train_images.shape == (40, 28, 28, 1) and arrays.classes[0] == "T-shirt/top"


def test_data_dir_with_an_npz_in_the_engine_format(small, mini_dir: Path) -> None:
    source = data.resolve_source(small(data_dir=mini_dir))
    assert source.kind == "npz"
    assert data.load_arrays(source).train_images.shape == (1000, 32, 32, 3)


def test_an_empty_data_dir_names_the_missing_file(small, tmp_path: Path) -> None:
    with pytest.raises(DataError, match="missing cifar-10-batches-py/data_batch_1"):
        data.resolve_source(small(data_dir=tmp_path))


@pytest.mark.slow
def test_a_corrupt_cifar_folder_is_a_one_line_data_error(small, tmp_path: Path) -> None:
    folder = tmp_path / "cifar-10-batches-py"
    folder.mkdir()
    for name in ("data_batch_1", "test_batch", "batches.meta"):
        (folder / name).write_bytes(b"truncated")
    source = data.resolve_source(small(data_dir=tmp_path))
    with pytest.raises(DataError) as err:
        data.load_arrays(source)
    assert "\n" not in str(err.value) and "corrupted" in str(err.value)


def test_a_truncated_mnist_file_is_a_data_error(small, tmp_path: Path) -> None:
    root = mnist_folder(tmp_path / "d")
    raw = root / "MNIST" / "raw" / "train-images-idx3-ubyte"
    raw.write_bytes(raw.read_bytes()[:1000])
    with pytest.raises(DataError, match="cannot read mnist"):
        data.load_arrays(data.resolve_source(small(dataset="mnist", data_dir=root)))


def test_a_truncated_npz_is_a_data_error(small, private_cache: Path) -> None:
    path = write_npz(private_cache / "cifar10.npz")
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    with pytest.raises(DataError, match="unreadable or truncated"):
        data.resolve_source(small())


def test_a_npz_with_a_truncated_member_fails_at_load(small, tmp_path: Path) -> None:
    good = write_npz(tmp_path / "good.npz")
    bad = tmp_path / "d" / "cifar10.npz"
    bad.parent.mkdir()
    with zipfile.ZipFile(good) as src, zipfile.ZipFile(bad, "w") as dst:
        for item in src.infolist():
            payload = src.read(item)
            dst.writestr(item, payload[:200] if item.filename == "train_images.npy" else payload)
    source = data.resolve_source(small(data_dir=bad.parent))  # headers are fine
    with pytest.raises(DataError, match="unreadable or truncated"):
        data.load_arrays(source)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"train_images": np.zeros((40, 28, 28, 3), np.uint8)}, "expected"),
        ({"train_labels": np.zeros(39, np.uint8)}, "labels of shape"),
        ({"test_images": np.zeros((10, 32, 32, 3), np.float32)}, "must be uint8"),
    ],
    ids=["image-size", "label-count", "dtype"],
)
def test_wrong_shapes_and_types_are_data_errors(small, private_cache: Path, overrides, message: str) -> None:
    write_npz(private_cache / "cifar10.npz", **overrides)
    with pytest.raises(DataError, match=message):
        data.resolve_source(small())


def test_a_missing_key_is_a_data_error(small, private_cache: Path) -> None:
    path = private_cache / "cifar10.npz"
    path.parent.mkdir(parents=True)
    np.savez(path, train_images=np.zeros((2, 32, 32, 3), np.uint8))
    with pytest.raises(DataError, match="'train_labels' is missing"):
        data.resolve_source(small())


def test_labels_out_of_range_are_a_data_error(small, private_cache: Path) -> None:
    write_npz(private_cache / "cifar10.npz", train_labels=np.full(40, 12, np.uint8))
    with pytest.raises(DataError, match=r"labels outside 0\.\.9"):
        data.load_arrays(data.resolve_source(small()))


@pytest.fixture
def mnist_mirror(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A local HTTP mirror of gzipped idx files; torchvision's MNIST is pointed at it (URL and checksums)."""
    served = tmp_path / "mirror"
    served.mkdir()
    resources = []
    for name, payload in idx_files(40, 20).items():
        gz = gzip.compress(payload)
        (served / f"{name}.gz").write_bytes(gz)
        resources.append((f"{name}.gz", hashlib.md5(gz).hexdigest()))
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(served))
    handler.log_message = lambda *args: None  # type: ignore[attr-defined]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    from torchvision.datasets import MNIST

    monkeypatch.setattr(MNIST, "mirrors", [f"http://127.0.0.1:{server.server_address[1]}/"])
    monkeypatch.setattr(MNIST, "resources", resources)
    yield served
    server.shutdown()
    thread.join()


def test_download_goes_through_torchvision_and_fills_the_cache(small, mnist_mirror: Path, private_cache: Path) -> None:
    source = data.resolve_source(small(dataset="mnist", download=True))
    assert source.kind == "download"
    arrays = data.load_arrays(source)
    assert arrays.train_images.shape == (40, 28, 28, 1)
    again = data.resolve_source(small(dataset="mnist"))
    assert again.kind == "cache" and again.path == private_cache / "torchvision"
    assert np.array_equal(data.load_arrays(again).train_images, arrays.train_images)


def test_download_into_data_dir_when_it_lacks_the_files(small, mnist_mirror: Path, tmp_path: Path) -> None:
    target = tmp_path / "fresh"
    target.mkdir()
    source = data.resolve_source(small(dataset="mnist", data_dir=target, download=True))
    assert source.kind == "download"
    data.load_arrays(source)
    assert tvdata.missing_files("mnist", target) == []


def test_batches_come_from_a_seeded_permutation_and_wrap_when_full() -> None:
    gen = torch.Generator().manual_seed(3)
    perm = permutation(10, gen)
    assert sorted(perm.tolist()) == list(range(10))
    assert torch.equal(perm, permutation(10, torch.Generator().manual_seed(3)))
    assert batch_rows(perm, 2, 4, full=False).tolist() == perm[8:].tolist()
    assert batch_rows(perm, 2, 4, full=True).tolist() == perm[8:].tolist() + perm[:2].tolist()


def test_augment_flips_and_translates_each_image_on_its_own() -> None:
    x = torch.arange(2 * 3 * 6 * 6, dtype=torch.uint8).view(2, 3, 6, 6)
    flips_only = augment(x, torch.Generator().manual_seed(0), Augmentation(pad=0))
    for got, original in zip(flips_only, x, strict=True):
        assert torch.equal(got, original) or torch.equal(got, original.flip(-1))
    batch = torch.randint(1, 255, (256, 3, 8, 8), dtype=torch.uint8, generator=torch.Generator().manual_seed(1))
    out = augment(batch, torch.Generator().manual_seed(2), Augmentation(pad=2))
    assert out.shape == batch.shape and out.dtype == torch.uint8
    zero_cols = (out == 0).all(dim=(1, 2))  # translated images gain zero borders
    assert 0.3 < (zero_cols.any(dim=1)).float().mean() < 1.0
    unchanged = (out == batch).flatten(1).all(1) | (out == batch.flip(-1)).flatten(1).all(1)
    assert 0 < unchanged.sum() < 256 // 4  # a shift of (0, 0) is rare: 1 in 25


def test_reflected_translations_are_torchs_reflect_padding_cropped() -> None:
    """Each output is a 6x6 window of the image reflect-padded by 2 (mirrored or not): airbench's crop."""
    x = torch.randint(0, 255, (64, 3, 6, 6), dtype=torch.uint8, generator=torch.Generator().manual_seed(4))
    out = augment(x, torch.Generator().manual_seed(5), Augmentation(pad=2, reflect=True))
    padded = torch.nn.functional.pad(x.float(), (2, 2, 2, 2), mode="reflect").to(torch.uint8)
    windows = padded.unfold(2, 6, 1).unfold(3, 6, 1)  # N, C, 5, 5, 6, 6
    shifts_seen = set()
    for i in range(64):
        matches = [
            (dy, dx)
            for dy in range(5)
            for dx in range(5)
            for view in (windows[i, :, dy, dx], windows[i, :, dy, dx].flip(-1))
            if torch.equal(out[i], view)
        ]
        assert matches, f"image {i} is no window of its reflect-padded self"
        shifts_seen.update(matches)
    assert len(shifts_seen) > 10  # the shifts vary from image to image


def test_alternating_flips_mirror_every_image_in_one_of_two_epochs() -> None:
    x = torch.randint(0, 255, (32, 3, 5, 5), dtype=torch.uint8, generator=torch.Generator().manual_seed(6))
    base = torch.rand(32, generator=torch.Generator().manual_seed(7)) < 0.5
    idx = torch.arange(32)
    no_shift = Augmentation(pad=0, alternating_flip=True)
    even = augment(x, torch.Generator(), no_shift, alternating_flips(base, idx, epoch=2))
    odd = augment(x, torch.Generator(), no_shift, alternating_flips(base, idx, epoch=3))
    for i in range(32):
        first, second = (x[i].flip(-1), x[i]) if base[i] else (x[i], x[i].flip(-1))
        assert torch.equal(even[i], first) and torch.equal(odd[i], second)


def test_jitter_shifts_brightness_and_scales_contrast_per_image_within_its_bounds() -> None:
    """A flat grey image at the data set's mean keeps its value under any contrast and moves by at most
    ``amount`` standard deviations of brightness; clamped pixels stay pixels; the same seed draws the same."""
    mean, std = (torch.tensor(v).view(1, 3, 1, 1) * 255 for v in channel_stats(3))
    flat = mean.round().to(torch.uint8).expand(512, 3, 4, 4).contiguous()
    out = jittered(flat, torch.Generator().manual_seed(0), 0.2)
    moved = (out.float() - flat.float()).mean(dim=(2, 3)) / std.view(1, 3)  # in standard deviations
    assert moved.abs().max() <= 0.2 * 1.2 + 0.02  # the brightness bound, times the largest contrast
    assert moved.std() > 0.05  # each image draws its own
    assert torch.equal(out, jittered(flat, torch.Generator().manual_seed(0), 0.2))
    edges = torch.tensor([0, 255], dtype=torch.uint8).repeat(256).view(256, 1, 1, 2).expand(256, 3, 2, 2)
    clamped = jittered(edges.contiguous(), torch.Generator().manual_seed(1), 0.5)
    assert clamped.dtype == torch.uint8 and (clamped[..., 0] <= 128).all() and (clamped[..., 1] >= 128).all()


def test_jitter_is_its_formula_written_out_to_within_a_rounding() -> None:
    x = torch.randint(0, 256, (300, 3, 8, 8), dtype=torch.uint8, generator=torch.Generator().manual_seed(2))
    got = jittered(x, torch.Generator().manual_seed(3), 0.13)
    draws = torch.rand(2, 300, 1, 1, 1, generator=torch.Generator().manual_seed(3)) * 0.26 - 0.13
    mean, std = (torch.tensor(v).view(1, 3, 1, 1) * 255 for v in channel_stats(3))
    want = ((x.float() - mean + draws[0] * std) * (1 + draws[1]) + mean).round().clamp(0, 255)
    assert (got.float() - want).abs().max() <= 1 and (got.float() == want).float().mean() > 0.99


def test_an_epochs_images_are_its_order_augmented_in_one_pass() -> None:
    images = torch.randint(0, 255, (40, 3, 6, 6), dtype=torch.uint8, generator=torch.Generator().manual_seed(8))
    order = permutation(40, torch.Generator().manual_seed(9))
    assert torch.equal(epoch_images(images, order, torch.Generator(), None), images[order])
    aug = Augmentation(pad=1, jitter=0.1)
    drawn = epoch_images(images, order, torch.Generator().manual_seed(3), aug)
    assert torch.equal(drawn, augment(images[order], torch.Generator().manual_seed(3), aug))


def test_an_epoch_share_trains_fewer_steps_an_epoch(small) -> None:
    events: list[TrainEvent] = []
    config = small(epochs=1, max_steps_per_epoch=None, batch_size=100, epoch_share=0.25)  # of 1,900 images
    summary = train(config, events.append, RunControl())
    assert isinstance(summary.event, RunFinished)
    steps = [e for e in events if isinstance(e, StepsCompleted)]
    assert {e.steps_per_epoch for e in steps} == {5} and steps[-1].step == 5  # 475 images, in whole batches


def test_mnist_trains_through_the_same_loop(small, tmp_path: Path) -> None:
    events: list[TrainEvent] = []
    config = small(dataset="mnist", data_dir=mnist_folder(tmp_path / "d"), epochs=1, augment=True)
    summary = train(config, events.append, RunControl())
    started = events[0]
    assert isinstance(started, RunStarted) and started.train_size == 40 and started.notice is None
    assert isinstance(summary.event, RunFinished)


def test_jitter_in_parts_is_jitter_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    x = torch.randint(0, 256, (300, 3, 4, 4), dtype=torch.uint8, generator=torch.Generator().manual_seed(4))
    whole = jittered(x, torch.Generator().manual_seed(5), 0.2)
    monkeypatch.setattr(gpudata, "JITTER_CHUNK", 7)
    assert torch.equal(jittered(x, torch.Generator().manual_seed(5), 0.2), whole)
