"""A folder of uncompressed .npy arrays that later runs memory-map instead of decoding their source again.

A folder holds one ``<name>.npy`` per array and ``manifest.json`` (format, each array's shape, dtype and the
CRC-32 of its data, and the caller's ``info``). It is built under a temporary name, every file fsynced, then
renamed into place: a crash at any point leaves the previous folder or none, never a half-written one. ``read``
checks each file against the manifest (header, shape, dtype, exact size, then every byte of the data against
its checksum) and raises ``CacheMiss`` on any difference (``CacheDamaged`` for damaged data), so the caller
rebuilds. Arrays come back memory-mapped copy-on-write: pages are read from the page cache on first touch, and
a write (never made by the engine) stays private instead of faulting on a read-only map.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import zlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from rocmtui.base.files import atomic_write, fsync_dir
from rocmtui.codec import decode_json, encode_json

MANIFEST = "manifest.json"
FORMAT = 2
"""2: each array's CRC-32 in the manifest (a format 1 folder is rebuilt once)."""


class CacheMiss(Exception):
    """The folder is absent or does not match its manifest: build it again."""


class CacheDamaged(CacheMiss):
    """An array's bytes no longer match the checksum recorded when it was written (a bad disk, a stray write)."""


def read(folder: Path) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """The arrays (memory-mapped) and the ``info`` they were written with; CacheMiss when unusable."""
    manifest = _manifest(folder)
    try:
        wanted = {
            str(k): (tuple(v["shape"]), np.dtype(v["dtype"]), int(v["crc32"])) for k, v in manifest["arrays"].items()
        }
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        raise CacheMiss(f"{folder / MANIFEST} is malformed ({err!r})") from None
    return {name: _map(folder / f"{name}.npy", *want) for name, want in wanted.items()}, manifest["info"]


def read_info(folder: Path) -> dict[str, Any]:
    """The ``info`` of a folder's manifest alone (no array is opened); CacheMiss when unreadable."""
    info: dict[str, Any] = _manifest(folder)["info"]
    return info


def _manifest(folder: Path) -> dict[str, Any]:
    try:
        manifest = decode_json((folder / MANIFEST).read_bytes(), dict[str, Any], what="bad cache manifest")
    except FileNotFoundError:
        raise CacheMiss(f"{folder} has no {MANIFEST}") from None
    except (OSError, ValueError) as err:
        raise CacheMiss(f"{folder / MANIFEST} is unreadable ({err})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT or not isinstance(manifest.get("info"), dict):
        raise CacheMiss(f"{folder / MANIFEST} is not a format {FORMAT} manifest")
    return manifest


def _map(path: Path, shape: tuple[int, ...], dtype: np.dtype[Any], checksum: int) -> np.ndarray:
    try:
        mapped = np.load(path, mmap_mode="c", allow_pickle=False)
        size = path.stat().st_size
    except (OSError, ValueError, EOFError) as err:  # missing, truncated header or data
        raise CacheMiss(f"{path}: {err}") from None
    if mapped.shape != shape or mapped.dtype != dtype:
        raise CacheMiss(f"{path} holds {mapped.dtype}{mapped.shape}, the manifest says {dtype}{shape}")
    if size != mapped.offset + mapped.nbytes:
        raise CacheMiss(f"{path} is {size} bytes, expected {mapped.offset + mapped.nbytes}")
    plain: np.ndarray = mapped.view(np.ndarray)  # the same map, without the memmap subclass downstream
    if data_checksum(plain) != checksum:  # reads every page once: the run touches them all anyway
        raise CacheDamaged(f"{path.name}'s data does not match the checksum recorded when it was written")
    return plain


def data_checksum(array: np.ndarray) -> int:
    """The CRC-32 of a C-contiguous array's bytes: damage is what it finds (the folder is private, so nobody
    else forges it), and it costs half of SHA-256's time: 90 ms against 204 ms for CIFAR-10's 184 MB on the
    2-core CPU box."""
    return zlib.crc32(array.data.cast("B"))


def write(folder: Path, arrays: Mapping[str, np.ndarray], info: Mapping[str, Any]) -> None:
    """Replace ``folder`` with ``arrays`` (C order, as saved) and ``info`` (JSON), atomically; OSError on failure."""
    folder.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    for dead in leftovers(folder.parent):
        shutil.rmtree(dead, ignore_errors=True)
    tmp = folder.with_name(f".{folder.name}.{os.getpid()}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(mode=0o700)
    tmp.chmod(0o700)  # whatever the umask
    try:
        entries = {}
        for name, array in arrays.items():
            contiguous = np.ascontiguousarray(array)
            fd = os.open(tmp / f"{name}.npy", os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "wb") as f:
                np.save(f, contiguous, allow_pickle=False)
                f.flush()
                os.fsync(f.fileno())
            entries[name] = {
                "shape": list(contiguous.shape),
                "dtype": contiguous.dtype.str,
                "crc32": data_checksum(contiguous),
            }
        manifest = {"format": FORMAT, "arrays": entries, "info": dict(info)}
        atomic_write(tmp / MANIFEST, encode_json(manifest, indent=1) + b"\n")  # fsyncs tmp too
        _swap_in(tmp, folder)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    fsync_dir(folder.parent)


def _swap_in(tmp: Path, folder: Path) -> None:
    """Rename ``tmp`` to ``folder``; an existing ``folder`` (stale, or another process's) is moved aside first."""
    try:
        os.rename(tmp, folder)
        return
    except OSError as err:
        if err.errno not in (errno.ENOTEMPTY, errno.EEXIST):
            raise
    old = folder.with_name(f".{folder.name}.{os.getpid()}.old")
    shutil.rmtree(old, ignore_errors=True)
    with contextlib.suppress(FileNotFoundError):  # another process moved it first
        os.rename(folder, old)
    os.rename(tmp, folder)
    shutil.rmtree(old, ignore_errors=True)  # a reader that mapped the old files keeps its pages


def leftovers(root: Path) -> list[Path]:
    """Temporary and set-aside folders under ``root`` whose process is gone (a crash mid-write or mid-swap)."""
    found = []
    for path in sorted(root.glob(".*.*.tmp")) + sorted(root.glob(".*.*.old")):
        pid = path.name.rsplit(".", 2)[-2]
        if pid.isdigit() and not _alive(int(pid)):
            found.append(path)
    return found


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True
