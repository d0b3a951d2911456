"""``rocmtui runs RUN --csv``: every logged value comes back from the CSV, at its step."""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path

import pytest

import rocmtui
from rocmtui.cli.main import main
from rocmtui.events import StepsCompleted
from rocmtui.run.format import decode_event
from rocmtui.run.series_csv import HEADER, write_csv


def test_every_value_a_script_logged_is_in_the_csv(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    logged: dict[tuple[int, str], float] = {}
    with rocmtui.track("csv", runs_dir=tmp_path / "runs") as run:
        for step in range(1, 501):
            values = {"loss": 1.0 / step, "lr": 1e-3 * (1 - step / 1000)}
            if step % 50 == 0:
                values["val_loss"] = math.nan if step == 100 else 2.0 / step
            run.log(step=step, **values)
            logged.update({(step, name): value for name, value in values.items()})
            if step % 33 == 0:
                run.flush()
    out = tmp_path / "series.csv"
    assert main(["runs", str(run.run_dir), "--csv", str(out)]) == 0
    assert "1,010 values" in capsys.readouterr().out
    table = list(csv.reader(out.open()))
    assert tuple(table[0]) == HEADER
    back = {(int(step), name): float(value) for step, _, name, value in table[1:]}
    assert back.keys() == logged.keys()
    for key, value in logged.items():
        assert back[key] == value or (math.isnan(value) and math.isnan(back[key])), key


RECORDED_RUN = Path(__file__).resolve().parents[1] / "data" / "recorded-run.jsonl"


def test_a_train_runs_csv_has_each_steps_loss_and_each_epochs_accuracy() -> None:
    events = [decode_event(line) for line in RECORDED_RUN.read_bytes().splitlines() if line.strip()]
    text = io.StringIO()
    write_csv(text, events)
    table = list(csv.reader(io.StringIO(text.getvalue())))[1:]
    losses = [float(v) for _, _, name, v in table if name == "loss"]
    assert losses == [loss for e in events if isinstance(e, StepsCompleted) for loss in e.losses]
    assert len([row for row in table if row[2] == "test_acc"]) == 3


def test_csv_to_stdout_and_a_run_named_without_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with rocmtui.track("csv", runs_dir=tmp_path / "runs") as run:
        run.log(step=1, loss=0.5)
    assert main(["runs", "--runs-dir", str(tmp_path / "runs"), "--csv"]) == 0
    assert capsys.readouterr().out.splitlines() == ["step,time_s,name,value", f"1,{_time(run)},loss,0.5"]
    assert main(["runs", str(run.run_dir)]) == 2
    assert "with --csv, --card or --ranks only" in capsys.readouterr().err


def _time(run: rocmtui.Run) -> str:
    from rocmtui.events import MetricsLogged
    from rocmtui.run.stream import read_events

    [window] = [e for e in read_events(run.run_dir) if isinstance(e, MetricsLogged)]
    return f"{window.elapsed_s:.6g}"


INJECTED = {
    '=HYPERLINK("http://evil.example","x")': '\'=HYPERLINK("http://evil.example","x")',
    "+cmd|' /C calc'!A0": "'+cmd|' /C calc'!A0",
    "-2+3": "'-2+3",
    "@SUM(1+1)": "'@SUM(1+1)",
    "\tcell": "'\tcell",
    "loss": "loss",
    "a=b": "a=b",
}


def test_names_that_start_like_a_formula_are_neutralised_in_file_and_stdout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with rocmtui.track("csv", runs_dir=tmp_path / "runs") as run:
        run.log(step=1, **dict.fromkeys(INJECTED, -0.5))
    out = tmp_path / "series.csv"
    assert main(["runs", str(run.run_dir), "--csv", str(out)]) == 0
    table = list(csv.reader(out.open()))
    assert {row[2] for row in table[1:]} == set(INJECTED.values())
    assert {row[3] for row in table[1:]} == {"-0.5"}  # numbers stay numbers
    capsys.readouterr()
    assert main(["runs", str(run.run_dir), "--csv", "-"]) == 0
    shown = {row[2] for row in csv.reader(io.StringIO(capsys.readouterr().out))}
    assert '\'=HYPERLINK("http://evil.example","x")' in shown and "\\x09cell" in shown  # the tab: shown as text


def test_escapes_in_names_are_made_visible_on_stdout_and_kept_in_a_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    title = "\x1b]0;pwned\x07loss"
    with rocmtui.track("csv", runs_dir=tmp_path / "runs") as run:
        run.log(step=1, **{title: 1.0, "bidi\u202etxt": 2.0})
    assert main(["runs", str(run.run_dir), "--csv", "-"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    assert "\\x1b]0;pwned\\x07loss" in out
    file = tmp_path / "series.csv"
    assert main(["runs", str(run.run_dir), "--csv", str(file)]) == 0
    assert {row[2] for row in list(csv.reader(file.open(newline="")))[1:]} == {title, "bidi\u202etxt"}
