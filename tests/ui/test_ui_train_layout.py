"""The training screen's layout at the sizes people use: panels sized by their content, the log as wide as
the room left, plots that get the rows at 80x24, a header that shortens by parts, readable titles; and the
second plot cycling every series of a train run (``n``)."""

from __future__ import annotations

import contextlib
import itertools
from pathlib import Path

import pytest
from rich.text import Text
from textual.color import Color
from textual.pilot import Pilot
from ui_helpers import ReplayTrainer, held, mid_run_events, recorded_config, recorded_events

from rocmtui.events import LogMessage, RunStarted
from rocmtui.gpu.replay import ManualReplay
from rocmtui.ui.screens.finished import SummaryCard
from rocmtui.ui.screens.train import COMPACT_HEIGHT, COMPACT_WIDTH
from rocmtui.ui.state.run_state import ACC_VIEW, RunState
from rocmtui.ui.train_app import TrainApp
from rocmtui.ui.widgets.epoch_table import COLUMNS
from rocmtui.ui.widgets.log_panel import wrap
from rocmtui.ui.widgets.run_info import fitting, run_lines

SIZES = [(80, 24), (120, 40), (200, 50)]
NEVER = 3600.0
PATH = "/home/someone/experiments/cifar/runs/20261201-101500-cifar10-simplecnn/checkpoint-last.pt"
"""A long path, as the log shows one when a run ends."""


def mid_run(
    host_source: ManualReplay, size: tuple[int, int], theme: str | None = None
) -> contextlib.AbstractAsyncContextManager[tuple[TrainApp, Pilot[int]]]:
    """The training screen of the recorded run, held mid-run and drawn: (app, pilot)."""
    return held(mid_run_events(), host_source, size, theme)


def wide(size: tuple[int, int]) -> bool:
    return size[0] >= COMPACT_WIDTH and size[1] >= COMPACT_HEIGHT


@pytest.mark.parametrize("size", SIZES)
async def test_panels_take_the_room_their_content_needs(host_source: ManualReplay, size) -> None:
    async with mid_run(host_source, size) as (app, _pilot):
        screen = app.train_screen
        table, log, plots = screen.table, screen.log_view, (screen.loss_plot, screen.accuracy_plot)
        assert screen.has_class("-compact") != wide(size)
        widths = sum(width for _, width in COLUMNS)
        if wide(size):
            assert table.content_size.width >= widths - 1  # every column, the last one whole
            assert table.region.width < size[0] // 2 + 10  # not more than the table needs...
            assert log.region.x == table.region.right and log.region.right == size[0]  # ...the log the rest
            assert log.content_size.width > 42
        else:
            assert table.region.width == log.region.width == size[0]  # stacked, full width
            others = screen.info.region.height + screen.progress.region.height + screen.gpu_panel.region.height
            others += table.region.height + log.region.height + 1  # and the footer
            for plot in plots:
                assert plot.region.height == size[1] - others  # every row the others leave
                assert plot.region.height > table.region.height + log.region.height
        for plot in plots:
            lines = plot_lines(plot)
            assert lines[0].lstrip(" 0123456789.k%")[:1] in ("┤", "│")  # the first row is data: no frame line over it
            corner = next(i for i, line in enumerate(lines) if "└" in line)
            labels = lines[corner + 2 : corner + 3]  # under the x axis and its ticks (the GPU strip further down)
            assert any("epoch" in line for line in labels) == (plot.content_size.height >= 14)  # x named if room


def plot_lines(plot) -> list[str]:
    rendered = plot.render()
    return rendered.plain.splitlines() if isinstance(rendered, Text) else [str(rendered)]


def test_a_long_line_wraps_at_spaces_and_slashes_under_its_stamp() -> None:
    message = f"[0:01] checkpoint saved: {PATH}"
    assert wrap(message, len(message)) == [message]
    for width in (30, 48, 60):
        lines = wrap(message, width)
        assert all(len(line) <= width for line in lines) and len(lines) > 1
        assert all(line.startswith(" " * len("[0:01] ")) for line in lines[1:])  # under the text, not the stamp
        assert all(line.rstrip().endswith(("/", ":", "-")) for line in lines[:-1])  # a path cut after a slash
        assert " ".join(line.strip() for line in lines).replace("/ ", "/").replace("- ", "-") == message


@pytest.mark.parametrize("size", SIZES)
async def test_the_log_wraps_only_when_it_must(host_source: ManualReplay, size) -> None:
    async with mid_run(host_source, size) as (app, pilot):
        screen = app.train_screen
        screen.apply(LogMessage(f"checkpoint saved: {PATH}"))
        screen.flush_text()
        await pilot.pause()
        width = screen.log_view.content_size.width
        message = screen.log_view.messages[-1]
        shown, expected = plot_lines(screen.log_view), wrap(message, width)
        assert shown[-len(expected) :] == expected[-len(shown) :]  # the newest lines at the bottom
        assert (len(expected) == 1) == (len(message) <= width)
        if size == (200, 50):
            assert len(expected) == 1  # the room beside the table: a path needs no wrapping


def test_the_run_line_shortens_by_parts_never_mid_word() -> None:
    started = recorded_events()[0]
    assert isinstance(started, RunStarted)
    lines = run_lines(started.config, started)
    assert lines[0].endswith(started.run_dir) and len(lines) == len(set(lines))
    assert all(len(a) > len(b) for a, b in itertools.pairwise(lines))  # ever shorter
    for width in (200, 120, 100, 80, 60, 40, 30):
        line = fitting(lines, width)
        assert line in lines and "…" not in line
        assert len(line) <= width or line == lines[-1]
        assert line.startswith(f"{started.dataset} · {started.config.model} · ")
    assert Path(started.run_dir).name in fitting(lines, 78)  # 80 columns: the folder by its name
    assert started.device_name in fitting(lines, 40)


@pytest.mark.parametrize("size", SIZES)
async def test_the_header_fits_the_width(host_source: ManualReplay, size) -> None:
    async with mid_run(host_source, size) as (app, _pilot):
        info = app.train_screen.info
        line = str(info.line.render())
        assert line in info.lines and len(line) <= info.content_size.width


def contrast(a: Color, b: Color) -> float:
    """WCAG contrast ratio of two colours (1 to 21)."""

    def luminance(color: Color) -> float:
        def channel(value: int) -> float:
            c = value / 255
            return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

        return 0.2126 * channel(color.r) + 0.7152 * channel(color.g) + 0.0722 * channel(color.b)

    light, dark = sorted((luminance(a), luminance(b)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


@pytest.mark.parametrize("theme", ["textual-dark", "textual-light"])
async def test_panel_titles_are_readable_on_a_projector(host_source: ManualReplay, theme) -> None:
    async with mid_run(host_source, (120, 40), theme) as (app, _pilot):
        screen = app.train_screen
        for panel in (screen.loss_plot, screen.accuracy_plot, screen.table, screen.log_view):
            styles, background = panel.styles, panel.background_colors[1]
            title = styles.border_title_color
            if title.auto:  # "auto": the text colour that contrasts with the background
                title = background.get_contrast_text(title.a)
            assert styles.border_title_style.bold
            assert contrast(background + title, background) >= 7.0  # WCAG AAA


def test_a_train_run_offers_every_series_it_reports() -> None:
    state = RunState()
    for event in recorded_events():
        state.apply(event)
    scalars = state.scalars
    views = scalars.others()
    assert views[0] == f"group:{ACC_VIEW}" and scalars.x_name == "epoch"
    assert [legend for legend, _ in scalars.members(views[0])] == ["train", "test"]
    assert {"lr", "images_per_s", "epoch:images_per_s", "epoch:epoch_s", "epoch:train_loss", "epoch:test_loss"} <= set(
        views
    )
    assert "loss" not in views  # the loss plot's own
    test_acc = scalars.epochs["test_acc"]
    assert test_acc.view().last == [100.0 * e.test_acc for e in state.epochs]
    assert test_acc.view().x == [float(e.epoch + 1) for e in state.epochs]
    assert len(scalars.steps["lr"]) == sum(1 for e in recorded_events() if type(e).__name__ == "StepsCompleted")


@pytest.mark.parametrize("size", SIZES)
async def test_n_cycles_every_series_of_a_train_run(host_source: ManualReplay, size) -> None:
    async with mid_run(host_source, size) as (app, pilot):
        plot = app.train_screen.accuracy_plot
        views = app.state.scalars.others()
        titles = []
        for _ in views:
            title = Text.from_markup(str(plot.border_title)).plain
            titles.append(title)
            assert "cannot draw" not in plot_lines(plot)[0]
            await pilot.press("n")
        assert titles[0] == f"{ACC_VIEW} ━ train ━ test"  # as it always was: the legend fits a narrow plot
        assert titles[views.index("lr")].startswith(f"lr ({views.index('lr') + 1}/")
        assert titles[views.index("epoch:epoch_s")].startswith("epoch_s per epoch")
        assert Text.from_markup(str(plot.border_title)).plain == titles[0]  # round again


async def test_the_second_plot_follows_each_report_only_when_it_shows_one(host_source: ManualReplay) -> None:
    async with mid_run(host_source, (120, 40)) as (app, pilot):
        screen, plot = app.train_screen, app.train_screen.accuracy_plot
        steps = next(e for e in recorded_events()[36:] if type(e).__name__ == "StepsCompleted")
        screen.apply(steps)
        assert not plot.dirty and not plot.shows_steps  # accuracy changes once per epoch
        while not plot.shows_steps:
            await pilot.press("n")
        screen.apply(steps)
        assert plot.dirty


async def test_the_finished_card_at_80x24_keeps_the_plots_taller_than_it(host_source: ManualReplay) -> None:
    trainer = ReplayTrainer(recorded_events())
    app = TrainApp(recorded_config(), trainer, host_source, plot_period_s=NEVER)
    async with app.run_test(size=(80, 24)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        screen, card = app.train_screen, app.train_screen.query_one(SummaryCard)
        assert card.region.width == 80
        assert "run folder" in "".join(str(card.render()).splitlines()[: card.content_size.height])
        assert screen.loss_plot.region.height >= card.region.height
