"""The ``S`` key: the screen as Textual's SVG, in the run folder (a run) or the current folder (the monitor)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from ui_helpers import ReplayTrainer, monitor_sampled, recorded_config

from rocmtui.run.format import SCREENS
from rocmtui.ui.app import MonitorApp
from rocmtui.ui.screenshot import free_name, write_picture
from rocmtui.ui.train_app import TrainApp


def notices(app: MonitorApp) -> list[str]:
    return [notification.message for notification in app._notifications]


def picture_text(path: Path) -> str:
    root = ET.fromstring(path.read_text(encoding="utf-8"))
    return "".join(root.itertext()).replace("\xa0", " ")


async def test_s_saves_the_training_screen_in_the_run_folder(events: Any, host_source: Any, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    app = TrainApp(recorded_config(), ReplayTrainer(events), host_source, run_dir=run_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("S")
        await pilot.pause()
        (picture,) = (run_dir / SCREENS).iterdir()
        assert picture.name.startswith("screen-") and picture.suffix == ".svg"
        assert notices(app) == [f"screen saved: {picture}"]
        assert "best test accuracy" in picture_text(picture)  # what the screen showed: the finished run's card
        await pilot.press("S")
        await pilot.pause()
        assert len(list((run_dir / SCREENS).iterdir())) == 2  # a second picture never replaces the first


async def test_s_saves_the_monitor_in_the_current_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    async with monitor_sampled(1) as (app, pilot):
        await pilot.press("S")
        await pilot.pause()
        (picture,) = tmp_path.glob("screen-*.svg")
        assert notices(app) == [f"screen saved: {picture.resolve()}"]
        assert "synthetic" in picture_text(picture)


def test_a_linked_screens_folder_is_passed_over(tmp_path: Path) -> None:
    run_dir, victim, here = tmp_path / "run", tmp_path / "victim", tmp_path / "here"
    for folder in (run_dir, victim, here):
        folder.mkdir()
    (run_dir / SCREENS).symlink_to(victim)
    path = write_picture("<svg/>", [run_dir / SCREENS, here], now=0.0)
    assert path.parent == here and list(victim.iterdir()) == []


def test_pictures_of_one_second_are_numbered(tmp_path: Path) -> None:
    first = write_picture("<svg/>", [tmp_path], now=1.0)
    second = write_picture("<svg/>", [tmp_path], now=1.0)
    assert second == first.with_name(first.stem + "-2.svg")
    assert free_name(tmp_path, 1.0) == first.with_name(first.stem + "-3.svg")


def test_nowhere_to_write_is_an_error_of_the_last_place(tmp_path: Path) -> None:
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    with pytest.raises(OSError):
        write_picture("<svg/>", [a_file / "screens", a_file])
