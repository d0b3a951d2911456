"""The grid of every series (``g``): which series, pages, selection, the filter typed, the enlarged cell, a log
axis per plot, y ranges fitted to the data, and a run of hundreds of series costing only the cells shown."""

from __future__ import annotations

import itertools
import math
from typing import Any

import pytest
from rich.text import Text
from ui_helpers import held, mid_run_events, open_grid, recorded_events, script_events

from rocmtui.base.series import Series
from rocmtui.events import MetricsLogged
from rocmtui.gpu.replay import ManualReplay
from rocmtui.ui.look.y_range import PERCENT, accuracy_bounds, fitted_range, log_range
from rocmtui.ui.state.grid import GridState, NameFilter, key_label, series_keys
from rocmtui.ui.state.run_state import RunState
from rocmtui.ui.widgets.series_cell import cell_lines


def title(cell: Any) -> str:
    return Text.from_markup(str(cell.border_title)).plain


def drawn(cell: Any) -> str:
    rendered = cell.render()
    return rendered.plain if isinstance(rendered, Text) else str(rendered)


# -- what is shown, and where -------------------------------------------------------------------------------------
def test_every_series_of_a_train_run_once_the_loss_first() -> None:
    state = RunState()
    for event in recorded_events():
        state.apply(event)
    keys = series_keys(state.scalars)
    assert keys[0] == "loss" and len(keys) == len(set(keys))
    assert set(keys) == set(state.scalars.steps) | {f"epoch:{name}" for name in state.scalars.epochs}
    assert key_label("epoch:test_acc") == "test_acc per epoch" and key_label("lr") == "lr"


def test_the_filter_is_a_regex_in_any_case_or_text_when_it_is_not_one() -> None:
    assert NameFilter.of("ACC$").matches("test_acc") and not NameFilter.of("ACC$").matches("acc_top5")
    assert NameFilter.of("^(lr|loss)").matches("loss") and not NameFilter.of("^(lr|loss)").matches("val_loss")
    broken = NameFilter.of("acc(")
    assert broken.error is not None and "\n" not in broken.error
    assert broken.matches("top_ACC(5)") and not broken.matches("test_acc")  # searched as the text it is
    assert NameFilter.of("").error is None and NameFilter.of("").matches("anything")


def test_pages_and_moves_keep_the_selection_by_key() -> None:
    grid, keys = GridState(), [f"s{i}" for i in range(11)]
    grid.fit(80, 22)
    assert grid.shape == (2, 2) and grid.page(keys) == keys[:4] and grid.page_number(keys) == (1, 3)
    grid.move(keys, 1, 1)  # right and down: the fourth
    assert grid.selected == "s3"
    grid.move(keys, 0, 1)  # down past the page's edge: the next page
    assert grid.selected == "s5" and grid.page(keys) == keys[4:8]
    grid.turn_page(keys, 5)
    assert grid.selected == "s10" and grid.page_number(keys) == (3, 3)  # clamped at the last
    assert "s10" in grid.page(["new", *keys])  # a series appearing before it does not move the selection
    grid.fit(200, 48)
    assert grid.shape == (5, 5)


def test_y_ranges_fit_the_data_with_a_margin_inside_what_the_series_can_take() -> None:
    assert fitted_range(90.0, 95.0, PERCENT) == pytest.approx((89.75, 95.25))
    assert fitted_range(96.0, 99.9, PERCENT)[1] == 100.0  # never past 100%
    assert fitted_range(2.0, 2.0) == pytest.approx((1.8, 2.2))  # a constant: a span around it
    assert fitted_range(0.0, 0.0, PERCENT) == (0.0, 1.0)
    assert fitted_range(0.05, 2.0)[0] == 0.0 and fitted_range(-2.0, -0.05)[1] == 0.0  # no margin across zero
    assert fitted_range(-1.0, 1.0) == pytest.approx((-1.1, 1.1))
    assert accuracy_bounds("val_acc", 0.2, 0.9) == (0.0, 1.0) and accuracy_bounds("Acc", 20, 90) == PERCENT
    assert accuracy_bounds("loss", 0.2, 0.9) is None and accuracy_bounds("acc_delta", -1.0, 3.0) is None
    low, high = log_range(0.01, 100.0)
    assert low < -2 and high > 2


def test_a_log_axis_leaves_out_values_at_or_below_zero_and_counts_them() -> None:
    series = Series((0.9,))
    for x, value in enumerate([-1.0, 0.0, 0.5, 2.0, 8.0]):
        series.add(float(x), value)
    lines = cell_lines(series.view(weight=0.9), per_epoch=True, log_scale=True)
    assert lines.lines == (([2.0, 3.0, 4.0], [0.5, 2.0, 8.0]),) and lines.left_out == 2
    assert lines.span == (0.5, 8.0)
    assert cell_lines(series.view(weight=0.9), per_epoch=True, log_scale=False).span == (-1.0, 8.0)


# -- keys ---------------------------------------------------------------------------------------------------------
async def test_g_shows_every_series_arrows_select_and_enter_enlarges(host_source: ManualReplay) -> None:
    async with held(mid_run_events(), host_source) as (app, pilot):
        grid = await open_grid(app, pilot)
        keys = series_keys(app.state.scalars)
        assert [cell.key for cell in grid.cells] == keys[:4]
        assert [title(cell).split()[0] for cell in grid.cells] == [key_label(key).split()[0] for key in keys[:4]]
        assert all("cannot draw" not in drawn(cell) and "┤" in drawn(cell) for cell in grid.cells)
        assert str(grid.status.render()).startswith(f"{len(keys)} series · page 1/")
        assert grid.cells[0].has_class("-selected")
        await pilot.press("right", "down")
        assert grid.cells[3].has_class("-selected") and not grid.cells[0].has_class("-selected")
        await pilot.press("down")
        assert [cell.key for cell in grid.cells][:1] == keys[4:5] and "page 2/" in str(grid.status.render())
        await pilot.press("enter")
        await pilot.pause()
        cell = grid.cells[0]
        assert len(grid.cells) == 1 and cell.key == keys[5] and cell.region.width == 80  # the selection, enlarged
        await pilot.press("right")
        assert grid.cells[0].key == keys[6]  # enlarged, the arrows step through the series
        await pilot.press("escape")
        await pilot.pause()
        assert len(grid.cells) == 4 and keys[6] in [cell.key for cell in grid.cells]
        await pilot.press("escape")
        assert app.screen is app.train_screen


async def test_l_puts_only_the_selected_plot_on_a_log_axis(host_source: ManualReplay) -> None:
    async with held(mid_run_events(), host_source) as (app, pilot):
        grid = await open_grid(app, pilot)
        await pilot.press("right", "l")
        assert [("(log)" in title(cell)) for cell in grid.cells] == [False, True, False, False]
        assert "cannot draw" not in drawn(grid.cells[1])
        await pilot.press("escape")
        again = await open_grid(app, pilot)  # kept from one visit to the next
        assert again is not grid and "(log)" in title(again.cells[1])
        await pilot.press("l")
        assert not any("(log" in title(cell) for cell in again.cells)


async def test_a_log_axis_over_values_below_zero_says_so_and_draws(host_source: ManualReplay) -> None:
    async with held(script_events(["loss", "delta"]), host_source) as (app, pilot):
        grid = await open_grid(app, pilot)
        await pilot.press("right", "l")
        cell = grid.cells[1]
        assert cell.key == "delta" and "≤ 0 left out)" in title(cell) and "cannot draw" not in drawn(cell)


async def test_typing_a_filter_narrows_the_grid_and_a_bad_regex_is_one_line(host_source: ManualReplay) -> None:
    async with held(mid_run_events(), host_source) as (app, pilot):
        grid = await open_grid(app, pilot)
        await pilot.press("slash", *"ACC", "enter")
        await pilot.pause()
        assert [cell.key for cell in grid.cells if cell.display] == ["epoch:train_acc", "epoch:test_acc"]
        assert "2 of " in str(grid.status.render()) and app.focused is None
        await pilot.press("slash", "backspace", "backspace", "backspace", *"loss|lr")
        assert {cell.key for cell in grid.cells if cell.display} == {
            "loss",
            "lr",
            "epoch:train_loss",
            "epoch:test_loss",
        }
        await pilot.press(*"(")
        status = str(grid.status.render())
        assert "not a regular expression" in status and "\n" not in status
        assert not any(cell.display for cell in grid.cells)  # no name has "loss|lr(" in it
        await pilot.press("escape")  # clears the filter
        assert len([cell for cell in grid.cells if cell.display]) == 4 and grid.grid.name_filter.text == ""
        await pilot.press("escape")
        assert app.screen is app.train_screen


async def test_hundreds_of_series_cost_only_the_cells_on_screen(host_source: ManualReplay) -> None:
    names = ["loss", *(f"layer{i:03d}/grad_norm" for i in range(199))]
    async with held(script_events(names), host_source) as (app, pilot):
        grid = await open_grid(app, pilot)
        assert len(grid.cells) == 4 and "200 series · page 1/50" in str(grid.status.render())
        drawn_before = [cell.replots for cell in grid.cells]
        grid.frame()  # nothing new: nothing redrawn
        assert [cell.replots for cell in grid.cells] == drawn_before
        app.train_screen.apply(MetricsLogged(21, {"loss": 0.5, "layer000/grad_norm": 2.0}, 2.0))
        grid.frame()
        assert [cell.replots - before for cell, before in zip(grid.cells, drawn_before, strict=True)] == [1, 1, 0, 0]
        assert title(grid.cells[0]) == "loss 0.5"
        await pilot.press("slash", *"layer19")
        assert "9 of 200" in str(grid.status.render())  # layer190 to layer198


async def test_names_are_drawn_as_text_never_markup(host_source: ManualReplay) -> None:
    async with held(script_events(["loss", "[bold]x[/] [@click=app.quit]q"]), host_source) as (app, pilot):
        grid = await open_grid(app, pilot)
        assert title(grid.cells[1]).startswith("[bold]x[/] [@click=app.quit]q ")


def label_value(label: str) -> float:
    """A tick's label as a number (``6k``: 6000)."""
    scale = {"k": 1e3, "M": 1e6, "G": 1e9}.get(label[-1:], 1.0)
    return float(label[:-1] if scale != 1.0 else label) * scale


def y_labels(cell: Any) -> list[float]:
    """The values written left of the cell's y axis, top first."""
    return [label_value(line.split("┤")[0].strip()) for line in drawn(cell).split("\n") if "┤" in line]


def round_steps(values: list[float]) -> bool:
    """Evenly spaced, each a multiple of 1, 2 or 5 times a power of ten at least half the spacing (a short
    axis shows every other tick of a round step)."""
    steps = [a - b for a, b in itertools.pairwise(values)]
    if not steps or not all(math.isclose(step, steps[0], rel_tol=1e-6) for step in steps):
        return False
    power = 10 ** math.floor(math.log10(steps[0] / 2))
    rounds = [m * power for m in (1, 2, 5, 10, 20, 50) if m * power >= steps[0] / 2 * (1 - 1e-9)]
    return any(all(math.isclose(v / r, round(v / r), abs_tol=1e-6) for v in values) for r in rounds)


async def test_cells_tick_y_at_round_values_and_decades_on_a_log_axis(host_source: ManualReplay) -> None:
    async with held(mid_run_events(), host_source, (120, 40)) as (app, pilot):
        grid = await open_grid(app, pilot)
        for cell in [cell for cell in grid.cells if cell.key is not None]:
            labels = y_labels(cell)
            assert len(labels) >= 2 and round_steps(labels), (cell.key, labels)
        await pilot.press("l")  # the loss, on a log axis: decades, 1-2-5 values, or round ones within a decade
        grid.replot_now()
        labels = y_labels(grid.cells[0])
        mantissas = {round(v / 10 ** math.floor(math.log10(v)), 6) for v in labels}
        assert len(labels) >= 2 and (mantissas <= {1.0, 2.0, 5.0} or round_steps(labels)), labels


async def test_z_zooms_and_brackets_smooth_every_cell(host_source: ManualReplay) -> None:
    async with held(mid_run_events(), host_source, size=(120, 40)) as (app, pilot):
        grid = await open_grid(app, pilot)
        whole = [cell.canvas.x_range for cell in grid.cells if cell.key is not None]
        await pilot.press("z", "z")  # the last epoch
        grid.redraw()
        await pilot.pause()
        cells = [cell for cell in grid.cells if cell.key is not None]
        assert cells and all(cell.zoom.epochs == 1.0 for cell in cells)
        for cell, before in zip(cells, whole, strict=True):
            assert cell.canvas.x_range is not None and before is not None
            assert cell.canvas.x_range[0] > before[0]  # the newest epoch only
        smoothing = cells[0].smoothing
        await pilot.press("left_square_bracket")
        assert all(cell.smoothing < smoothing for cell in cells)
        await pilot.press("escape")
        again = await open_grid(app, pilot)  # kept from one visit to the next
        assert all(cell.zoom.epochs == 1.0 for cell in again.cells if cell.key is not None)
