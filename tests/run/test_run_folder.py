"""One writer per folder, the numbered stream, status and "lost", the control channel's permissions."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from msgspec.structs import replace

from rocmtui.base.errors import UsageError
from rocmtui.events import EpochCompleted, LogMessage, RunControl, RunFinished
from rocmtui.run.control import CommandReader, NotLiveError, send_command
from rocmtui.run.layout import create_run_dir, run_dirs
from rocmtui.run.lock import RunBusyError, RunLock, is_locked
from rocmtui.run.session import RunSession
from rocmtui.run.status import effective, read_status, write_status
from rocmtui.run.stream import EventTail, EventWriter, read_events

HOLD = """
import sys
from pathlib import Path
from rocmtui.run.lock import RunLock
lock = RunLock.acquire(Path(sys.argv[1]))
print("held", flush=True)
sys.stdin.readline()
"""


def epoch(n: int) -> EpochCompleted:
    return EpochCompleted(n, 5, 1.0, 0.5, 1.1, 0.4, 1e-3, 2.0, 1000.0, n == 0)


def test_a_second_writer_is_refused_naming_the_live_process(tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(tmp_path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        assert is_locked(tmp_path)
        with pytest.raises(RunBusyError) as err:
            RunLock.acquire(tmp_path)
        assert f"process {holder.pid} on " in str(err.value) and "\n" not in str(err.value)
    finally:
        holder.kill()
        holder.wait()
    assert not is_locked(tmp_path)  # the kernel let go when the holder died
    RunLock.acquire(tmp_path).release()


def test_parallel_folder_creation_never_collides(tmp_path: Path) -> None:
    made: list[Path] = []
    threads = [threading.Thread(target=lambda: made.append(create_run_dir(tmp_path, "same"))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({p.name for p in made}) == 8
    assert all(re.fullmatch("same-[0-9a-f]{8}", p.name) for p in made)


def test_a_run_folder_cannot_be_taken_before_it_is_made(tmp_path: Path) -> None:
    for n in range(1, 1000):  # every name the old counting would have tried
        (tmp_path / ("same" if n == 1 else f"same-{n}")).mkdir()
    made = create_run_dir(tmp_path, "same")
    assert made.is_dir() and not any(made.iterdir()) and re.fullmatch("same-[0-9a-f]{8}", made.name)


def test_runs_dir_that_is_a_file_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(UsageError, match="is a file, not a folder"):
        create_run_dir(tmp_path / "file", "run")


def test_the_stream_numbers_lines_and_continues_after_a_reopen(tmp_path: Path) -> None:
    writer = EventWriter(tmp_path)
    assert [writer.write(epoch(0)), writer.write(epoch(1))] == [1, 2]
    writer.close()
    with (tmp_path / "metrics.jsonl").open("ab") as f:
        f.write(b'{"seq":3,"event":"Epo')  # a crash mid-line
    writer = EventWriter(tmp_path)
    assert writer.set_aside > 0 and writer.write(epoch(2)) == 3
    writer.close()
    assert read_events(tmp_path) == [epoch(0), epoch(1), epoch(2)]


def test_the_tail_deduplicates_by_seq_and_skips_unreadable_lines(tmp_path: Path) -> None:
    tail = EventTail(tmp_path)
    writer = EventWriter(tmp_path)
    writer.write(epoch(0))
    assert [seq for seq, _ in tail.poll()] == [1]
    with (tmp_path / "metrics.jsonl").open("ab") as f:
        f.write(b"not json\n" + json.dumps({"seq": 2, "event": "Nope"}).encode() + b"\n")
    writer.seq = 2
    writer.write(epoch(1))
    assert [seq for seq, _ in tail.poll()] == [3] and tail.skipped == 2
    os.replace(tmp_path / "metrics.jsonl", tmp_path / "old")  # replaced by a copy: nothing is shown twice
    (tmp_path / "metrics.jsonl").write_bytes((tmp_path / "old").read_bytes())
    writer.close()
    assert tail.poll() == []


def test_version_1_streams_without_seq_still_load(tmp_path: Path) -> None:
    from rocmtui.events import event_to_dict

    lines = [json.dumps(event_to_dict(e)) for e in (epoch(0), LogMessage("hi"))]
    (tmp_path / "metrics.jsonl").write_text("\n".join(lines) + "\n")
    assert read_events(tmp_path) == [epoch(0), LogMessage("hi")]
    writer = EventWriter(tmp_path)
    assert writer.write(epoch(1)) == 3
    writer.close()


def test_a_session_writes_status_and_a_killed_writer_reads_as_lost(tmp_path: Path) -> None:
    control = RunControl()
    session = RunSession(tmp_path, control, name="cifar10 simplecnn")
    status = read_status(tmp_path)
    assert status is not None and status.state == "starting" and status.pid == os.getpid()
    assert effective(tmp_path, status).state == "starting"  # the lock is held: live
    session.emit(epoch(0))
    session.emit(RunFinished("completed", 1, 0.4, 0.4, 2.0, 1000.0, None, str(tmp_path)))
    session.close()
    status = read_status(tmp_path)
    assert status is not None and status.state == "finished" and status.best_acc == 0.4
    # a live status whose writer is gone (kill -9 leaves no chance to write) reads as lost
    write_status(tmp_path, replace(status, state="running"), durable=True)
    assert effective(tmp_path, replace(status, state="running")).state == "lost"
    other_host = replace(status, state="running", host="elsewhere", heartbeat=0.0)
    assert effective(tmp_path, other_host).state == "lost"


def test_an_epoch_end_is_fsynced_by_the_sessions_thread_not_the_loops(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The training loop's clock runs while it emits: the epoch end's fsyncs (the stream, status.json) happen on
    the session's thread, promptly; the final event's before ``emit`` returns."""
    synced_on: list[str] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        synced_on.append(threading.current_thread().name)
        real_fsync(fd)

    session = RunSession(tmp_path, RunControl(), name="cifar10 fastnet")
    monkeypatch.setattr(os, "fsync", fsync)
    session.emit(epoch(0))
    assert "MainThread" not in synced_on
    for _ in range(100):
        status = read_status(tmp_path)
        if status is not None and status.epoch == 1:
            break
        threading.Event().wait(0.02)
    assert status is not None and status.epoch == 1, "the epoch reached status.json"
    assert synced_on and set(synced_on) == {"rocmtui-run-session"}
    synced_on.clear()
    session.emit(RunFinished("completed", 1, 0.4, 0.4, 2.0, 1000.0, None, str(tmp_path)))
    assert "MainThread" in synced_on
    session.close()


def test_the_control_channel_is_private_and_reaches_the_run(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        reader = CommandReader(tmp_path)
    finally:
        os.umask(old)
    assert stat.S_IMODE(reader.path.stat().st_mode) == 0o600
    control = RunControl()
    for command in ("pause", "save"):
        send_command(tmp_path, command)
    assert reader.apply(control) == ["pause", "save"]
    assert control.paused and control.take_save_request()
    send_command(tmp_path, "stop")
    reader.apply(control)
    assert control.stop.is_set() and not control.paused
    reader.close()


def test_a_channel_others_could_write_is_refused(tmp_path: Path) -> None:
    reader = CommandReader(tmp_path)
    reader.path.chmod(0o622)
    with pytest.raises(UsageError, match="not a private control channel"):
        send_command(tmp_path, "stop")
    reader.close()


def test_a_finished_run_has_no_channel(tmp_path: Path) -> None:
    with pytest.raises(NotLiveError, match="is not running"):
        send_command(tmp_path, "stop")


def test_run_dirs_lists_newest_first(tmp_path: Path) -> None:
    for name in ("20261201-100000-a", "20261201-110000-b", "not-a-run"):
        (tmp_path / name).mkdir()
    for name in ("20261201-100000-a", "20261201-110000-b"):
        (tmp_path / name / "metrics.jsonl").write_text("")
    assert [p.name for p in run_dirs(tmp_path)] == ["20261201-110000-b", "20261201-100000-a"]
