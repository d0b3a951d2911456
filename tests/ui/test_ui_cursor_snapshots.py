"""SVG snapshots of the cursor at 80x24: the H200 run with its GPU strip, and two runs compared on the time axis.

The readout names the wall clock: the local time zone is set to UTC for the picture.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_ui_compare import compare_app, cpu_folder, folder_source, h200_folder
from test_ui_cursor import H200_RUN, watch_app

pytestmark = pytest.mark.snapshot


@pytest.fixture(autouse=True)
def utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_cursor_on_the_h200_run_with_its_gpu_strip(snap_compare, tmp_path: Path) -> None:
    app = watch_app(Path(shutil.copytree(H200_RUN, tmp_path / "h200")))

    async def run_before(pilot) -> None:
        await app.workers.wait_for_complete()
        await pilot.pause()
        app.train_screen.replot_now()
        await pilot.press("c", "home", *["right"] * 8)
        await pilot.pause()

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


def test_cursor_over_two_runs_on_the_time_axis(snap_compare, tmp_path: Path) -> None:
    app = compare_app(cpu_folder(tmp_path / "cpu"), [("h200", folder_source(h200_folder(tmp_path / "h200")))])

    async def run_before(pilot) -> None:
        await app.workers.wait_for_complete()
        await pilot.pause()
        app.train_screen.replot_now()
        await pilot.press("x", "c", "home", "shift+right")
        await pilot.pause()

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)
