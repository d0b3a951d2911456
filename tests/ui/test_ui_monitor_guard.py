"""The monitor's guards: --readonly hides the kill keys, unusable settings fall back naming the file, NO_COLOR
drops colour, and rocmtui's own trainer is never offered to the kill dialog."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from textual.filter import Monochrome, NoColor
from ui_helpers import synthetic_gpu_sets

from rocmtui.config import MonitorConfig
from rocmtui.gpu.kill import refusal
from rocmtui.gpu.proc_stats import ProcessStats
from rocmtui.gpu.replay import ManualReplay
from rocmtui.gpu.sample import GpuProcess
from rocmtui.ui.app import create_monitor_app
from rocmtui.ui.screens.help import HelpScreen
from rocmtui.ui.screens.signal_confirm import SignalConfirm
from rocmtui.ui.state.settings import MonitorSettings, load


async def test_readonly_shows_no_kill_key_and_k_does_nothing() -> None:
    source = ManualReplay(synthetic_gpu_sets(1, count=2))
    app = create_monitor_app(MonitorConfig(), source, readonly=True)
    async with app.run_test(size=(120, 40)) as pilot:
        app.monitor_screen.replaying = False  # as if live: only --readonly holds the keys back
        source.step()
        await pilot.pause()
        actions = {binding.action for _, binding, _, _ in app.screen.active_bindings.values()}
        assert not any(action.startswith("signal") for action in actions)
        await pilot.press("k", "K")
        await pilot.pause()
        assert not isinstance(app.screen, SignalConfirm)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen) and all(key != "k / K" for key, _ in app.screen.keys)
    app = create_monitor_app(MonitorConfig(), ManualReplay(synthetic_gpu_sets(1, count=2)))
    async with app.run_test(size=(120, 40)):
        actions = {binding.action for _, binding, _, _ in app.screen.active_bindings.values()}
        assert "signal('TERM')" in actions  # without the flag, the key is there


def test_rocmtuis_own_child_is_refused_but_another_child_is_not() -> None:
    own = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "rocmtui.launch.trainer_process"])
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        stats = ProcessStats()
        assert "rocmtui's own" in (refusal(stats.enrich(GpuProcess(gpu_index=0, pid=own.pid))) or "")
        assert refusal(stats.enrich(GpuProcess(gpu_index=0, pid=other.pid))) is None
    finally:
        for child in (own, other):
            child.kill()
            child.wait()


@pytest.mark.parametrize(
    ("field", "value"),
    [("theme", "no-such-theme"), ("interval_s", 0.0001), ("interval_s", 1e9), ("timebase_s", 7.0), ("graph", "x")],
)
def test_an_unusable_settings_value_names_the_file_and_falls_back(tmp_path: Path, field: str, value: object) -> None:
    path = tmp_path / "monitor.json"
    path.write_text(json.dumps({"sort_by": "PID", field: value}))
    settings, problem = load(path)
    assert problem is not None and str(path) in problem and field in problem and "\n" not in problem
    assert getattr(settings, field) == getattr(MonitorSettings(), field)
    assert settings.sort_by == "PID"  # the usable values are kept


def test_a_hostile_settings_value_is_shown_plain(tmp_path: Path) -> None:
    path = tmp_path / "monitor.json"
    path.write_text(json.dumps({"theme": "\x1b]52;c;eA==\x07[/]"}))
    _, problem = load(path)
    assert problem is not None and "\x1b" not in problem and "\x07" not in problem


async def test_no_color_drops_colour_instead_of_greying_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    sets = synthetic_gpu_sets(1, count=2)
    app = create_monitor_app(MonitorConfig(), ManualReplay([replace(s) for s in sets]))
    assert any(isinstance(f, NoColor) for f in app._filters)
    assert not any(isinstance(f, Monochrome) for f in app._filters)
