"""Comparing runs (``rocmtui watch RUN1 RUN2 ...``): run folders written from the recorded CPU run and the
H200 recording, followed side by side; the curves overlaid, the epoch table switched with ``r``."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import threading
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from rich.text import Text
from textual.pilot import Pilot
from ui_helpers import DATA, HOST_RECORDING, open_grid, recorded_config, recorded_events

from rocmtui.cli.parser import build_parser
from rocmtui.events import Emit, LogMessage, RunControl, TrainEvent
from rocmtui.gpu.tail_source import TailSource
from rocmtui.run.follow import follow
from rocmtui.run.samples import SampleTail
from rocmtui.run.stream import EventWriter
from rocmtui.ui.screens.finished import SummaryCard
from rocmtui.ui.state.compare import run_labels
from rocmtui.ui.train_app import TrainApp

H200_RUN = DATA / "h200-fastnet-run"
SIZES = [(80, 24), (120, 40)]


def cpu_folder(run_dir: Path) -> Path:
    run_dir.mkdir()
    writer = EventWriter(run_dir)
    for event in recorded_events():
        writer.write(event)
    writer.close()
    (run_dir / "gpu.jsonl").write_bytes(HOST_RECORDING.read_bytes())
    return run_dir


def h200_folder(run_dir: Path, lines: int | None = None) -> Path:
    """The H200 run's folder; ``lines``: only the stream's first lines (a run still going)."""
    shutil.copytree(H200_RUN, run_dir)
    if lines is not None:
        kept = (H200_RUN / "metrics.jsonl").read_text().splitlines(keepends=True)[:lines]
        (run_dir / "metrics.jsonl").write_text("".join(kept))
    return run_dir


def compare_app(main: Path, others: list[tuple[str, object]]) -> TrainApp:
    samples = TailSource(SampleTail(main).poll, history_len=3600)
    samples.catch_up()

    def source(config, emit, control) -> object:
        return follow(main, emit, control, poll_s=0.01)

    return TrainApp(recorded_config(), source, samples, detachable=True, compare=others, label="cpu")  # type: ignore[arg-type]


def folder_source(run_dir: Path):
    def source(emit: Emit, control: RunControl) -> object:
        return follow(run_dir, emit, control, poll_s=0.01)

    return source


def whose(screen) -> str:
    """Where the table names its run: its border title, or (compact: no border) its header line."""
    header = str(screen.table.render()).splitlines()[0]
    assert len(header) <= screen.table.content_size.width  # cut, never wrapped
    return header if screen.has_class("-compact") else str(screen.table.border_title)


def drawn(plot) -> str:
    return str(plot.render())


@contextlib.asynccontextmanager
async def two_finished(tmp_path: Path, size: tuple[int, int]) -> AsyncIterator[tuple[TrainApp, Pilot[int]]]:
    """The recorded CPU run (``cpu``, the main one) compared with the H200 run (``h200``), both read to the end."""
    main = cpu_folder(tmp_path / "cpu")
    app = compare_app(main, [("h200", folder_source(h200_folder(tmp_path / "h200")))])
    async with app.run_test(size=size) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        yield app, pilot


@pytest.mark.parametrize("size", SIZES)
async def test_two_finished_runs_overlay_and_the_table_switches(tmp_path: Path, size) -> None:
    async with two_finished(tmp_path, size) as (app, pilot):
        screen = app.train_screen
        main_run, other = screen.runs
        assert main_run.state is app.state and app.state.phase == "finished"
        assert other.state.finished is not None and other.state.finished.best_test_acc == 0.9357
        assert len(other.state.epochs) == 10 and len(other.state.loss) > 0
        screen.replot_now()
        await pilot.pause()
        for plot in (screen.loss_plot, screen.accuracy_plot):
            assert "━ cpu" in shown(plot) and "━ h200" in shown(plot)
        assert "cannot draw" not in drawn(screen.loss_plot) and "cannot draw" not in drawn(screen.accuracy_plot)
        card = screen.query_one(SummaryCard)
        assert card.region.height > 0 and not screen.table.display  # finished: the summary first
        assert app.screen.active_bindings["r"].enabled

        await pilot.press("r")  # the card steps aside: the main run's epochs
        assert screen.table.region.height > 0 and card.region.height == 0
        assert screen.table.row_count == 3 and "cpu (1/2" in whose(screen)
        await pilot.press("r")
        assert screen.table.row_count == 10 and "h200 (2/2" in whose(screen)
        assert str(screen.table.render()).splitlines()[-1].startswith(("*", " "))  # the newest rows drawn
        await pilot.press("r")  # round again: the summary
        assert card.region.height > 0 and screen.table.region.height == 0
        await pilot.press("q")
    assert app.return_value == 0


@pytest.mark.parametrize("size", SIZES)
async def test_a_live_run_beside_a_finished_one_is_followed_and_never_commanded(tmp_path: Path, size) -> None:
    other_dir = h200_folder(tmp_path / "live", lines=12)  # header and 11 events: mid-run, no final event
    (other_dir / "control").write_bytes(b"")
    (other_dir / "control").chmod(0o600)
    events: list[TrainEvent] = []
    caught_up, returned = threading.Event(), threading.Event()

    def live(emit: Emit, control: RunControl) -> object:
        def counting(event: TrainEvent) -> None:
            emit(event)
            events.append(event)
            if len(events) == 11:
                caught_up.set()

        try:
            return follow(other_dir, counting, control, writer_alive=lambda: True, poll_s=0.01)
        finally:
            returned.set()

    app = compare_app(cpu_folder(tmp_path / "cpu"), [("live", live)])
    async with app.run_test(size=size) as pilot:
        assert await asyncio.to_thread(caught_up.wait, 10)
        await pilot.pause()
        other = app.train_screen.runs[1].state
        assert other.running and other.epochs and len(other.epochs) < 10
        assert other.last_steps is not None and len(other.loss) > 0
        await pilot.press("p")  # pause belongs to the main run (finished here): nothing reaches the other
        await pilot.press("q")
    assert app.return_value == 0
    assert returned.wait(5)  # leaving the app ends the other run's follower
    assert (other_dir / "control").read_bytes() == b""


async def test_one_run_offers_no_run_switch(tmp_path: Path) -> None:
    app = compare_app(cpu_folder(tmp_path / "cpu"), [])
    async with app.run_test(size=(120, 40)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert not app.train_screen.comparing
        assert "r" not in app.screen.active_bindings
        assert app.train_screen.table.border_title == "Epochs"
        assert app.train_screen.loss_plot.border_title.startswith("Loss ")  # type: ignore[union-attr]
        await pilot.press("q")


def test_labels_drop_the_stamp_and_stay_apart() -> None:
    assert run_labels(["runs/20261201-101500-cifar10-fastnet", "runs/20261202-090000-cifar10-simplecnn"]) == [
        "cifar10-fastnet",
        "cifar10-simplecnn",
    ]
    same = run_labels(["r/20261201-101500-cifar10-fastnet", "r/20261202-090000-cifar10-fastnet"])
    assert same == ["101500-c…0-fastnet", "090000-c…0-fastnet"]  # the same recipe: the time tells them apart
    cut = run_labels(["r/20261201-101500-imagenet-resnet50-long-name-2"])[0]
    assert len(cut) == 18 and cut.endswith("name-2") and "…" in cut


def test_watch_takes_several_runs() -> None:
    args = build_parser().parse_args(["watch", "runs/a", "runs/b", "runs/c"])
    assert args.run == ["runs/a", "runs/b", "runs/c"]
    assert build_parser().parse_args(["watch"]).run == []


def tracked_folder(runs: Path, name: str, scale: float) -> Path:
    import rocmtui

    with rocmtui.track(name, runs_dir=runs) as run:
        for step in range(1, 301):
            run.log(step=step, loss=scale / step**0.5)
    return run.run_dir


@pytest.mark.parametrize("size", SIZES)
async def test_two_tracked_runs_are_both_drawn_and_named(tmp_path: Path, size) -> None:
    first = tracked_folder(tmp_path / "runs", "lr-1e-3", 2.0)
    second = tracked_folder(tmp_path / "runs", "lr-3e-3", 1.0)
    labels = run_labels([first, second])
    samples = TailSource(SampleTail(first).poll)

    def source(config, emit, control) -> object:
        return follow(first, emit, control, poll_s=0.01)

    app = TrainApp(
        recorded_config(),
        source,
        samples,
        detachable=True,
        compare=[(labels[1], folder_source(second))],
        label=labels[0],
    )
    async with app.run_test(size=size) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        screen = app.train_screen
        main_run, other = screen.runs
        assert len(main_run.state.scalars.steps["loss"]) == 300 and len(other.state.scalars.steps["loss"]) == 300
        screen.replot_now()
        await pilot.pause()
        title = str(screen.loss_plot.border_title)
        assert f"━ {labels[0]}" in title and f"━ {labels[1]}" in title, title
        assert "cannot draw" not in drawn(screen.loss_plot)
        await pilot.press("q")


def shown(plot) -> str:
    """What a plot shows of its title (Textual cuts a title wider than the border, 2 columns less) and its
    picture."""
    title = Text.from_markup(str(plot.border_title)).plain
    room = plot.size.width - 2
    return (title if len(title) <= room else title[: room - 1]) + "\n" + str(plot.render())


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("names", [["h200-fastnet-run", "cpu-ddp-run"], ["h200-fastnet-run", "cpu-ddp-run", "h200-2"]])
async def test_every_compared_run_is_named_whole_on_both_plots(tmp_path: Path, size, names: list[str]) -> None:
    sources = {"h200-fastnet-run": H200_RUN, "cpu-ddp-run": DATA / "cpu-ddp-run", "h200-2": H200_RUN}
    folders = [tmp_path / name for name in names]
    for name, folder in zip(names, folders, strict=True):
        shutil.copytree(sources[name], folder)
    labels = run_labels(folders)
    samples = TailSource(SampleTail(folders[0]).poll)

    def source(config, emit, control) -> object:
        return follow(folders[0], emit, control, poll_s=0.01)

    others = [(label, folder_source(folder)) for label, folder in zip(labels[1:], folders[1:], strict=True)]
    app = TrainApp(recorded_config(), source, samples, detachable=True, compare=others, label=labels[0])
    async with app.run_test(size=size) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        screen = app.train_screen
        screen.replot_now()
        await pilot.pause()
        for plot in (screen.loss_plot, screen.accuracy_plot):
            assert all(label in shown(plot) for label in labels), shown(plot)
            assert "cannot draw" not in str(plot.render())
            assert max(len(line) for line in str(plot.render()).splitlines()) <= plot.size.width
        await pilot.press("c")  # the cursor: each run's value at it, in the title, none cut
        for plot in (screen.loss_plot, screen.accuracy_plot):
            title = Text.from_markup(str(plot.border_title)).plain
            assert title.count("━") == len(labels) and len(title) <= plot.size.width - 2, title
            assert all(label in shown(plot) for label in labels), shown(plot)
        await pilot.press("q")


@pytest.mark.parametrize("size", SIZES)
async def test_the_grid_overlays_every_compared_run_in_its_colour(tmp_path: Path, size) -> None:
    async with two_finished(tmp_path, size) as (app, pilot):
        grid = await open_grid(app, pilot)
        cells = [cell for cell in grid.cells if cell.key is not None]
        assert cells
        for cell in cells:
            assert "cpu" in shown(cell) and "h200" in shown(cell), shown(cell)
            assert "cannot draw" not in str(cell.render())
        loss = cells[0]
        assert loss.key == "loss"
        lines = [loss.lines(run.state) for run in app.train_screen.runs]
        assert all(drawn.lines and drawn.lines[0][0] for drawn in lines)  # each run has its line of the loss
        picture = loss.render()
        assert isinstance(picture, Text)
        braille = [str(s.style) for s in picture.spans if any("⠀" <= c <= "⣿" for c in picture.plain[s.start : s.end])]
        assert any("color(14)" in style for style in braille)  # the main run's cyan+
        assert any("color(3)" in style for style in braille)  # the second run's orange
        await pilot.press("q")


@pytest.mark.parametrize("size", SIZES)
async def test_d_shows_the_settings_that_differ_between_the_runs(tmp_path: Path, size) -> None:
    from rocmtui.ui.screens.config_diff_screen import ConfigDiffScreen

    async with two_finished(tmp_path, size) as (app, pilot):
        assert app.screen.active_bindings["d"].enabled
        await pilot.press("d")
        await pilot.pause()
        assert isinstance(app.screen, ConfigDiffScreen)
        lines = [line.text for line in app.screen.query_one("VerticalScroll Static").render_lines(app.screen.region)]
        shown_text = "\n".join(lines)
        assert "cpu" in shown_text and "h200" in shown_text
        model = next(line for line in lines if line.strip().startswith("model"))
        assert "simplecnn" in model and "fastnet" in model
        assert not any(line.strip().startswith(("seed ", "dataset ")) for line in lines)  # the same in both
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, ConfigDiffScreen)
        await pilot.press("q")


async def test_one_run_offers_no_differences(tmp_path: Path) -> None:
    app = compare_app(cpu_folder(tmp_path / "cpu"), [])
    async with app.run_test(size=(80, 24)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert "d" not in app.screen.active_bindings
        await pilot.press("q")


async def test_a_compared_run_read_at_once_waits_a_few_events_ahead_of_the_ui(tmp_path: Path) -> None:
    """A compared run's history is bounded as the main run's is: its source waits while EMIT_AHEAD of its
    events are unapplied, and every event is applied in the end."""
    from rocmtui.ui.train_app import EMIT_AHEAD

    events: list[TrainEvent] = [LogMessage(f"line {n}") for n in range(4 * EMIT_AHEAD)] + recorded_events()
    ahead: list[int] = []
    applied: list[int] = []

    def other(emit: Emit, control: RunControl) -> object:
        for n, event in enumerate(events, start=1):
            emit(event)
            ahead.append(n - len(applied))
        return None

    app = compare_app(cpu_folder(tmp_path / "main"), [("other", other)])
    original = app.train_screen.apply_other

    def counting(index: int, event: TrainEvent) -> None:
        original(index, event)
        applied.append(index)

    app.train_screen.apply_other = counting  # type: ignore[method-assign]
    async with app.run_test(size=(120, 40)) as pilot:
        for _ in range(200):
            if len(applied) == len(events):
                break
            await pilot.pause(0.02)
        assert len(applied) == len(events)
        await pilot.press("q")
    assert len(ahead) == len(events) and max(ahead) <= EMIT_AHEAD
