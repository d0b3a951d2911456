"""Safe opening (``rocmtui.base.files``) at its edges: what the descriptor is left as, links given on purpose,
each kind of file named; and the codec's canonical form."""

from __future__ import annotations

import errno
import os
import socket
import stat
from pathlib import Path

import pytest

from rocmtui.base import files
from rocmtui.base.files import UnsafeFileError, atomic_write, file_kind, held_folder, open_regular, read_small
from rocmtui.codec import CodecError, decode_json, encode_json
from rocmtui.run.format import RunStatus, Summary, read_record


def test_a_regular_file_comes_back_in_blocking_mode(tmp_path: Path) -> None:
    """Opened without blocking (a FIFO planted there must not hang the open), handed back blocking: a reader
    of the descriptor never gets EAGAIN halfway through."""
    path = tmp_path / "status.json"
    path.write_bytes(b"{}")
    fd = open_regular(path)
    try:
        assert os.get_blocking(fd)
        assert not os.get_inheritable(fd)  # O_CLOEXEC: no child process inherits it
    finally:
        os.close(fd)


def test_a_link_is_read_only_when_asked(tmp_path: Path) -> None:
    (tmp_path / "real.json").write_bytes(b"[1]")
    (tmp_path / "link.json").symlink_to(tmp_path / "real.json")
    with pytest.raises(UnsafeFileError, match="symbolic link"):
        read_small(tmp_path / "link.json")
    assert read_small(tmp_path / "link.json", follow_links=True) == b"[1]"


def test_a_file_of_exactly_the_cap_is_read_and_one_byte_more_refused(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"x" * 10)
    assert read_small(path, max_bytes=10) == b"x" * 10
    with pytest.raises(UnsafeFileError, match="larger than 9 bytes"):
        read_small(path, max_bytes=9)


def test_a_terabyte_file_is_refused_having_read_one_byte_past_the_cap(tmp_path: Path) -> None:
    huge = tmp_path / "huge.json"
    with huge.open("wb") as f:
        f.truncate(1 << 40)  # sparse: no disk taken; read whole, it would take a terabyte of memory
    with pytest.raises(UnsafeFileError, match=r"huge\.json is larger than 10 bytes: not read$"):
        read_small(huge, max_bytes=10)


def test_each_kind_of_file_that_is_not_regular_is_named(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(UnsafeFileError, match=r"not a regular file \(a FIFO\)"):
        read_small(tmp_path / "fifo")
    with pytest.raises(UnsafeFileError, match=r"not a regular file \(a character device\)"):
        read_small(Path("/dev/null"), follow_links=True)
    with pytest.raises(UnsafeFileError, match=r"not a regular file \(a folder\)"):
        read_small(tmp_path)
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(tmp_path / "sock"))
        assert stat.S_ISSOCK(os.stat(tmp_path / "sock").st_mode)
        with pytest.raises(UnsafeFileError) as refused:
            read_small(tmp_path / "sock")  # the open itself fails (ENXIO), before any stat
        assert str(refused.value) == f"{tmp_path / 'sock'} is not a regular file (a FIFO or socket)"
        assert file_kind(os.stat(tmp_path / "sock").st_mode) == "a socket"  # what a refused write says


def test_a_fifo_opened_for_writing_with_no_reader_is_named_at_once(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "control")
    with pytest.raises(UnsafeFileError) as refused:
        open_regular(tmp_path / "control", os.O_WRONLY | os.O_APPEND)
    assert str(refused.value) == f"{tmp_path / 'control'} is not a regular file (a FIFO or socket)"


def test_a_block_device_is_named(tmp_path: Path) -> None:
    try:
        os.mknod(tmp_path / "disk", stat.S_IFBLK | 0o600, os.makedev(7, 0))
    except PermissionError:
        pytest.skip("making a block device needs CAP_MKNOD")
    with pytest.raises(UnsafeFileError) as refused:
        read_small(tmp_path / "disk")
    assert str(refused.value) == f"{tmp_path / 'disk'} is not a regular file (a block device)"


def test_a_file_it_creates_is_never_executable(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        os.close(open_regular(tmp_path / "run.lock", os.O_RDWR | os.O_CREAT))
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "run.lock").stat().st_mode) == 0o644  # rw-r--r--: the umask takes from it


def test_an_atomic_write_makes_its_file_0644_or_the_mode_asked_never_executable(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        atomic_write(tmp_path / "status.json", b"{}")
        atomic_write(tmp_path / "private.json", b"{}", mode=0o600)
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "status.json").stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "private.json").stat().st_mode) == 0o600


def test_an_atomic_write_is_durable_unless_told_not_to_be(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[str] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    atomic_write(tmp_path / "summary.json", b"{}")
    assert synced == [str(tmp_path / f".summary.json.{os.getpid()}.tmp"), str(tmp_path)]  # the file, then the rename
    synced.clear()
    atomic_write(tmp_path / "status.json", b"{}", durable=False)  # a heartbeat
    assert synced == []


def test_a_link_is_not_a_file_and_only_space_and_quota_errors_are_a_full_disk() -> None:
    assert file_kind(stat.S_IFLNK | 0o777) == "not a file"
    assert files.is_disk_full(OSError(errno.ENOSPC, "No space left on device"))
    assert files.is_disk_full(OSError(errno.EDQUOT, "Disk quota exceeded"))
    assert not files.is_disk_full(OSError(errno.EACCES, "Permission denied"))
    assert not files.is_disk_full(ValueError("no errno"))


def test_the_canonical_form_sorts_keys_and_the_plain_one_keeps_their_order() -> None:
    assert encode_json({"b": 1, "a": 2}, sort_keys=True) == b'{"a":2,"b":1}'
    assert encode_json({"b": 1, "a": 2}) == b'{"b":1,"a":2}'
    assert encode_json({"a": [1]}, indent=1) == b'{\n "a": [\n  1\n ]\n}'


def test_a_write_whose_temp_file_cannot_be_made_fails_with_its_own_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_descriptors(*args: object, **kwargs: object) -> int:
        raise OSError(errno.EMFILE, os.strerror(errno.EMFILE))

    monkeypatch.setattr(files, "open_regular", no_descriptors)
    with pytest.raises(OSError) as err:
        atomic_write(tmp_path / "status.json", b"{}")
    assert err.value.errno == errno.EMFILE  # not the temp file's absence, found while cleaning up
    assert list(tmp_path.iterdir()) == []


def test_a_record_that_does_not_fit_is_refused_naming_the_file_or_the_type(tmp_path: Path) -> None:
    path = tmp_path / "status.json"
    path.write_bytes(b"[1]")
    with pytest.raises(CodecError) as err:
        read_record(path, RunStatus)
    assert str(err.value) == f"{path}: Expected `object`, got `array`"
    with pytest.raises(CodecError) as err:
        decode_json(b"[1]", RunStatus)
    assert str(err.value) == "bad RunStatus: Expected `object`, got `array`"
    with pytest.raises(CodecError) as err:
        decode_json(b"[1]", Summary)  # a union: named by its members
    assert str(err.value) == "bad rocmtui.events.RunFinished | rocmtui.events.RunFailed: Expected `object`, got `array`"


def test_a_write_through_a_held_folder_follows_it_when_another_is_put_in_its_place(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    fd = os.open(run, os.O_RDONLY | os.O_DIRECTORY)
    try:
        held = held_folder(fd, run)
        run.rename(tmp_path / "moved")
        run.mkdir()  # a folder put where the run was
        atomic_write(held / "status.json", b"{}")
    finally:
        os.close(fd)
    assert (tmp_path / "moved" / "status.json").read_bytes() == b"{}"
    assert list(run.iterdir()) == []
