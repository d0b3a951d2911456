"""SVG snapshots of the grid of every series (``g``) over the recorded CPU run, held mid-run."""

from __future__ import annotations

import pytest
from test_ui_snapshots import settle, train_app

from rocmtui.ui.screens.grid_screen import GridScreen

pytestmark = pytest.mark.snapshot


def grid_before(keys: tuple[str, ...]):
    app, trainer, source = train_app(hold_at=36)
    before = settle(app, source, trainer.holding)

    async def run_before(pilot) -> None:
        await before(pilot)
        await pilot.press("g", *keys)
        await pilot.pause()
        assert isinstance(app.screen, GridScreen)
        app.screen.replot_now()
        await pilot.pause()

    return app, run_before


def test_grid_at_80x24(snap_compare) -> None:
    """Four cells, the second selected and on a log axis, the accuracy per epoch fitted to its values."""
    app, run_before = grid_before(("right", "l"))
    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


def test_grid_filtered_and_enlarged_at_120x40(snap_compare) -> None:
    """The filter typed (the accuracies), the test accuracy enlarged."""
    app, run_before = grid_before(("slash", *"acc", "enter", "right", "enter"))
    assert snap_compare(app, terminal_size=(120, 40), run_before=run_before)
