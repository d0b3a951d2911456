"""The plots' cursor and x axis: keys and the mouse over the real H200 run (its GPU samples recorded by its
trainer) and the recorded CPU run beside it; each series' value at the cursor, the times and the GPU there."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest
from rich.text import Text
from ui_helpers import DATA, recorded_config

from rocmtui.gpu.tail_source import TailSource
from rocmtui.run.follow import follow
from rocmtui.run.samples import SampleTail
from rocmtui.ui.state.gpu_track import GpuTrack
from rocmtui.ui.train_app import TrainApp
from rocmtui.ui.widgets.cursor_readout import value_text
from rocmtui.ui.widgets.gpu_strip import NO_SAMPLES, blocks, strip_lines

H200_RUN = DATA / "h200-fastnet-run"
SIZE = (80, 24)


def watch_app(run_dir: Path) -> TrainApp:
    samples = TailSource(SampleTail(run_dir).poll, history_len=3600)
    samples.catch_up()

    def source(config, emit, control) -> object:
        return follow(run_dir, emit, control, poll_s=0.01)

    return TrainApp(recorded_config(), source, samples, detachable=True)


@pytest.fixture
def h200_dir(tmp_path: Path) -> Path:
    return Path(shutil.copytree(H200_RUN, tmp_path / "h200"))


def shows(plot, name: str, value: float, smoothed: float | None = None) -> bool:
    """The plot's title gives ``name``'s value (and its smoothed one), to 4 significant digits or, where the
    title is short of room, 3."""
    title = str(plot.border_title)
    for digits in (4, 3):
        tail = f"~{value_text(smoothed, digits)}" if smoothed is not None else ""
        if f"━{name} {value_text(value, digits)}{tail}" in title:
            return True
    return False


async def settled(app: TrainApp, pilot) -> None:
    await app.workers.wait_for_complete()
    await pilot.pause()
    app.train_screen.replot_now()
    await pilot.pause()


def under_loss(app: TrainApp) -> list[str]:
    """The loss plot's last lines: the GPU strip and, with the cursor shown, its readout."""
    rendered = app.train_screen.loss_plot.render()
    assert isinstance(rendered, Text)
    return rendered.plain.splitlines()[-3:]


async def test_keys_move_a_cursor_that_reads_each_series_and_hides(h200_dir: Path) -> None:
    app = watch_app(h200_dir)
    async with app.run_test(size=SIZE) as pilot:
        await settled(app, pilot)
        screen, state = app.train_screen, app.state
        loss, acc = screen.loss_plot, screen.accuracy_plot
        legend = str(loss.border_title)
        assert screen.cursor.view.cursor is None and "EMA 0.98" in legend
        await pilot.press("left")  # shows it at the newest point first
        assert screen.cursor.view.cursor == pytest.approx(10.0)
        last = state.loss.at(10.0, 0.98)
        assert last is not None and last.smoothed is not None
        assert shows(loss, "loss", last.value, last.smoothed)
        assert shows(acc, "test", 100 * state.epochs[-1].test_acc)
        # at 80 columns the short form: the x, the run's clock and the GPU (the sample recorded at the run's end)
        assert under_loss(app)[-1] == "ep 10.00 · +3.3s · GPU 78% 3.0 GiB"

        await pilot.press("left")
        span = loss.column_span
        assert screen.cursor.view.cursor == pytest.approx(10.0 - span)
        await pilot.press("shift+left")
        assert screen.cursor.view.cursor == pytest.approx(10.0 - 11 * span)
        await pilot.press("pagedown")
        assert screen.cursor.view.cursor == pytest.approx(10.0 - span)
        await pilot.press("home")
        assert screen.cursor.view.cursor == pytest.approx(loss.canvas.x_low)
        first = loss.canvas.x_low  # the first point drawn: 490 steps in 80 columns of braille, 7 steps a point
        assert 0 < first < 0.2 and under_loss(app)[-1].startswith(f"ep {first:.2f} · +0")
        await pilot.press("end")
        assert screen.cursor.view.cursor == pytest.approx(10.0)
        await pilot.press("escape")
        assert screen.cursor.view.cursor is None and str(loss.border_title) == legend
        assert not any(line.startswith("ep ") for line in under_loss(app))
        await pilot.press("c")
        assert screen.cursor.view.cursor == pytest.approx(10.0)
        await pilot.press("c")
        assert screen.cursor.view.cursor is None


async def test_home_end_and_pages_stay_the_epoch_tables_while_no_cursor_is_shown(h200_dir: Path) -> None:
    app = watch_app(h200_dir)
    async with app.run_test(size=(120, 40)) as pilot:
        await settled(app, pilot)
        screen = app.train_screen
        screen.table.focus()
        await pilot.press("home")
        assert screen.table.top == 0 and screen.cursor.view.cursor is None
        await pilot.press("end")
        assert screen.table.following
        await pilot.press("c", "home")
        assert screen.table.following and screen.cursor.view.cursor == pytest.approx(screen.loss_plot.canvas.x_low)


async def test_a_click_puts_the_cursor_under_the_mouse_and_the_mouse_moves_it(h200_dir: Path) -> None:
    app = watch_app(h200_dir)
    async with app.run_test(size=SIZE) as pilot:
        await settled(app, pilot)
        screen, loss = app.train_screen, app.train_screen.loss_plot
        column = loss.plot_left + 10
        assert await pilot.click("#loss-plot", offset=(column, 2))
        await pilot.pause()
        expected = loss.axis_x_at(column)
        assert expected is not None and screen.cursor.view.cursor == pytest.approx(expected)
        assert 2.0 < expected < 3.5
        assert await pilot.hover("#accuracy-plot", offset=(screen.accuracy_plot.plot_left + 20, 2))
        await pilot.pause()
        moved = screen.accuracy_plot.axis_x_at(screen.accuracy_plot.plot_left + 20)
        assert moved is not None and screen.cursor.view.cursor == pytest.approx(moved)  # the same x on both
        await pilot.press("escape")
        assert await pilot.hover("#loss-plot", offset=(column, 3))
        await pilot.pause()
        assert screen.cursor.view.cursor is None  # a hidden cursor stays hidden: the plots follow the run


async def test_x_cycles_step_time_and_wall_clock_with_the_cursor_on_the_same_point(h200_dir: Path) -> None:
    app = watch_app(h200_dir)
    async with app.run_test(size=SIZE) as pilot:
        await settled(app, pilot)
        screen, loss = app.train_screen, app.train_screen.loss_plot
        timeline = app.state.timeline
        await pilot.press("c", "home", *["right"] * 12)
        native = screen.cursor.view.cursor
        assert native is not None
        readout = under_loss(app)[-1]
        await pilot.press("x")
        await pilot.pause()
        assert screen.cursor.view.mode == "time"
        assert loss.canvas.x_range is not None and loss.canvas.x_range[0] == pytest.approx(0.0)
        assert loss.canvas.x_high == pytest.approx(timeline.at(10.0, "elapsed"))
        assert screen.cursor.view.cursor == pytest.approx(timeline.at(native, "elapsed"))
        assert under_loss(app)[-1] == readout  # the same point of the run, read the same
        await pilot.press("x")
        await pilot.pause()
        assert screen.cursor.view.mode == "wall"
        assert loss.canvas.x_high == pytest.approx(timeline.at(10.0, "wall"))
        assert under_loss(app)[-1] == readout
        await pilot.press("left")  # moves over the wall clock's range, not the one drawn before
        assert screen.cursor.view.cursor == pytest.approx(timeline.at(native, "wall") - loss.column_span)
        await pilot.press("x")
        assert screen.cursor.view.mode == "step"


async def test_the_gpu_strip_lines_up_the_runs_samples_or_says_there_are_none(h200_dir: Path, tmp_path) -> None:
    app = watch_app(h200_dir)
    async with app.run_test(size=SIZE) as pilot:
        await settled(app, pilot)
        strip = next(line for line in under_loss(app) if line.startswith("gpu "))
        loss = app.train_screen.loss_plot
        cells = strip[loss.plot_left :].rstrip()
        assert set(cells) <= set("▁▂▃▄▅▆▇█") and len(cells) >= 30  # the whole 3 s run, not 1 to 3 columns
        assert cells[-1] == "▆"  # 78%: the last sample of the run
        await pilot.press("c", "home")
        for _ in range(len(cells) - 1):  # the readout's GPU is the strip's column under the cursor, all along
            cursor = app.train_screen.cursor.view.cursor
            assert cursor is not None
            column = loss.plot_left + int((cursor - loss.canvas.x_range[0]) / loss.column_span)  # type: ignore[index]
            moment = loss.gpu_at_cursor(cursor)
            assert moment is not None and moment.util_pct is not None
            assert strip[column] == blocks([moment.util_pct]) and f"GPU {moment.util_pct:.0f}%" in under_loss(app)[-1]
            await pilot.press("right")
    empty = tmp_path / "no-gpu"
    shutil.copytree(H200_RUN, empty)
    (empty / "gpu.jsonl").write_bytes(b"")
    app = watch_app(empty)
    async with app.run_test(size=SIZE) as pilot:
        await settled(app, pilot)
        assert any(line.strip() == NO_SAMPLES for line in under_loss(app))


def test_a_run_that_ended_before_any_point_is_drawn_has_an_empty_strip_not_an_error() -> None:
    """A run that failed at its first step: the plot's x range exists, nothing is drawn on it (-inf)."""
    lines = strip_lines(GpuTrack(), float, axis=(0.0, 1.02), drawn_to=-float("inf"), left=4, width=40, rows=2)
    assert [line.plain.strip() for line in lines] == [NO_SAMPLES]


async def test_comparing_runs_the_cursor_reads_each_run_at_its_own_point(h200_dir: Path, tmp_path: Path) -> None:
    from test_ui_compare import compare_app, cpu_folder, folder_source

    app = compare_app(cpu_folder(tmp_path / "cpu"), [("h200", folder_source(h200_dir))])
    async with app.run_test(size=SIZE) as pilot:
        await settled(app, pilot)
        screen = app.train_screen
        cpu, h200 = (run.state for run in screen.runs)
        await pilot.press("c", "home", *["right"] * 5)
        x = screen.cursor.view.cursor
        assert x is not None and 0 < x < 3
        for name, state in (("cpu", cpu), ("h200", h200)):
            point = state.loss.at(x, 0.98)
            assert point is not None and shows(screen.loss_plot, name, point.value)
        h200_acc = h200.scalars.epochs["test_acc"].at(x)
        assert h200_acc is not None and shows(screen.accuracy_plot, "h200", h200_acc.value)
        await pilot.press("x")  # on the time axis each run is read at its own step at that time
        await pilot.pause()
        seconds = screen.cursor.view.cursor
        assert seconds is not None
        for name, state in (("cpu", cpu), ("h200", h200)):
            native = state.timeline.x_at(seconds, "elapsed")
            point = state.loss.at(native or 0.0, 0.98)
            assert point is not None and shows(screen.loss_plot, name, point.value)
        assert cpu.timeline.x_at(seconds, "elapsed") != pytest.approx(h200.timeline.x_at(seconds, "elapsed"))


async def test_a_wide_readout_names_the_step_the_memory_share_and_the_wall_clock(h200_dir: Path) -> None:
    app = watch_app(h200_dir)
    async with app.run_test(size=(200, 50)) as pilot:
        await settled(app, pilot)
        await pilot.press("end", "c")
        wall = app.state.timeline.at(10.0, "wall")
        assert wall is not None
        clock = time.strftime("%H:%M:%S", time.localtime(wall))
        assert under_loss(app)[-1] == f"ep 10.00 step 490 · +3.3s · GPU 78% mem 3.0 GiB 2% · {clock}"


def test_a_series_name_is_drawn_as_text_in_the_cursors_title() -> None:
    """Metric names come from outside: one with markup in it shows as written, not as a style."""
    from textual.content import Content

    from rocmtui.base.series import Series
    from rocmtui.ui.widgets.cursor_readout import Reading, title_markup

    series = Series()
    series.add(1.0, 0.5)
    markup = title_markup([Reading("[bold red]loss[/]", "ansi_bright_cyan", series, 1.0)])
    assert Content.from_markup(markup).plain == "━[bold red]loss[/] 0.5"
