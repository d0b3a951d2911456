"""The .npy cache: built on the first load, memory-mapped after, rebuilt when damaged or stale, never torn."""

from __future__ import annotations

import errno
import json
import mmap
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rocmtui.train import arraycache, data
from rocmtui.train.dataset import Arrays

KEYS = data.NPZ_KEYS


def is_mapped(array: np.ndarray) -> bool:
    """True when ``array``'s memory is a file mapping (follows the chain of bases)."""
    base: Any = array
    while base is not None and not isinstance(base, mmap.mmap):
        base = getattr(base, "base", None)
    return isinstance(base, mmap.mmap)


def reference(path: Path) -> dict[str, np.ndarray]:
    with np.load(path) as archive:
        return {key: np.asarray(archive[key]) for key in KEYS}


def sample_in(folder: Path) -> dict[str, np.ndarray]:
    """``folder`` made, holding the bundled sample's arrays as the engine's ``cifar10.npz``; those arrays."""
    folder.mkdir()
    expected = reference(data.SAMPLE_PATH)
    np.savez(folder / "cifar10.npz", **expected)  # type: ignore[arg-type]  # numpy's stub types each array name as allow_pickle
    return expected


def same(arrays: Arrays, expected: dict[str, np.ndarray]) -> bool:
    return all(np.array_equal(getattr(arrays, key), expected[key]) for key in KEYS)


def only_folder(private_cache: Path) -> Path:
    data.wait_for_cache()  # the first load writes its cache behind the run
    folders = [p for p in (private_cache / "arrays").iterdir() if not p.name.startswith(".")]
    assert len(folders) == 1, folders
    return folders[0]


def never_read_source(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: object) -> Arrays:
        raise AssertionError("the source was read again")

    monkeypatch.setattr(data, "_read_source", refuse)


def test_the_first_load_builds_the_cache_and_later_loads_map_it(
    small, private_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = data.resolve_source(small())
    first = data.load_arrays(source)
    assert not is_mapped(first.train_images)
    folder = only_folder(private_cache)
    assert sorted(p.name for p in folder.iterdir()) == sorted([*(f"{k}.npy" for k in KEYS), arraycache.MANIFEST])

    never_read_source(monkeypatch)
    again = data.load_arrays(data.resolve_source(small()))
    assert all(is_mapped(getattr(again, key)) for key in KEYS)
    assert same(again, reference(data.SAMPLE_PATH))
    assert again.classes == first.classes and again.train_labels.dtype == np.int64
    assert data.fingerprint("cifar10", again.train_labels, again.test_labels) == data.fingerprint(
        "cifar10", first.train_labels, first.test_labels
    )


def test_a_write_to_the_mapped_arrays_never_reaches_the_cache(small, private_cache: Path) -> None:
    data.load_arrays(data.resolve_source(small()))
    mapped = data.load_arrays(data.resolve_source(small()))
    original = int(mapped.train_images[0, 0, 0, 0])
    mapped.train_images[0, 0, 0, 0] = original ^ 0xFF  # copy-on-write: private to this process
    assert int(data.load_arrays(data.resolve_source(small())).train_images[0, 0, 0, 0]) == original


def test_the_mini_set_from_a_data_dir_is_cached_the_same_way(
    small, mini_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = data.resolve_source(small(data_dir=mini_dir))
    data.load_arrays(source)
    never_read_source(monkeypatch)
    again = data.load_arrays(source)
    assert is_mapped(again.train_images) and same(again, reference(mini_dir / "cifar10.npz"))


def truncate_images(folder: Path) -> None:
    path = folder / "train_images.npy"
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def truncate_header(folder: Path) -> None:
    path = folder / "test_images.npy"
    path.write_bytes(path.read_bytes()[:40])


def flip_a_label(folder: Path) -> None:
    path = folder / "train_labels.npy"
    raw = bytearray(path.read_bytes())
    raw[-8] = (raw[-8] + 1) % 10  # still a valid label, but not the one the fingerprint was made from
    path.write_bytes(bytes(raw))


def change_a_pixel(folder: Path) -> None:
    path = folder / "test_images.npy"
    with path.open("r+b") as f:  # same size, same header: only one byte of one image differs
        f.seek(-1, os.SEEK_END)
        last = f.read(1)[0]
        f.seek(-1, os.SEEK_END)
        f.write(bytes([last ^ 0x01]))


def grow_a_file(folder: Path) -> None:
    with (folder / "test_labels.npy").open("ab") as f:
        f.write(b"\0" * 64)


def drop_the_manifest(folder: Path) -> None:
    (folder / arraycache.MANIFEST).unlink()


def garble_the_manifest(folder: Path) -> None:
    (folder / arraycache.MANIFEST).write_text('{"format": 1, "arr')


def reshape_in_the_manifest(folder: Path) -> None:
    path = folder / arraycache.MANIFEST
    manifest = json.loads(path.read_text())
    manifest["arrays"]["train_images"]["shape"][0] -= 1
    path.write_text(json.dumps(manifest))


def drop_an_array(folder: Path) -> None:
    (folder / "test_images.npy").unlink()


DAMAGE = [
    truncate_images,
    truncate_header,
    flip_a_label,
    change_a_pixel,
    grow_a_file,
    drop_the_manifest,
    garble_the_manifest,
    reshape_in_the_manifest,
    drop_an_array,
]


@pytest.mark.parametrize("damage", DAMAGE, ids=[d.__name__ for d in DAMAGE])
def test_a_damaged_cache_is_rebuilt_from_the_source(small, private_cache: Path, damage) -> None:
    data.load_arrays(data.resolve_source(small()))
    folder = only_folder(private_cache)
    damage(folder)
    with pytest.raises(arraycache.CacheMiss):
        data._read_cache(folder, data.resolve_source(small()))
    rebuilt = data.load_arrays(data.resolve_source(small()))
    assert not is_mapped(rebuilt.train_images)  # read from the source, not the damaged folder
    assert same(rebuilt, reference(data.SAMPLE_PATH))
    data.wait_for_cache()
    assert is_mapped(data._read_cache(folder, data.resolve_source(small())).train_images)  # whole again


def test_damaged_pixels_are_told_in_one_line_and_the_cache_rebuilt(
    small, private_cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data.load_arrays(data.resolve_source(small()))
    folder = only_folder(private_cache)
    change_a_pixel(folder)
    capsys.readouterr()
    data.load_arrays(data.resolve_source(small()))
    lines = capsys.readouterr().err.splitlines()
    assert lines == [
        f"rocmtui: warning: the data cache {folder} is damaged (test_images.npy's data does not match the checksum "
        f"recorded when it was written); rebuilt from {data.SAMPLE_PATH}"
    ]
    data.wait_for_cache()
    assert same(data._read_cache(folder, data.resolve_source(small())), reference(data.SAMPLE_PATH))


@pytest.mark.parametrize("mask", [0o002, 0o000])
def test_the_cache_folders_are_private_whatever_the_umask(small, private_cache: Path, mask: int) -> None:
    old = os.umask(mask)
    try:
        data.load_arrays(data.resolve_source(small()))
        folder = only_folder(private_cache)
    finally:
        os.umask(old)
    for path in (private_cache.parent, private_cache, private_cache / "arrays"):
        assert path.stat().st_mode & 0o777 == 0o700, path
    for path in [folder, *folder.iterdir()]:
        assert not path.stat().st_mode & 0o022, path


def test_a_world_writable_xdg_cache_home_is_refused_for_the_home_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    xdg = tmp_path / "xdg"
    xdg.mkdir()
    xdg.chmod(0o777)
    monkeypatch.setenv("XDG_CACHE_HOME", str(xdg))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert data.cache_dir() == tmp_path / "home" / ".cache" / "rocmtui"
    assert not (xdg / "rocmtui").exists()
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and f"{xdg} is writable by its group and others" in err[0]


def test_a_changed_source_rebuilds_its_cache(small, tmp_path: Path, private_cache: Path) -> None:
    folder_in = tmp_path / "d"
    expected = sample_in(folder_in)
    data.load_arrays(data.resolve_source(small(data_dir=folder_in)))
    changed = {**expected, "train_labels": (expected["train_labels"] + 1) % 10}
    np.savez(folder_in / "cifar10.npz", **changed)  # type: ignore[arg-type]  # numpy's stub types each array name as allow_pickle
    os.utime(folder_in / "cifar10.npz", ns=(1, 1))  # a new mtime even on a coarse clock
    loaded = data.load_arrays(data.resolve_source(small(data_dir=folder_in)))
    assert np.array_equal(loaded.train_labels, changed["train_labels"])
    again = data.load_arrays(data.resolve_source(small(data_dir=folder_in)))
    assert is_mapped(again.train_labels) and np.array_equal(again.train_labels, changed["train_labels"])


def test_a_failed_write_leaves_the_previous_cache_and_no_temporary_folder(
    small, private_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data.load_arrays(data.resolve_source(small()))
    folder = only_folder(private_cache)
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    saved = 0
    real_save = np.save

    def crash_after_two(*args: Any, **kwargs: Any) -> None:
        nonlocal saved
        saved += 1
        if saved > 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        real_save(*args, **kwargs)

    monkeypatch.setattr(np, "save", crash_after_two)
    with pytest.raises(OSError):
        arraycache.write(folder, {k: np.zeros(3, np.uint8) for k in KEYS}, {"x": 1})
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
    assert [p.name for p in (private_cache / "arrays").iterdir()] == [folder.name]


def test_a_cache_that_cannot_be_written_only_costs_speed(
    small, private_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(*_: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(arraycache, "write", full)
    arrays = data.load_arrays(data.resolve_source(small()))
    assert same(arrays, reference(data.SAMPLE_PATH))


CRASH_MID_WRITE = """
import os, sys
from pathlib import Path
import numpy as np
from rocmtui.train import arraycache
real_save = np.save
def save_then_die(f, array, **kw):
    real_save(f, array, **kw)
    f.flush()
    os._exit(9)  # killed between two files: no cleanup runs
arraycache.np.save = save_then_die
arraycache.write(Path(sys.argv[1]), {"a": np.arange(10), "b": np.arange(5)}, {"n": 2})
"""


@pytest.mark.slow  # starts an interpreter
def test_a_writer_killed_mid_write_leaves_nothing_that_loads_and_its_leftovers_go(tmp_path: Path) -> None:
    folder = tmp_path / "arrays" / "entry"
    arraycache.write(folder, {"a": np.arange(3)}, {"n": 1})
    done = subprocess.run([sys.executable, "-c", CRASH_MID_WRITE, str(folder)], check=False)
    assert done.returncode == 9
    arrays, info = arraycache.read(folder)  # the previous folder, whole
    assert info == {"n": 1} and arrays["a"].tolist() == [0, 1, 2]
    leftovers = arraycache.leftovers(folder.parent)
    assert [p.name.split(".")[1::2] for p in leftovers] == [["entry", "tmp"]]  # .entry.<pid>.tmp
    arraycache.write(folder, {"a": np.arange(4)}, {"n": 3})
    assert arraycache.leftovers(folder.parent) == []
    assert sorted(p.name for p in folder.parent.iterdir()) == ["entry"]
    assert arraycache.read(folder)[1] == {"n": 3}


def test_caches_of_sources_that_are_gone_are_pruned(small, tmp_path: Path, private_cache: Path) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    np.savez(gone / "cifar10.npz", **reference(data.SAMPLE_PATH))  # type: ignore[arg-type]  # numpy's stub types each array name as allow_pickle
    data.load_arrays(data.resolve_source(small(data_dir=gone)))
    data.wait_for_cache()  # the orphan is whole before its source goes
    (gone / "cifar10.npz").unlink()
    data.load_arrays(data.resolve_source(small()))  # writing another entry prunes the orphan
    kept = only_folder(private_cache)
    assert data._read_cache(kept, data.resolve_source(small())).train_images.shape[0] > 0


def test_the_first_load_returns_before_its_cache_is_written(
    small, private_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cache is written behind the run: the arrays come back while the write is held, and a second load in
    the same process waits for it and maps the cache."""
    release = hold_writes(monkeypatch)
    first = data.load_arrays(data.resolve_source(small()))
    assert same(first, reference(data.SAMPLE_PATH)) and not any((private_cache / "arrays").iterdir())
    release.set()
    never_read_source(monkeypatch)
    assert is_mapped(data.load_arrays(data.resolve_source(small())).train_images)


def hold_writes(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """Hold every cache write behind the run until the returned event is set."""
    release = threading.Event()
    write = data._write_cache

    def held(*args: object) -> None:
        release.wait(10)
        write(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(data, "_write_cache", held)
    return release


def test_a_source_changed_while_its_cache_is_written_is_read_again(
    small, tmp_path: Path, private_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cache records the source as it was read, not as it is when the write behind the run gets to it."""
    folder_in = tmp_path / "d"
    expected = sample_in(folder_in)
    release = hold_writes(monkeypatch)
    data.load_arrays(data.resolve_source(small(data_dir=folder_in)))
    changed = {**expected, "train_labels": (expected["train_labels"] + 1) % 10}
    np.savez(folder_in / "cifar10.npz", **changed)  # type: ignore[arg-type]  # numpy's stub types each array name as allow_pickle
    os.utime(folder_in / "cifar10.npz", ns=(1, 1))
    release.set()
    loaded = data.load_arrays(data.resolve_source(small(data_dir=folder_in)))
    assert np.array_equal(loaded.train_labels, changed["train_labels"])


def test_a_source_that_changes_while_it_is_read_is_not_cached(
    small, tmp_path: Path, private_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder_in = tmp_path / "d"
    sample_in(folder_in)
    read = data._read_source

    def read_then_touch(*args: object) -> Arrays:
        arrays = read(*args)  # type: ignore[arg-type]
        os.utime(folder_in / "cifar10.npz", ns=(1, 1))
        return arrays

    monkeypatch.setattr(data, "_read_source", read_then_touch)
    data.load_arrays(data.resolve_source(small(data_dir=folder_in)))
    data.wait_for_cache()
    assert not any((private_cache / "arrays").iterdir())
