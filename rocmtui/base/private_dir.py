"""Folders only their user can write: made 0700 whatever the umask, and checked as ssh checks ``~/.ssh``.

rocmtui keeps things in folders that later runs trust: compiled kernels and torchvision's pickles (loaded as
code), arrays, settings, run folders. On a shared machine, a folder another user can write is a folder that
user can put code in. So each such folder goes through ``private_dir``: missing parts are made with mode 0700
(``os.mkdir``'s mode is only ever narrowed by the umask, and an explicit ``chmod`` follows for the folder
itself), then the folder must be owned by this user and writable by nobody else, and each parent up to the
user's home (or up to ``/`` for a folder outside it) must be owned by this user or root and writable by no one
else, unless it has the sticky bit (as ``/tmp`` has: nobody else may rename or remove what is ours there).
A refusal is one ``UnsafeFolderError`` line that names the folder and what is wrong with it.

``runs_dir_problem`` is the looser rule for a runs folder, which a team may share on purpose.
"""

from __future__ import annotations

import os
import stat
import sys
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

from rocmtui.base.errors import UsageError

PRIVATE_MODE = 0o700
OTHERS_WRITE = stat.S_IWGRP | stat.S_IWOTH


class UnsafeFolderError(UsageError):
    """A folder another user owns or can write: refused, never used."""


def private_dir(path: Path, *, mode: int = PRIVATE_MODE) -> Path:
    """Make ``path`` (each missing part with ``mode``, 0700 by default) and check it and its parents; the
    resolved absolute path to use from now on. UnsafeFolderError when another user owns or can write it or a
    folder above it: checked before anything is made under a folder that is not safe."""
    path = Path(os.path.abspath(os.path.expanduser(path)))
    existing = path
    while not os.path.lexists(existing) and existing != existing.parent:
        existing = existing.parent
    if existing != path:  # nothing is made under a parent another user could swap
        real_existing = Path(os.path.realpath(existing))
        for parent in [real_existing, *_parents(real_existing)]:
            problem = _parent_problem(parent, os.geteuid())
            if problem:
                raise UnsafeFolderError(problem)
    made = make_dirs(path, mode)
    if made:
        os.chmod(path, mode)  # made by us: exactly ``mode``, whatever the umask
    real = Path(os.path.realpath(path))
    problem = folder_problem(real)
    if problem:
        raise UnsafeFolderError(problem)
    return real


def make_dirs(path: Path, mode: int) -> bool:
    """``mkdir -p`` with ``mode`` for every part it makes (never the umask's default); True when ``path``
    itself was made. OSError as ``os.mkdir`` raises it (FileExistsError for a file in the way)."""
    missing: list[Path] = []
    part = path
    while not os.path.lexists(part) and part != part.parent:
        missing.append(part)
        part = part.parent
    for folder in reversed(missing):
        try:
            os.mkdir(folder, mode)
        except FileExistsError:
            if not folder.is_dir():
                raise
            continue
        os.chmod(folder, mode)
    if not path.is_dir():
        raise FileExistsError(f"{path} is not a folder")
    return bool(missing)


def folder_problem(path: Path) -> str | None:
    """Why ``path`` (an existing folder, resolved) is not private to this user, or None. Its parents up to
    the home folder are checked too (up to ``/`` when it is not under home)."""
    uid = os.geteuid()
    try:
        info = os.stat(path)
    except OSError as err:
        return f"{path} cannot be checked ({err.strerror or err})"
    if info.st_uid != uid:
        return f"{path} belongs to another user (uid {info.st_uid}); rocmtui does not use it"
    if info.st_mode & OTHERS_WRITE:
        return f"{path} is writable by {_who(info.st_mode)}; rocmtui does not use it (fix: chmod go-w {path})"
    for parent in _parents(path):
        problem = _parent_problem(parent, uid)
        if problem:
            return problem
    return None


def tree_problem(folder: Path, skip: Callable[[Path], bool] = lambda _: False) -> str | None:
    """Why something under ``folder`` (itself included) could have been written by another user, or None:
    every entry must be a folder or regular file (no link), owned by this user, writable by nobody else.
    What a private tree vouches for no longer rests on a record inside it (that record is in the tree too).
    ``skip(relative path)``: entries (and folders' contents) not checked, for files that hold no code."""
    uid = os.geteuid()
    try:
        for root, dirs, files in os.walk(folder, onerror=_raise):
            here = Path(root).relative_to(folder)
            dirs[:] = [name for name in dirs if not skip(here / name)]
            for name in [".", *dirs, *(name for name in files if not skip(here / name))]:
                problem = _entry_problem(os.path.join(root, name), uid)
                if problem:
                    return problem
    except OSError as err:
        return f"{folder} cannot be checked ({err.strerror or err})"
    return None


def _entry_problem(path: str, uid: int) -> str | None:
    info = os.lstat(path)
    if not (stat.S_ISDIR(info.st_mode) or stat.S_ISREG(info.st_mode)):
        return f"{os.path.normpath(path)} is not a plain file or folder"
    if info.st_uid != uid:
        return f"{os.path.normpath(path)} belongs to another user (uid {info.st_uid})"
    if info.st_mode & OTHERS_WRITE:
        return f"{os.path.normpath(path)} is writable by {_who(info.st_mode)}"
    return None


def _raise(err: OSError) -> None:
    raise err


def _parents(path: Path) -> list[Path]:
    """The folders above ``path`` up to the home folder, or up to ``/`` when ``path`` is not under home."""
    home = Path(os.path.realpath(os.path.expanduser("~")))
    chain = []
    for parent in path.parents:
        chain.append(parent)
        if parent == home:
            break
    return chain


def _parent_problem(parent: Path, uid: int) -> str | None:
    try:
        info = os.stat(parent)
    except OSError as err:
        return f"{parent} cannot be checked ({err.strerror or err})"
    if info.st_uid not in (uid, 0):
        return f"{parent} belongs to another user (uid {info.st_uid}), who could replace what is under it"
    if info.st_mode & OTHERS_WRITE and not info.st_mode & stat.S_ISVTX:
        return (
            f"{parent} is writable by {_who(info.st_mode)} without the sticky bit: they could replace what is under it"
        )
    return None


def first_private(candidates: Iterable[Path], *, what: str) -> Path:
    """The first of ``candidates`` that ``private_dir`` accepts, else a fresh private temporary folder; each
    refusal is one warning line on stderr (once per process)."""
    for candidate in candidates:
        try:
            return private_dir(candidate)
        except (UnsafeFolderError, OSError) as err:
            warn_once(f"{what}: {err}")
    fallback = Path(tempfile.mkdtemp(prefix="rocmtui-"))  # 0700, ours, fresh: nothing planted in it
    warn_once(f"{what}: using the private temporary folder {fallback} for this process")
    return fallback


_warned: set[str] = set()


def warn_once(line: str) -> None:
    """One ``rocmtui: warning:`` line on stderr, the first time this process has it to say."""
    if line not in _warned:
        _warned.add(line)
        print(f"rocmtui: warning: {line}", file=sys.stderr, flush=True)


def runs_dir_problem(path: Path, *, shared: bool) -> str | None:
    """Why the runs folder ``path`` (existing) is refused, or None: owned by another user, or writable by
    others without the sticky bit (a stranger could rename a run folder and put their own in its place).
    ``shared`` accepts a team folder on purpose."""
    if shared:
        return None
    try:
        info = os.stat(path)
    except OSError as err:
        return f"runs folder {path} cannot be checked ({err.strerror or err})"
    hint = "give --shared-runs-dir (or set ROCMTUI_SHARED_RUNS_DIR=1) to use a team folder on purpose"
    if info.st_uid != os.geteuid():
        return f"runs folder {path} belongs to another user (uid {info.st_uid}); {hint}"
    if info.st_mode & OTHERS_WRITE and not info.st_mode & stat.S_ISVTX:
        return f"runs folder {path} is writable by {_who(info.st_mode)} without the sticky bit; {hint}"
    return None


def _who(mode: int) -> str:
    both = mode & stat.S_IWGRP and mode & stat.S_IWOTH
    return "its group and others" if both else "its group" if mode & stat.S_IWGRP else "others"
