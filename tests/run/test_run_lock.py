"""The run lock in one process: flock locks belong to an open file, so a second descriptor of ``run.lock`` is
another holder as far as the kernel is concerned (a viewer's probe, or a writer that was there first)."""

from __future__ import annotations

import fcntl
import os
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from rocmtui.run import format as fmt
from rocmtui.run.lock import ACQUIRE_TRIES, RunBusyError, RunLock, is_locked, lock_holders


def _open_descriptors() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


@contextmanager
def held(run_dir: Path, how: int = fcntl.LOCK_EX, text: bytes | None = None) -> Iterator[int]:
    """``run.lock`` held through a descriptor of its own, holding ``text`` when given."""
    path = run_dir / fmt.LOCK
    if text is not None:
        path.write_bytes(text)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, how | fcntl.LOCK_NB)
        yield fd
    finally:
        os.close(fd)


def _refusal(run_dir: Path) -> str:
    with pytest.raises(RunBusyError) as refused:
        RunLock.acquire(run_dir)
    return str(refused.value)


def test_the_lock_names_its_holder_alone_whatever_was_there(tmp_path: Path) -> None:
    (tmp_path / fmt.LOCK).write_bytes(b"process 1 on a-host-that-held-this-folder-long-ago-with-a-long-name\n")
    lock = RunLock.acquire(tmp_path)
    try:
        me = f"process {os.getpid()} on {socket.gethostname()}"
        assert (tmp_path / fmt.LOCK).read_bytes() == f"{me}\n".encode()
        assert _refusal(tmp_path) == (
            f"{tmp_path} is being written by {me}; watch it with 'rocmtui watch {tmp_path}' "
            f"or stop it with 'rocmtui stop {tmp_path}'"
        )
    finally:
        lock.release()


@pytest.mark.parametrize(
    ("text", "named"),
    [(b"", "another process"), (b"  \n", "another process"), (b"process 7 on b\xffx\n", "process 7 on b\ufffdx")],
    ids=["empty", "blank", "not UTF-8"],
)
def test_a_holder_that_wrote_no_readable_name_is_still_a_one_line_refusal(
    tmp_path: Path, text: bytes, named: str
) -> None:
    with held(tmp_path, text=text):
        before = _open_descriptors()
        refusal = _refusal(tmp_path)
        assert _open_descriptors() == before  # the refused descriptor is closed
    assert refusal.startswith(f"{tmp_path} is being written by {named}; watch it with")


def test_a_holders_name_is_read_to_200_bytes_at_most(tmp_path: Path) -> None:
    with held(tmp_path, text=b"p" * 150 + b"q" * 150 + b"\n"):
        assert _refusal(tmp_path).startswith(f"{tmp_path} is being written by {'p' * 150}{'q' * 50}; watch it")


def test_a_busy_folder_is_refused_within_a_moment(tmp_path: Path) -> None:
    with held(tmp_path):
        started = time.monotonic()
        _refusal(tmp_path)
        assert time.monotonic() - started < 1.5  # a few short retries, not a wait
        assert is_locked(tmp_path)


@pytest.mark.parametrize("tries", [1, ACQUIRE_TRIES - 1])
def test_a_viewers_probe_never_refuses_the_writer(tmp_path: Path, tries: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """A viewer's ``is_locked`` holds a shared lock for a moment: the writer retries until its last try."""
    with held(tmp_path, fcntl.LOCK_SH) as probe:
        waits: list[float] = []

        def wait(seconds: float) -> None:
            waits.append(seconds)
            if len(waits) == tries:
                fcntl.flock(probe, fcntl.LOCK_UN)  # the probe is done

        monkeypatch.setattr(time, "sleep", wait)
        lock = RunLock.acquire(tmp_path)
    assert len(waits) == tries
    assert is_locked(tmp_path)
    lock.release()


def test_a_folder_is_locked_only_while_a_writer_holds_it(tmp_path: Path) -> None:
    assert not is_locked(tmp_path)  # no lock file at all
    (tmp_path / fmt.LOCK).write_bytes(b"process 1 on gone\n")
    assert not is_locked(tmp_path)  # a writer that ended
    with held(tmp_path):
        assert is_locked(tmp_path)
    (tmp_path / fmt.LOCK).unlink()
    (tmp_path / fmt.LOCK).symlink_to(tmp_path / "elsewhere")
    assert not is_locked(tmp_path)  # a link is never a lock


def test_release_lets_the_next_writer_in_and_a_second_release_closes_nothing(tmp_path: Path) -> None:
    lock = RunLock.acquire(tmp_path)
    lock.release()
    assert not is_locked(tmp_path)
    following = RunLock.acquire(tmp_path)
    try:
        before = _open_descriptors()
        lock.release()
        assert _open_descriptors() == before
        assert is_locked(tmp_path)  # the second release did not let go of the next writer's lock
    finally:
        following.release()


def test_a_ctrl_c_while_waiting_for_the_lock_leaks_no_descriptor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(_seconds: float) -> None:
        raise KeyboardInterrupt

    with held(tmp_path, fcntl.LOCK_SH):
        monkeypatch.setattr(time, "sleep", interrupted)
        before = _open_descriptors()
        with pytest.raises(KeyboardInterrupt):
            RunLock.acquire(tmp_path)
        assert _open_descriptors() == before


def test_the_holders_are_the_kernels_not_the_lock_files(tmp_path: Path) -> None:
    """What ``stop`` signals: the process the kernel lists as holding the folder's lock (``/proc/locks``), never
    one named in the lock file, which whoever can write the folder could point anywhere."""
    assert lock_holders(tmp_path) == set()  # no lock file
    with held(tmp_path, text=b"process 1 on elsewhere\n"):
        assert lock_holders(tmp_path) == {os.getpid()}
    assert lock_holders(tmp_path) == set()


def test_a_waiting_request_or_another_files_lock_is_no_holder(tmp_path: Path) -> None:
    (tmp_path / fmt.LOCK).write_bytes(b"")
    info = os.stat(tmp_path / fmt.LOCK)
    ours = f"{os.major(info.st_dev):02x}:{os.minor(info.st_dev):02x}:{info.st_ino}"
    other = f"{os.major(info.st_dev):02x}:{os.minor(info.st_dev):02x}:{info.st_ino + 1}"
    proc_locks = tmp_path / "locks"
    proc_locks.write_text(  # as the kernel lists them: each lock, then the requests waiting for it
        f"1: FLOCK  ADVISORY  WRITE 4444 {other} 0 EOF\n"  # another file's
        f"1: -> FLOCK  ADVISORY  WRITE 4343 {other} 0 EOF\n"
        f"2: FLOCK  ADVISORY  WRITE 4242 {ours} 0 EOF\n"
        f"2: -> FLOCK  ADVISORY  WRITE 4141 {ours} 0 EOF\n"  # waiting for it
        f"3: POSIX  ADVISORY  WRITE 4545 {ours} 0 EOF\n"  # an fcntl lock, not the run's flock
        f"4: FLOCK  ADVISORY  WRITE x {ours} 0 EOF\n"
        "5: FLOCK\n"
    )
    assert lock_holders(tmp_path, proc_locks) == {4242}
    assert lock_holders(tmp_path, tmp_path / "no-such-file") == set()
