"""A real second user for the trust tests: made with ``useradd``, removed with ``userdel -r`` after.

Only root can make one: elsewhere the tests that need it skip with one line. The user's actions run through
``subprocess.run(user=, group=)``, a real process of that uid, so the kernel's own permission checks decide.
"""

from __future__ import annotations

import itertools
import os
import pwd
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

_serial = itertools.count()


@dataclass(frozen=True)
class Stranger:
    """Another account on this machine."""

    name: str
    uid: int
    gid: int

    def run(self, command: str, *, umask: int = 0o022) -> subprocess.CompletedProcess[str]:
        """``sh -c command`` as this user (no supplementary groups); raises when it fails."""
        return subprocess.run(
            ["sh", "-c", command],
            user=self.uid,
            group=self.gid,
            extra_groups=[],
            umask=umask,
            capture_output=True,
            text=True,
            check=True,
            cwd="/",
            env={"PATH": "/usr/bin:/bin", "HOME": "/"},
        )


def _need_root() -> None:
    if os.geteuid() != 0 or shutil.which("useradd") is None:
        pytest.skip("needs root and useradd to make a second user")


def _useradd(name: str) -> None:
    """``useradd``, tried again while another test worker holds the account files' lock."""
    for attempt in range(20):
        command = ["useradd", "--no-create-home", "--user-group", name]
        made = subprocess.run(command, check=False, capture_output=True, text=True)
        if made.returncode == 0:
            return
        if "lock" not in made.stderr or attempt == 19:
            raise RuntimeError(f"useradd {name}: {made.stderr.strip()}")
        time.sleep(0.1)  # a retry after contention, not a wait for a condition


@pytest.fixture
def stranger() -> Iterator[Stranger]:
    """A fresh user (its own group), removed after the test."""
    _need_root()
    name = f"rtu{os.getpid()}x{next(_serial)}"
    _useradd(name)
    try:
        entry = pwd.getpwnam(name)
        yield Stranger(name, entry.pw_uid, entry.pw_gid)
    finally:
        subprocess.run(["userdel", "-r", name], check=False, capture_output=True)


@pytest.fixture
def open_tmp() -> Iterator[Path]:
    """A folder under /tmp that every user can reach and write, sticky as /tmp is (pytest's own tmp_path is
    root's alone)."""
    folder = Path(tempfile.mkdtemp(prefix="rocmtui-trust-"))
    folder.chmod(0o1777)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
