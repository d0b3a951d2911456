"""The monitor on one host without a GPU (the host's busiest processes in the process table) and a replay that
says it is a recording, and of when."""

from __future__ import annotations

import importlib
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from ui_helpers import recorded_config

from rocmtui.config import MonitorConfig
from rocmtui.gpu.replay import ManualReplay, ReplaySource
from rocmtui.gpu.sampler import Sampler
from rocmtui.gpu.tail_source import TailSource
from rocmtui.run.follow import follow
from rocmtui.run.samples import SampleTail
from rocmtui.ui import app as app_module
from rocmtui.ui.app import create_monitor_app
from rocmtui.ui.screens.signal_confirm import SignalConfirm
from rocmtui.ui.train_app import TrainApp

DATA = Path(__file__).resolve().parent / "data"
H200_RECORDING = DATA / "monitor-h200-nvml.jsonl"
"""A real capture: ``rocmtui monitor --json --count 30`` on one NVIDIA H200, 2026-12-01 07:42:39 to 07:43:08 UTC."""
H200_RUN = Path(__file__).resolve().parents[1] / "data" / "h200-fastnet-run"
"""A real run folder recorded on an H200; its ``gpu.jsonl`` runs from 07:18:28 to 07:18:40 UTC, 2026-12-01."""
cli_main = importlib.import_module("rocmtui.cli.main")
MARKER = "host-table-probe-7f3a"
"""In the child's command line, so that the test finds it (no "rocmtui" in it: rocmtui's own are refused)."""


@pytest.fixture
def utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Local time is UTC for the test (the status line says local times)."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


async def until(pilot: Pilot[Any], condition: Callable[[], object], what: str, timeout: float = 30.0) -> None:
    """Let the app run until ``condition()`` holds; fail after ``timeout`` seconds, naming ``what``."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out after {timeout:g} s waiting for {what}"
        await pilot.pause(0.05)


@pytest.mark.slow
async def test_without_a_gpu_the_table_lists_host_processes_to_sort_find_and_kill() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", MARKER])
    sampler = Sampler(None, interval_s=0.2, host_processes=10_000)  # every process: the child is surely listed
    app = create_monitor_app(MonitorConfig(), sampler)
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            screen = app.monitor_screen

            def listed_pids() -> list[int]:
                return [p.pid for p in screen.processes.listed] if screen.processes is not None else []

            await until(pilot, lambda: child.pid in listed_pids(), "the child in the table")
            table = screen.processes
            assert table is not None and table.display and table.host
            labels = [str(c.key.value) for c in table.columns.values()]
            assert labels == ["PID", "user", "CPU%", "host mem", "elapsed", "command"]  # no GPU columns
            assert table.sort_by == "CPU%" and table.sort_reverse  # the busiest first
            row = table.get_row_at(listed_pids().index(child.pid))
            assert row[0] == str(child.pid) and MARKER in str(row[-1])

            await pilot.press("s")  # the next of the host's columns, largest first
            assert table.sort_by == "host mem"
            memory = [p.host_memory_bytes or -1 for p in table.listed]
            assert memory == sorted(memory, reverse=True)

            await pilot.press("slash", *[("minus" if c == "-" else c) for c in MARKER], "enter")
            await until(pilot, lambda: listed_pids() == [child.pid], "the filter to leave the child alone")
            assert table.has_focus and table.selected is not None and table.selected.pid == child.pid

            await pilot.press("k")
            assert isinstance(app.screen, SignalConfirm)
            await pilot.press("n")
            assert child.poll() is None  # not signalled on "no"
            await pilot.press("k", "y")
            assert child.wait(timeout=10) == -signal.SIGTERM
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


async def test_a_replay_says_it_is_a_recording_and_of_when(utc: None) -> None:
    source = ManualReplay(ReplaySource.from_jsonl(H200_RECORDING).samples)
    app = create_monitor_app(MonitorConfig(), source, recording=True)
    async with app.run_test(size=(120, 40)) as pilot:
        source.step()
        await pilot.pause()
        status = str(app.monitor_screen.status.render())
        assert "recording of 2026-12-01 07:42 to 07:43" in status and "every" not in status
        await pilot.press("minus")  # a faster replay is still the same recording
        assert "recording of 2026-12-01 07:42 to 07:43" in str(app.monitor_screen.status.render())


async def test_the_live_monitor_still_says_its_interval() -> None:
    source = ManualReplay(ReplaySource.from_jsonl(H200_RECORDING).samples, interval_s=0.5)
    app = create_monitor_app(MonitorConfig(), source)
    async with app.run_test(size=(120, 40)) as pilot:
        source.step()
        await pilot.pause()
        assert "every 0.5 s" in str(app.monitor_screen.status.render())


def test_monitor_replay_starts_the_app_as_a_recording(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """``rocmtui monitor --replay FILE``: the app is told that its source is a recording."""
    given: dict[str, Any] = {}

    def fake_run(config: MonitorConfig, sampler: object, **options: Any) -> int:
        given.update(options, sampler=sampler)
        return 0

    monkeypatch.setattr(cli_main, "can_draw", lambda: True)
    monkeypatch.setattr(app_module, "run_monitor_app", fake_run)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert cli_main.main(["monitor", "--replay", str(H200_RECORDING)]) == 0
    assert given["recording"] is True and isinstance(given["sampler"], ReplaySource)


async def test_m_on_a_finished_run_shows_its_recorded_samples_as_a_recording(utc: None, tmp_path: Path) -> None:
    import shutil

    run_dir = tmp_path / "run"
    shutil.copytree(H200_RUN, run_dir)
    samples = TailSource(SampleTail(run_dir).poll, history_len=3600)
    samples.catch_up()

    def source(config: object, emit: Any, control: Any) -> object:
        return follow(run_dir, emit, control, poll_s=0.01)

    app = TrainApp(recorded_config(), source, samples, detachable=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.state.finished is not None
        await pilot.press("m")
        await pilot.pause()
        status = str(app.monitor_screen.status.render())
        assert "recording of 2026-12-01 07:18:28 to 07:18:40" in status and "every" not in status


def test_recording_words_give_the_date_again_only_when_the_day_changed(utc: None) -> None:
    from rocmtui.ui.screens.monitor import recording_words

    day = 1796110959.0  # 2026-12-01 07:42:39 UTC
    assert recording_words(day, day + 1800) == "recording of 2026-12-01 07:42 to 08:12"
    assert recording_words(day, day + 20) == "recording of 2026-12-01 07:42:39 to 07:42:59"
    assert recording_words(day, day + 86400) == "recording of 2026-12-01 07:42 to 2026-12-02 07:42"
