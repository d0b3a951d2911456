"""SVG snapshots of two runs compared (the recorded CPU run and the H200 recording), both finished."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_ui_compare import compare_app, cpu_folder, folder_source, h200_folder

pytestmark = pytest.mark.snapshot


@pytest.mark.parametrize("size", [(80, 24), (120, 40), (200, 50)])
def test_compare_two_runs_with_the_second_runs_epochs(snap_compare, tmp_path: Path, size) -> None:
    app = compare_app(cpu_folder(tmp_path / "cpu"), [("h200-fastnet", folder_source(h200_folder(tmp_path / "h200")))])

    async def run_before(pilot) -> None:
        await app.workers.wait_for_complete()
        await pilot.pause()
        app.train_screen.replot_now()
        await pilot.press("r", "r")  # past the summary card and the main run's epochs
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=run_before)
