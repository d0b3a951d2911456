"""A run's end or failure: the bell and OSC 9 / OSC 777 notifications, their text plain and bounded, and off."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

import pytest
from textual.worker import WorkerCancelled
from ui_helpers import ReplayTrainer, recorded_config

from rocmtui.events import RunFailed, RunFinished
from rocmtui.ui.notify import NOTICE_LIMIT, notice_text, terminal_bytes
from rocmtui.ui.state import settings as saved
from rocmtui.ui.state.settings import NOTIFY_ENV, notify_wanted
from rocmtui.ui.train_app import TrainApp

FINISHED = RunFinished("completed", 10, 0.9357, 0.9357, 3.44, 145_822.0, None, "runs/x")
FAILED = RunFailed("CUDA out of memory", "error", step=12)


def test_the_bytes_of_an_end() -> None:
    text = notice_text(FINISHED, "cifar10 fastnet")
    assert text == "cifar10 fastnet: completed, best test accuracy 93.57%, 3.44s of training"
    assert terminal_bytes(text, web=False) == (f"\x07\x1b]9;rocmtui: {text}\x07\x1b]777;notify;rocmtui;{text}\x07")


def test_the_bytes_of_a_failure_and_under_serve_the_bell_alone() -> None:
    text = notice_text(FAILED, "sweep")
    assert text == "sweep: failed (error): CUDA out of memory"
    assert terminal_bytes(text, web=False) == f"\x07\x1b]9;rocmtui: {text}\x07\x1b]777;notify;rocmtui;{text}\x07"
    assert terminal_bytes(text, web=True) == "\x07"


@pytest.mark.parametrize(
    "hostile",
    [
        "\x07\x1b]52;c;cHduZWQ=\x07",  # BEL ends the OSC, then a clipboard write
        "x\x1b\\\x1b]0;title\x1b\\",  # ST (ESC backslash) ends it
        "x\x9c\x9d52;c;eA==\x9c",  # the 8-bit ST and OSC
        "one\ntwo\rthree\x00four\x7f",
        "evil\u202etxt",
        "a" * 10_000,
    ],
)
def test_hostile_names_and_messages_cannot_leave_the_sequence(hostile: str) -> None:
    failed = RunFailed(f"boom {hostile}", "error")
    out = terminal_bytes(notice_text(failed, hostile), web=False)
    assert out.count("\x1b") == 2 and out.count("\x07") == 3  # two sequences' own ESC, the bell and two BELs
    assert out.startswith("\x07\x1b]9;rocmtui: ") and "\x07\x1b]777;notify;rocmtui;" in out and out.endswith("\x07")
    body = out[len("\x07\x1b]9;rocmtui: ") : out.index("\x07", 1)]
    assert len(body) <= NOTICE_LIMIT
    assert not any(ord(ch) < 0x20 or 0x7F <= ord(ch) < 0xA0 or ch == "\u202e" for ch in body)


async def run_to_the_end(app: TrainApp, monkeypatch: pytest.MonkeyPatch, *, quit_first: bool = False) -> list[str]:
    """What the app writes to the terminal itself while the recorded run ends."""
    written: list[str] = []
    monkeypatch.setattr(app, "write_to_terminal", written.append)
    async with app.run_test(size=(80, 24)) as pilot:
        if quit_first:
            trainer = app.source
            assert isinstance(trainer, ReplayTrainer)
            assert await asyncio.to_thread(trainer.holding.wait, 10.0)
            app.quitting = True  # the user asked to stop: no word needed for what they did
            trainer.release.set()
        with contextlib.suppress(WorkerCancelled):  # a quitting app exits at the run's end
            await app.workers.wait_for_complete()
        await pilot.pause()
    return written


class Driver:
    """Stands in for Textual's terminal driver: records what is written (``App.bell`` writes the same way)."""

    is_headless = False

    def __init__(self) -> None:
        self.written: list[str] = []

    def write(self, data: str) -> None:
        self.written.append(data)


def test_terminal_bytes_go_through_the_driver(events: Any, host_source: Any) -> None:
    app = TrainApp(recorded_config(), ReplayTrainer(events), host_source, notify=True)
    driver = Driver()
    app._driver = driver  # type: ignore[assignment]
    app.write_to_terminal("\x07")
    app.bell()
    assert driver.written == ["\x07", "\x07"]
    app._driver = None


async def test_the_app_writes_the_notice_through_its_driver_once(
    events: Any, host_source: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = TrainApp(recorded_config(), ReplayTrainer(events), host_source, notify=True)
    (notice,) = await run_to_the_end(app, monkeypatch)
    assert notice.startswith("\x07\x1b]9;rocmtui: cifar10 simplecnn: completed, best test accuracy")


async def test_no_notice_when_off_or_when_the_user_ended_the_run(
    events: Any, host_source: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    off = TrainApp(recorded_config(), ReplayTrainer(events), host_source, notify=False)
    assert await run_to_the_end(off, monkeypatch) == []
    held = ReplayTrainer(events, hold_at=len(events) - 1)  # parked before its final event
    quitting = TrainApp(recorded_config(), held, host_source, notify=True)
    assert await run_to_the_end(quitting, monkeypatch, quit_first=True) == []


def test_the_flag_the_environment_and_the_setting_turn_it_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    settings_file = tmp_path / "monitor.json"
    monkeypatch.setattr(saved, "default_path", lambda: settings_file)
    monkeypatch.delenv(NOTIFY_ENV, raising=False)
    assert notify_wanted(False)
    assert not notify_wanted(True)
    monkeypatch.setenv(NOTIFY_ENV, "0")
    assert not notify_wanted(False)
    monkeypatch.setenv(NOTIFY_ENV, "1")
    assert saved.save(settings_file, saved.MonitorSettings(notify=False)) is None
    assert not notify_wanted(False)
    settings_file.write_text('{"notify": "yes"}')  # a damaged file: the defaults, notifications on
    assert notify_wanted(False)
