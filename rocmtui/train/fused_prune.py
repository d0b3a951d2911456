"""Old fused-kernel caches removed: each is tens of megabytes, and a new torch, GPU or recipe makes a new one.

A folder's last use is its ``ready.json``'s modification time (``fused.plan`` touches it when a run loads the
cache). After each successful build the newest ``KEEP`` folders stay; older ones go, but never a folder whose
build is running (its ``build.lock`` is held), and nothing but plain folders named as caches are.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from rocmtui.run.lock import lock_held
from rocmtui.train.fused import LOCK, READY

CACHE_NAME = re.compile(r"[0-9a-f]{20}")
"""A cache folder's name (``fused.cache_key``); nothing else under the root is touched."""

KEEP = 4
"""Caches kept: a machine that switches between a few torch versions or recipes keeps each one warm."""


def last_used(folder: Path) -> float:
    """When a run last loaded this cache (or it was built, or the build began)."""
    for path in (folder / READY, folder):
        try:
            return path.stat().st_mtime
        except OSError:
            continue
    return 0.0


def prune(root: Path, keep: Path, count: int = KEEP) -> list[Path]:
    """Remove all but the ``count`` most recently used caches under ``root`` (``keep`` always stays);
    the folders removed."""
    try:
        entries = [p for p in root.iterdir() if CACHE_NAME.fullmatch(p.name) and p.is_dir() and not p.is_symlink()]
    except OSError:
        return []
    entries.sort(key=last_used, reverse=True)
    others = [p.resolve() for p in entries if p.resolve() != keep.resolve()]
    stays = {keep.resolve(), *others[: max(count - 1, 0)]}
    removed = []
    for folder in entries:
        if folder.resolve() in stays or lock_held(folder / LOCK):
            continue
        shutil.rmtree(folder, ignore_errors=True)
        if not folder.exists():
            removed.append(folder)
    return removed
