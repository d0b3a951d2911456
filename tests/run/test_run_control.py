"""The control channel belongs to its run's writer: created once 0600, read through its descriptor; a file put in
its place is never read, and a viewer writes only into a private channel of its own user."""

from __future__ import annotations

import errno
import os
import stat
import time
from pathlib import Path

import pytest
from second_user import Stranger, open_tmp, stranger
from waiting import wait_for

import rocmtui
from rocmtui.base.errors import UsageError
from rocmtui.events import LogMessage, RunControl, RunFinished
from rocmtui.run import format as fmt
from rocmtui.run.control import CommandReader, send_command
from rocmtui.run.session import RunSession
from rocmtui.run.status import read_status
from rocmtui.run.stream import read_events

__all__ = ["open_tmp", "stranger"]
STOP = b'{"command":"stop","t":1.0}\n'


def planted_channel(run_dir: Path, mode: int) -> Path:
    """A control file of ours with ``mode``, as a writer under a loose umask would have left it."""
    path = run_dir / fmt.CONTROL
    path.touch()
    path.chmod(mode)
    return path


@pytest.mark.parametrize("mode", [0o620, 0o602, 0o660, 0o640])
def test_send_command_refuses_a_channel_its_group_or_others_can_open(tmp_path: Path, mode: int) -> None:
    path = planted_channel(tmp_path, mode)
    with pytest.raises(UsageError, match=r"is not a private control channel \(mode -r"):
        send_command(tmp_path, "stop")
    assert path.read_bytes() == b""


def test_send_command_refuses_a_channel_another_user_owns(open_tmp: Path, stranger: Stranger) -> None:
    """Root can open the other user's 0600 file: only the owner check keeps the command out."""
    run_dir = open_tmp / "run"
    stranger.run(f"mkdir -m 700 {run_dir} && touch {run_dir}/control && chmod 600 {run_dir}/control")
    with pytest.raises(UsageError, match="is not a private control channel"):
        send_command(run_dir, "stop")
    assert (run_dir / fmt.CONTROL).read_bytes() == b""


def test_send_command_never_follows_a_link_even_to_a_private_file_of_ours(tmp_path: Path) -> None:
    """The target passes every other check (a regular 0600 file of this user): only O_NOFOLLOW refuses it."""
    victim = tmp_path / "victim"
    victim.write_bytes(b"")
    victim.chmod(0o600)
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / fmt.CONTROL).symlink_to(victim)
    with pytest.raises(UsageError, match="is not a private control channel"):
        send_command(run_dir, "stop")
    assert victim.read_bytes() == b""


@pytest.mark.parametrize("mask", [0o000, 0o002, 0o077])
def test_the_channel_is_0600_whatever_the_umask(tmp_path: Path, mask: int) -> None:
    old = os.umask(mask)
    try:
        reader = CommandReader(tmp_path)
    finally:
        os.umask(old)
    assert stat.S_IMODE(reader.path.lstat().st_mode) == 0o600
    reader.close()
    assert not reader.path.exists()


def test_a_replaced_channel_is_never_read_and_is_told_once(tmp_path: Path) -> None:
    reader = CommandReader(tmp_path)
    control = RunControl()
    send_command(tmp_path, "pause")
    assert reader.apply(control) == ["pause"]
    replacement = tmp_path / "elsewhere"
    replacement.write_bytes(STOP)
    replacement.chmod(0o600)
    os.replace(replacement, reader.path)
    assert reader.apply(control) == [] and not control.stop.is_set()
    assert reader.take_replacement() == (
        f"the control channel {reader.path} was replaced (-rw-------): what is there now is ignored, "
        "and viewers' commands no longer reach this run"
    )  # by this user: no uid named
    assert reader.take_replacement() is None
    reader.close()
    assert reader.path.read_bytes() == STOP  # not ours: left for the owner to look at


def test_a_removed_channel_is_told_once(tmp_path: Path) -> None:
    reader = CommandReader(tmp_path)
    reader.path.unlink()
    assert reader.apply(RunControl()) == []
    told = reader.take_replacement()
    assert told is not None and told.startswith(f"the control channel {reader.path} was removed: ")
    assert reader.take_replacement() is None
    reader.close()


def test_a_channel_replaced_by_a_link_or_a_fifo_is_never_opened(tmp_path: Path) -> None:
    for make in (lambda p: p.symlink_to(tmp_path / "target"), lambda p: os.mkfifo(p, 0o600)):
        run_dir = tmp_path / f"run{len(list(tmp_path.iterdir()))}"
        run_dir.mkdir()
        (tmp_path / "target").write_bytes(STOP)
        reader = CommandReader(run_dir)
        reader.path.unlink()
        make(reader.path)
        assert reader.apply(RunControl()) == []  # a FIFO would block an open: it is never opened
        assert reader.take_replacement() is not None
        reader.close()


def test_another_user_who_can_write_the_folder_cannot_stop_the_run(open_tmp: Path, stranger: Stranger) -> None:
    """Umask 002 in a folder shared with the stranger's group: they replace the channel with a stop."""
    run_dir = open_tmp / "run"
    run_dir.mkdir(mode=0o770)
    os.chown(run_dir, -1, stranger.gid)
    run_dir.chmod(0o2770)  # a setgid team folder
    control = RunControl()
    session = RunSession(run_dir, control, name="shared")
    try:
        stranger.run(
            f"cd {run_dir} && printf '%s\\n' '{STOP.decode().strip()}' > .c && mv -f .c control"
        )  # one rename: never seen missing

        def warnings() -> list[str]:
            return [
                e.message for e in read_events(run_dir) if isinstance(e, LogMessage) and "control channel" in e.message
            ]

        wait_for(warnings, what="the warning about the replaced channel")
        warned = warnings()
        assert f"replaced by uid {stranger.uid}" in warned[0]
        assert not control.stop.is_set() and not control.paused
    finally:
        session.close()


def test_a_script_that_changes_folder_keeps_its_status_summary_and_channel(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The default relative ``runs`` folder, then ``os.chdir`` after ``track()``."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ROCMTUI_RUNS_DIR", raising=False)
    (tmp_path / "elsewhere").mkdir()
    with rocmtui.track("moving") as run:
        os.chdir(tmp_path / "elsewhere")
        run.log(loss=1.0)
        send_command(tmp_path / "runs" / run.run_dir.name, "stop")
        wait_for(lambda: run.should_stop, what="the stop sent to the folder it was started in")
    folder = tmp_path / "runs" / run.run_dir.name
    status = read_status(folder)
    assert status is not None and status.state == "stopped"
    assert isinstance(read_events(folder)[-1], RunFinished)
    assert (folder / fmt.SUMMARY).is_file()
    assert not (tmp_path / "elsewhere" / "runs").exists()


def test_a_renamed_parent_cannot_redirect_the_status_or_the_summary(tmp_path: Path) -> None:
    """The runs folder is moved away mid-run and a folder of the same name put in its place: the writer's
    status and summary still go to the folder it holds."""
    run_dir = tmp_path / "runs" / "r"
    run_dir.mkdir(parents=True)
    session = RunSession(run_dir, RunControl(), name="held")
    try:
        (tmp_path / "runs").rename(tmp_path / "moved")
        run_dir.mkdir(parents=True)  # the decoy
        session.emit(RunFinished("completed", 1, 0.5, 0.5, 1.0, 10.0, None, str(run_dir)))
    finally:
        session.close()
    assert sorted(p.name for p in run_dir.iterdir()) == []
    moved = tmp_path / "moved" / "r"
    status = read_status(moved)
    assert status is not None and status.state == "finished"
    assert (moved / fmt.SUMMARY).is_file()


def test_every_command_reaches_the_run_in_order_past_lines_it_does_not_know(tmp_path: Path) -> None:
    """A newer viewer's command, or a torn line, is skipped; the commands after it still apply."""
    reader = CommandReader(tmp_path)
    control = RunControl()
    try:
        send_command(tmp_path, "pause")
        assert reader.apply(control) == ["pause"] and control.paused
        with open(reader.path, "ab") as channel:
            channel.write(b'{"command":"rewind","t":1.0}\n{"comm\n')
        send_command(tmp_path, "resume")
        send_command(tmp_path, "save")
        assert reader.apply(control) == ["resume", "save"]
        assert not control.paused and control.take_save_request() and not control.stop.is_set()
    finally:
        reader.close()


def test_a_command_is_written_with_its_time_to_the_millisecond(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reader = CommandReader(tmp_path)
    try:
        monkeypatch.setattr(time, "time", lambda: 1_700_000_000.123456)
        send_command(tmp_path, "pause")
        assert reader.path.read_bytes() == b'{"command":"pause","t":1700000000.123}\n'
    finally:
        reader.close()


def test_a_channel_the_kernel_will_not_open_for_us_is_said_to_be_another_users(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not root: another user's 0600 channel cannot be opened (root opens it, and the owner check refuses it,
    above); the kernel's EACCES is stood in for here."""
    path = planted_channel(tmp_path, 0o600)

    def refused(*_args: object, **_kw: object) -> int:
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))

    monkeypatch.setattr(os, "open", refused)
    with pytest.raises(UsageError) as err:
        send_command(tmp_path, "stop")
    monkeypatch.undo()
    assert str(err.value) == f"{tmp_path} belongs to another user: only the run's owner can control it"
    assert path.read_bytes() == b""
