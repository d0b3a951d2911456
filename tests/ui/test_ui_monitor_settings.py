"""Monitor settings kept between sessions: saved on change, loaded at start, never fatal when damaged."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from ui_helpers import monitor_sampled, synthetic_gpu_sets

from rocmtui.config import MonitorConfig
from rocmtui.gpu.replay import ManualReplay
from rocmtui.ui.app import create_monitor_app
from rocmtui.ui.state.settings import MonitorSettings, default_path, load, save


def test_saved_settings_load_back(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "monitor.json"
    wanted = MonitorSettings(interval_s=2.0, timebase_s=3600.0, graph="power", theme="nord", sort_by="PID")
    assert save(path, wanted) is None
    assert load(path) == (wanted, None)
    assert [p.name for p in path.parent.iterdir()] == ["monitor.json"]  # no temporary file left behind


def test_settings_saved_before_the_timebase_grew_on_its_own_leave_it_automatic(tmp_path: Path) -> None:
    path = tmp_path / "monitor.json"
    path.write_text('{"timebase_s": 600.0, "sort_by": "PID"}')  # no timebase_fixed: the old default kept
    settings, problem = load(path)
    assert problem is None and not settings.timebase_fixed and settings.sort_by == "PID"


def test_missing_or_damaged_settings_give_the_defaults(tmp_path: Path) -> None:
    assert load(tmp_path / "none.json") == (MonitorSettings(), None)
    damaged = tmp_path / "monitor.json"
    damaged.write_text('{"interval_s": "fast"}')
    settings, problem = load(damaged)
    assert settings == MonitorSettings() and problem is not None and "interval_s" in problem
    assert problem.count("\n") == 0


def test_a_fifo_a_device_link_or_a_huge_file_is_refused_at_once_with_one_line(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)  # no writer: a plain open would block the monitor for ever
    zero = tmp_path / "zero.json"
    zero.symlink_to("/dev/zero")  # a plain read would eat memory until it dies
    huge = tmp_path / "huge.json"
    huge.write_bytes(b" " * (1 << 20) + b"{}")
    dotfile = tmp_path / "dotfiles-monitor.json"
    save(dotfile, MonitorSettings(graph="power"))
    linked = tmp_path / "linked.json"
    linked.symlink_to(dotfile)
    for path, says in ((fifo, "not a regular file"), (zero, "not a regular file"), (huge, "larger than")):
        settings, problem = load(path)
        assert settings == MonitorSettings() and problem is not None and says in problem, problem
        assert "\n" not in problem
    assert load(linked) == (MonitorSettings(graph="power"), None)  # a link of the user's own dotfiles: read


def test_an_unwritable_folder_is_one_line(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    problem = save(blocker / "monitor.json", MonitorSettings())
    assert problem is not None and problem.startswith("settings not saved to")


def test_the_config_folder_follows_xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert default_path() == tmp_path / "rocmtui" / "monitor.json"


async def test_changes_in_the_app_are_saved_and_restored(tmp_path: Path) -> None:
    path = tmp_path / "monitor.json"
    async with monitor_sampled(2, settings_path=path) as (app, pilot):
        await pilot.press("t", "t", "t", "g", "s", "plus", "c")  # auto, then 1 min, 10 min, 1 h fixed
        await pilot.pause()
    saved = json.loads(path.read_text())
    assert saved["timebase_s"] == 3600.0 and saved["timebase_fixed"] and saved["graph"] == "power"
    assert saved["sort_by"] == "GPU%" and saved["interval_s"] == 2.0
    assert saved["theme"] != MonitorConfig.theme

    settings, _ = load(path)
    source = ManualReplay(synthetic_gpu_sets(2))
    app = create_monitor_app(MonitorConfig(theme=settings.theme), source, settings=settings)
    async with app.run_test(size=(120, 40)) as pilot:
        source.step()
        await pilot.pause()
        screen = app.monitor_screen
        assert screen.panel.view.span_s == 3600.0 and screen.panel.view.fixed
        assert screen.panel.view.metrics == ("power", "temp")
        assert screen.processes is not None
        assert screen.processes.sort_by == "GPU%"
        assert app.theme == settings.theme


async def test_a_sort_chosen_by_clicking_a_header_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "monitor.json"
    async with monitor_sampled(2, settings_path=path) as (app, pilot):
        table = app.monitor_screen.processes
        assert table is not None
        await pilot.click(table, offset=(1, 1))  # the header row under the table's top rule: PID, the first column
        await pilot.pause()
        assert table.sort_by == "PID"
    assert json.loads(path.read_text())["sort_by"] == "PID"


def test_a_settings_folder_others_can_write_is_neither_read_nor_written(tmp_path: Path) -> None:
    folder = tmp_path / "rocmtui"
    folder.mkdir(mode=0o700)
    path = folder / "monitor.json"
    assert save(path, MonitorSettings(theme="nord")) is None
    folder.chmod(0o775)  # a group member could have written the file
    settings, problem = load(path)
    assert settings == MonitorSettings() and problem is not None and "\n" not in problem
    assert problem.startswith("settings not read: ") and "writable by its group" in problem
    refused = save(path, MonitorSettings(theme="dracula"))
    assert refused is not None and refused.startswith("settings not saved: ")
    assert json.loads(path.read_text())["theme"] == "nord"


@pytest.mark.parametrize("mask", [0o002, 0o000])
def test_the_settings_folder_is_made_private_whatever_the_umask(tmp_path: Path, mask: int) -> None:
    import os

    old = os.umask(mask)
    try:
        assert save(tmp_path / "config" / "rocmtui" / "monitor.json", MonitorSettings()) is None
    finally:
        os.umask(old)
    for folder in (tmp_path / "config", tmp_path / "config" / "rocmtui"):
        assert folder.stat().st_mode & 0o777 == 0o700
