"""The runs table's data and ``rocmtui runs --filter``: the filter's syntax, the sort, the settings that differ,
the tags and note round trip, and deleting that refuses a live run."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from run_folders import both_kinds, hold_live

from rocmtui.base.errors import UsageError
from rocmtui.cli.main import main
from rocmtui.run.format import NOTES, RunNotes, read_notes, write_notes
from rocmtui.run.run_filter import parse_filter
from rocmtui.run.run_table import delete_run, differing_settings, fold_metrics, load_rows, select, sort_rows


@pytest.fixture
def runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Path]]:
    monkeypatch.setenv("TZ", "UTC")  # start times in UTC, whatever the machine's zone
    time.tzset()
    yield both_kinds(tmp_path / "runs")
    monkeypatch.undo()
    time.tzset()


def names(rows) -> list[str]:
    return [row.folder.name for row in rows]


def test_the_filter_reads_fields_settings_and_series(runs: dict[str, Path]) -> None:
    rows = [fold_metrics(row) for row in load_rows(runs["mlp"].parent)]

    def matching(text: str) -> set[Path]:
        return {row.folder for row in select(rows, parse_filter(text))}

    assert matching("state=finished lr>1e-3 name~mlp") == {runs["mlp"]}
    assert matching("lr>=1e-3") == {runs["small-lr"], runs["big-lr"], runs["mlp"]}
    assert matching("kind=script width<100") == {runs["mlp"]}
    assert matching("best.test_acc>0.45") == {runs["big-lr"]}
    assert matching("best.loss<1.0") == {runs["wide"]}
    assert matching("kind=script last.loss>1.25") == {runs["mlp"]}
    assert matching("last.loss>1.25") == {runs["mlp"], runs["small-lr"], runs["big-lr"]}
    assert matching('MLP "wide"') == {runs["wide"]}  # bare words: the name (or a tag) contains them
    assert matching("state!=finished") == set()
    assert matching("name!~mlp") == {runs["small-lr"], runs["big-lr"]}
    assert matching("") == set(runs.values())
    assert matching("start>=2026-11-30T02:00") == {runs["mlp"], runs["wide"]}  # local time as typed (T0 + 2 h)


@pytest.mark.parametrize(
    ("text", "says"),
    [("=3", "no key"), ("lr>", "no value"), ('name~"open', "quote left open"), ("lr", None), ("a" * 1001, "at most")],
)
def test_a_bad_filter_is_one_line(text: str, says: str | None) -> None:
    if says is None:
        assert parse_filter(text).terms[0].key == ""  # a bare word
        return
    with pytest.raises(UsageError, match=says):
        parse_filter(text)


def test_the_sort_orders_numbers_as_numbers_and_puts_rows_without_the_key_last(runs: dict[str, Path]) -> None:
    rows = [fold_metrics(row) for row in load_rows(runs["mlp"].parent)]
    assert names(sort_rows(rows, "lr")) == [runs[k].name for k in ("wide", "small-lr", "mlp", "big-lr")]
    backwards = [runs[k].name for k in ("big-lr", "mlp", "small-lr", "wide")]
    assert names(sort_rows(rows, "lr", descending=True)) == backwards
    assert names(sort_rows(rows, "best.test_acc", descending=True))[:2] == [runs["big-lr"].name, runs["small-lr"].name]
    assert set(names(sort_rows(rows, "width"))[2:]) == {runs["small-lr"].name, runs["big-lr"].name}  # no width: last
    assert names(sort_rows(rows, "name"))[-1] == runs["wide"].name


def test_the_columns_are_the_settings_that_differ(runs: dict[str, Path]) -> None:
    rows = load_rows(runs["mlp"].parent)
    assert "lr" in differing_settings(rows) and "epochs" in differing_settings(rows)
    scripts = [row for row in rows if row.info.kind == "script"]
    assert differing_settings(scripts) == ["name", "width", "lr"]
    assert differing_settings(rows)[0] == "lr"  # all four runs have it


def test_tags_and_a_note_round_trip_and_leave_the_writers_files_alone(runs: dict[str, Path]) -> None:
    run_dir = runs["mlp"]
    before = {name: (run_dir / name).read_bytes() for name in ("status.json", "metrics.jsonl", "summary.json")}
    write_notes(run_dir, RunNotes(("baseline, sweep", "baseline", "x" * 100), "  the best of the sweep  "))
    notes = read_notes(run_dir)
    assert notes == RunNotes(("baseline", "sweep", "x" * 40), "the best of the sweep")
    assert json.loads((run_dir / NOTES).read_text()) == {"tags": ["baseline", "sweep", "x" * 40], "note": notes.note}
    assert {name: (run_dir / name).read_bytes() for name in before} == before
    rows = load_rows(run_dir.parent)
    assert {row.folder for row in select(rows, parse_filter("tags=sweep"))} == {run_dir}
    assert {row.folder for row in select(rows, parse_filter("note~best"))} == {run_dir}


def test_notes_that_are_a_link_or_garbage_read_as_none(runs: dict[str, Path], tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.json"
    target.write_text('{"tags": ["planted"], "note": ""}')
    (runs["mlp"] / NOTES).symlink_to(target)
    (runs["wide"] / NOTES).write_text("[1, 2")
    assert read_notes(runs["mlp"]) == RunNotes() and read_notes(runs["wide"]) == RunNotes()


def test_deleting_refuses_a_live_run_and_removes_a_finished_one(runs: dict[str, Path]) -> None:
    lock = hold_live(runs["mlp"])
    try:
        with pytest.raises(UsageError, match="is live"):
            delete_run(runs["mlp"])
        assert runs["mlp"].is_dir()
    finally:
        lock.release()
    delete_run(runs["wide"])
    assert not runs["wide"].exists()
    with pytest.raises(UsageError, match="not a run folder"):
        delete_run(runs["wide"])


def test_runs_filter_on_the_command_line(runs: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    runs_dir = str(runs["mlp"].parent)
    assert main(["runs", "--runs-dir", runs_dir, "--filter", "kind=script lr<1e-3"]) == 0
    out = capsys.readouterr().out
    assert runs["wide"].name in out and runs["mlp"].name not in out
    assert main(["runs", "--runs-dir", runs_dir, "--filter", "best.loss<1", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [Path(entry["folder"]).name for entry in listed] == [runs["wide"].name]
    assert main(["runs", "--runs-dir", runs_dir, "--filter", "lr>"]) == 2
    assert "no value after" in capsys.readouterr().err
