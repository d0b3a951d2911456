"""Run folders that someone else may have written: links, FIFOs, devices, wrong types, huge files.

Each reader refuses what is not a regular file in well under a second and never follows a link; a bad file
makes its run ``unreadable`` (or one line, exit 2) and never breaks the listing of the others. Real FIFOs
and real symbolic links throughout.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable
from pathlib import Path

import msgspec
import pytest

from rocmtui.base.files import UnsafeFileError, read_small
from rocmtui.cli.main import main
from rocmtui.events import LogMessage, RunControl, RunFinished, RunStarted, TrainEvent
from rocmtui.run import format as fmt
from rocmtui.run.follow import follow
from rocmtui.run.listing import list_runs
from rocmtui.run.lock import RunLock
from rocmtui.run.session import RunSession
from rocmtui.run.stream import EventTail, EventWriter, read_events

FINISHED = RunFinished("completed", 1, 0.5, 0.5, 1.0, 10.0, None, "x")
VICTIM = b"precious\n"


def finished_run(runs: Path, name: str) -> Path:
    run_dir = runs / name
    run_dir.mkdir(parents=True)
    session = RunSession(run_dir, RunControl(), name=name)
    session.emit(LogMessage("hello"))
    session.emit(FINISHED)
    session.close()
    return run_dir


def fifo(path: Path) -> None:
    path.unlink(missing_ok=True)
    os.mkfifo(path)


def link_to_victim(path: Path, victim: Path) -> None:
    path.unlink(missing_ok=True)
    victim.write_bytes(VICTIM)
    path.symlink_to(victim)


def folder_in_place(path: Path, _victim: Path) -> None:
    path.unlink()
    path.mkdir()


def device_link_in_place(path: Path, _victim: Path) -> None:
    path.unlink()
    path.symlink_to("/dev/zero")


def within(seconds: float, call: Callable[[], object]) -> object:
    """Run ``call`` on a thread; fail if it has not returned after ``seconds`` (it would hang for ever)."""
    box: list[object] = []
    errors: list[BaseException] = []

    def target() -> None:
        try:
            box.append(call())
        except BaseException as err:
            errors.append(err)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still blocked after {seconds} s"
    if errors:
        raise errors[0]
    return box[0]


BAD_STATUS: dict[str, Callable[[Path, Path], object]] = {
    "a JSON array": lambda p, _v: p.write_bytes(b"[]\n"),
    "wrong types": lambda p, _v: p.write_bytes(b'{"pid": "one", "host": 3, "state": "running"}'),
    "an unknown state": lambda p, _v: p.write_bytes(
        b'{"pid": 1, "host": "h", "state": "exploded", "started_at": 0, "heartbeat": 0}'
    ),
    "not JSON": lambda p, _v: p.write_bytes(b"\x00\xff garbage"),
    "empty": lambda p, _v: p.write_bytes(b""),
    "2 MiB": lambda p, _v: p.write_bytes(b" " * (2 << 20)),
    "a FIFO": lambda p, _v: fifo(p),
    "a link": link_to_victim,
    "a folder": folder_in_place,
    "a device": device_link_in_place,
}


@pytest.mark.parametrize("kind", list(BAD_STATUS))
def test_a_bad_status_lists_the_run_as_unreadable_and_the_others_still(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = tmp_path / "runs"
    good = finished_run(runs, "20260101-000000-good")
    bad = finished_run(runs, "20260102-000000-bad")
    BAD_STATUS[kind](bad / fmt.STATUS, tmp_path / "victim")
    listed = within(5, lambda: {Path(info.folder).name: info for info in list_runs(runs)})
    assert isinstance(listed, dict)
    assert listed[good.name].state == "finished"
    assert listed[bad.name].state == "unreadable" and listed[bad.name].problem
    assert within(5, lambda: main(["runs", "--runs-dir", str(runs)])) == 0
    out = capsys.readouterr().out
    assert "unreadable" in out and good.name in out
    if (tmp_path / "victim").exists():
        assert (tmp_path / "victim").read_bytes() == VICTIM


@pytest.mark.parametrize("kind", ["a FIFO", "a link", "wrong types", "2 MiB"])
def test_a_bad_config_or_summary_never_breaks_the_listing(kind: str, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    run_dir = finished_run(runs, "20260101-000000-run")
    (run_dir / fmt.STATUS).unlink()  # the listing falls back to summary.json, then config.json
    for name in (fmt.SUMMARY, fmt.CONFIG):
        (run_dir / name).write_bytes(b"{}")
        BAD_STATUS[kind](run_dir / name, tmp_path / f"victim-{name}")
    listed = within(5, lambda: list_runs(runs))
    assert isinstance(listed, list) and [info.state for info in listed] == ["unknown"]


def test_stop_on_a_run_with_an_unreadable_status_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = tmp_path / "runs"
    run_dir = finished_run(runs, "20260101-000000-run")
    (run_dir / fmt.STATUS).write_bytes(b"[]")
    assert main(["stop", str(run_dir)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "not running" in err


@pytest.mark.parametrize("make", [fifo, lambda p: link_to_victim(p, p.parent.parent / "victim")], ids=["fifo", "link"])
def test_a_stream_that_is_not_a_regular_file_is_refused_at_once(make: Callable[[Path], None], tmp_path: Path) -> None:
    run_dir = finished_run(tmp_path / "runs", "run")
    make(run_dir / fmt.EVENTS)
    start = time.monotonic()
    with pytest.raises(UnsafeFileError, match=r"metrics\.jsonl is (not a regular file|a symbolic link)"):
        within(5, lambda: read_events(run_dir))
    with pytest.raises(UnsafeFileError):
        within(5, lambda: follow(run_dir, lambda _e: None, RunControl(), writer_alive=lambda: True))
    assert time.monotonic() - start < 2


def test_a_resume_never_writes_through_a_linked_lock_or_stream(tmp_path: Path) -> None:
    run_dir = finished_run(tmp_path / "runs", "run")
    for name in (fmt.LOCK, fmt.EVENTS):
        victim = tmp_path / f"victim-{name}"
        link_to_victim(run_dir / name, victim)
        with pytest.raises(UnsafeFileError, match="symbolic link"):
            RunSession(run_dir, RunControl(), name="again")
        assert victim.read_bytes() == VICTIM
        (run_dir / name).unlink()
        (run_dir / name).write_bytes(b"")


def test_a_linked_lock_refuses_a_train_resume_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = finished_run(tmp_path / "runs", "run")
    victim = tmp_path / "victim"
    link_to_victim(run_dir / fmt.LOCK, victim)
    with pytest.raises(UnsafeFileError):
        RunLock.acquire(run_dir)
    assert victim.read_bytes() == VICTIM


def test_a_control_file_replaced_by_a_fifo_keeps_the_heartbeat(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    session = RunSession(run_dir, RunControl(), name="beating")
    try:
        fifo(run_dir / fmt.CONTROL)
        first = session.status.heartbeat
        deadline = time.monotonic() + 10
        while session.status.heartbeat == first and time.monotonic() < deadline:
            time.sleep(0.05)
        assert session.status.heartbeat > first, "the heartbeat stopped"
    finally:
        session.close()


def test_send_command_refuses_a_fifo_or_a_link_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / fmt.EVENTS).write_bytes(fmt.encode_header())
    for make in (fifo, lambda p: link_to_victim(p, tmp_path / "victim")):
        make(run_dir / fmt.CONTROL)
        code = within(5, lambda: main(["stop", "--no-wait", str(run_dir)]))
        assert code == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and "control channel" in err
    assert (tmp_path / "victim").read_bytes() == VICTIM


def test_a_small_file_reader_caps_the_size(tmp_path: Path) -> None:
    path = tmp_path / "big"
    path.write_bytes(b"x" * 100)
    assert read_small(path, 100) == b"x" * 100
    with pytest.raises(UnsafeFileError, match="larger than 99 bytes"):
        read_small(path, 99)


def test_a_stream_without_newlines_does_not_grow_the_reader(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    writer = EventWriter(run_dir)
    writer.write(LogMessage("before"))
    writer.close()
    tail = EventTail(run_dir)
    assert len(tail.poll()) == 1
    with (run_dir / fmt.EVENTS).open("ab") as f:
        for _ in range(3):  # 3 MiB without a newline, appended between polls
            f.write(b"y" * (1 << 20))
            f.flush()
            tail.poll()
        f.write(b"\n" + fmt.encode_event_line(3, 1.0, LogMessage("after")))
    events = tail.poll()
    assert [e.message for _, e in events if isinstance(e, LogMessage)] == ["after"]
    assert tail.skipped == 1


def test_follow_says_how_many_lines_it_skipped(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    good = fmt.encode_header() + fmt.encode_event_line(1, 1.0, LogMessage("a"))
    (run_dir / fmt.EVENTS).write_bytes(good + b"[]\n{oops\n" + fmt.encode_event_line(4, 2.0, FINISHED))
    seen: list[object] = []
    final = within(5, lambda: follow(run_dir, seen.append, RunControl(), writer_alive=lambda: True))
    assert final == FINISHED
    warnings = [e.message for e in seen if isinstance(e, LogMessage) and e.level == "warning"]
    assert warnings == ["2 unreadable line(s) of metrics.jsonl skipped"]


@pytest.mark.parametrize("make", [fifo, lambda p: link_to_victim(p, p.parent.parent / "victim")], ids=["fifo", "link"])
def test_a_card_goes_without_gpu_samples_that_are_not_a_regular_file(
    make: Callable[[Path], None], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = finished_run(tmp_path / "runs", "run")
    (run_dir / fmt.GPU).write_bytes(b"")
    make(run_dir / fmt.GPU)
    out = tmp_path / "card.svg"
    assert within(5, lambda: main(["runs", str(run_dir), "--card", str(out)])) == 0
    assert "no GPU samples in the run folder" in out.read_text()
    assert "run card of" in capsys.readouterr().out


@pytest.mark.parametrize("make", [fifo, lambda p: link_to_victim(p, p.parent.parent / "victim")], ids=["fifo", "link"])
def test_a_card_of_a_stream_that_is_not_a_regular_file_is_one_line(
    make: Callable[[Path], None], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = finished_run(tmp_path / "runs", "run")
    make(run_dir / fmt.EVENTS)
    out = tmp_path / "card.svg"
    assert within(5, lambda: main(["runs", str(run_dir), "--card", str(out)])) == 2
    err = capsys.readouterr().err
    assert re.search(r"metrics\.jsonl is (not a regular file|a symbolic link)|is not a run folder", err)
    assert err.count("\n") == 1
    assert not out.exists()


def test_follow_reads_a_long_history_in_parts_and_an_end_a_resume_follows_stays_history(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rocmtui.run import lines as line_reading

    monkeypatch.setattr(line_reading, "READ_MAX", 4096)
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    stopped = msgspec.structs.replace(FINISHED, reason="stopped")
    recorded = Path(__file__).resolve().parents[1] / "data" / "recorded-run.jsonl"
    lines = recorded.read_bytes().splitlines()
    started = next(e for e in map(fmt.decode_event, lines) if isinstance(e, RunStarted))
    events: list[TrainEvent] = [LogMessage(f"line {n:04d}") for n in range(200)]
    events += [stopped, *[LogMessage(f"more {n:04d}") for n in range(100)], started, FINISHED]
    stream = fmt.encode_header() + b"".join(fmt.encode_event_line(n + 1, 1.0, e) for n, e in enumerate(events))
    assert len(stream) > 6 * 4096
    (run_dir / fmt.EVENTS).write_bytes(stream)
    seen: list[TrainEvent] = []
    final = within(5, lambda: follow(run_dir, seen.append, RunControl(), writer_alive=lambda: True))
    assert final == FINISHED and len(seen) == len(events)
    assert seen[200] == LogMessage("the run stopped; resumed later")
