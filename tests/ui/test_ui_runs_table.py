"""The runs table (``rocmtui runs`` on a terminal) over runs of both kinds: the sort, the filter typed, tags and a
note kept in the run's folder, the differences, the runs chosen for ``watch``, and a live run never deleted."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from run_folders import both_kinds, hold_live

from rocmtui.run.format import read_notes
from rocmtui.run.run_table import load_rows
from rocmtui.ui.runs_table import DeleteConfirm, RunsTableApp, SettingsDiff

SIZE = (120, 40)


@pytest.fixture
def utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Start times shown in UTC, whatever the machine's zone."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.fixture
def runs(tmp_path: Path, utc: None) -> dict[str, Path]:
    return both_kinds(tmp_path / "runs")


def table_app(runs: dict[str, Path]) -> RunsTableApp:
    return RunsTableApp(load_rows(runs["mlp"].parent), Path("runs"))


def column_of(app: RunsTableApp, label: str) -> int:
    return next(n for n, column in enumerate(app.columns) if column.label == label)


def shown_names(app: RunsTableApp) -> list[str]:
    return [row.folder.name for row in app.shown]


async def test_s_sorts_by_the_column_under_the_cursor_and_again_the_other_way(runs: dict[str, Path]) -> None:
    app = table_app(runs)
    async with app.run_test(size=SIZE) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        app.table.move_cursor(column=column_of(app, "lr"))
        await pilot.press("s")
        assert shown_names(app) == [runs[k].name for k in ("wide", "small-lr", "mlp", "big-lr")]
        await pilot.press("s")
        assert shown_names(app) == [runs[k].name for k in ("big-lr", "mlp", "small-lr", "wide")]
        assert "sort: lr ↓" in str(app.status.render())
        app.table.move_cursor(column=column_of(app, "best test_acc"))
        await pilot.press("s")
        assert shown_names(app)[:2] == [runs["small-lr"].name, runs["big-lr"].name]  # scripts have none: last


async def test_slash_filters_with_the_command_lines_syntax_and_a_bad_one_is_one_line(runs: dict[str, Path]) -> None:
    app = table_app(runs)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("slash")
        await pilot.press(*"kind=script lr<1e-3", "enter")
        assert shown_names(app) == [runs["wide"].name]
        assert "1 of 4 runs" in str(app.status.render())
        await pilot.press("slash", "ctrl+u")
        await pilot.press(*"lr>", "enter")
        assert "no value after" in str(app.status.render()) and shown_names(app) == [runs["wide"].name]


async def test_tags_and_a_note_typed_are_kept_in_the_runs_folder(runs: dict[str, Path]) -> None:
    app = table_app(runs)
    async with app.run_test(size=SIZE) as pilot:
        at = shown_names(app).index(runs["mlp"].name)
        app.table.move_cursor(row=at)
        await pilot.press("t", *"baseline sweep", "enter")
        await pilot.press("n", *"lr from the sweep", "enter")
        assert "saved in" in str(app.status.render())
        assert app.cell_at(at, column_of(app, "tags")) == "baseline sweep"
    assert read_notes(runs["mlp"]).tags == ("baseline", "sweep")
    assert read_notes(runs["mlp"]).note == "lr from the sweep"
    again = table_app(runs)  # read back by the next table
    async with again.run_test(size=SIZE) as pilot:
        await pilot.press("slash", *"tags=sweep", "enter")
        assert shown_names(again) == [runs["mlp"].name]


async def test_space_selects_enter_returns_them_and_d_shows_their_differences(runs: dict[str, Path]) -> None:
    app = table_app(runs)
    async with app.run_test(size=SIZE) as pilot:
        names = shown_names(app)
        for name in (runs["mlp"].name, runs["wide"].name):
            app.table.move_cursor(row=names.index(name))
            await pilot.press("space")
        await pilot.press("d")
        assert isinstance(app.screen, SettingsDiff)
        await pilot.press("escape")
        await pilot.press("enter")
    assert app.return_value == [runs["wide"], runs["mlp"]]


async def test_x_never_deletes_a_live_run_and_asks_before_deleting_another(runs: dict[str, Path]) -> None:
    lock = hold_live(runs["mlp"])
    try:
        app = table_app(runs)
        async with app.run_test(size=SIZE) as pilot:
            app.table.move_cursor(row=shown_names(app).index(runs["mlp"].name))
            await pilot.press("x")
            assert not isinstance(app.screen, DeleteConfirm)
            assert "never deleted" in str(app.status.render())
            app.table.move_cursor(row=shown_names(app).index(runs["wide"].name))
            await pilot.press("x")
            assert isinstance(app.screen, DeleteConfirm)
            await pilot.press("n")
            assert runs["wide"].is_dir()
            await pilot.press("x", "y")
            await pilot.pause()
            assert not runs["wide"].exists() and runs["wide"].name not in shown_names(app)
        assert runs["mlp"].is_dir()
    finally:
        lock.release()


@pytest.mark.snapshot
@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
def test_runs_table_snapshot(snap_compare, runs: dict[str, Path], size: tuple[int, int]) -> None:
    lock = hold_live(runs["mlp"])
    try:
        app = table_app(runs)

        async def run_before(pilot) -> None:
            await app.workers.wait_for_complete()
            await pilot.pause()

        assert snap_compare(app, terminal_size=size, run_before=run_before)
    finally:
        lock.release()
