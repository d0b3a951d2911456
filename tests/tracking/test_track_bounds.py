"""track() keeps every value it accepts: windows cut by bytes under the reader's line bound, every value
checked at the call, long configs and notes refused or split at the call, a folder that cannot be made a
warning. Values are read back through ``rocmtui runs RUN --csv``, value for value."""

from __future__ import annotations

import csv
import math
import os
import random
from pathlib import Path

import pytest
import torch

import rocmtui
from rocmtui.cli.main import main
from rocmtui.codec import encode_json
from rocmtui.events import LogMessage, MetricsLogged, RunFinished, TrackStarted
from rocmtui.run.format import EVENTS, MAX_LINE_BYTES
from rocmtui.run.stream import read_events
from rocmtui.tracking import env
from rocmtui.tracking import run as tracking_run
from rocmtui.tracking.values import LINE_BUDGET, NOTE_CHARS, VALUE_BYTES, WIDEST, Window, alone_bytes, call_bytes


@pytest.fixture(autouse=True)
def _no_launcher(monkeypatch) -> None:
    for name in (env.RUN_DIR, env.RUNS_DIR, env.LINK, env.RUN_NAME):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def no_timed_flush(monkeypatch) -> None:
    """Windows end only by their calls or bytes, never by the clock: what a fast loop meets."""
    monkeypatch.setattr(tracking_run, "FLUSH_S", 1e9)


def _csv_values(run_dir: Path, tmp_path: Path) -> dict[str, dict[int, float]]:
    out = tmp_path / "values.csv"
    assert main(["runs", str(run_dir), "--csv", str(out)]) == 0
    values: dict[str, dict[int, float]] = {}
    with out.open() as f:
        for row in csv.DictReader(f):
            values.setdefault(row["name"], {})[int(row["step"])] = float(row["value"])
    return values


def _longest_line(run_dir: Path) -> int:
    return max(len(line) for line in (run_dir / EVENTS).read_bytes().splitlines())


@pytest.mark.slow
@pytest.mark.parametrize(
    ("names", "steps", "seed"),
    [
        ([f"metric/{i:02d}" for i in range(30)], 4500, 0),  # thirty names logged fast
        ([f"layer{i:05d}.grad_norm" for i in range(10_000)], 6, 2),  # ten thousand names a call
    ],
    ids=["thirty-names-fast", "ten-thousand-names"],
)
def test_every_name_reaches_the_csv_value_for_value(
    tmp_path: Path, no_timed_flush: None, names: list[str], steps: int, seed: int
) -> None:
    rng = random.Random(seed)
    logged: dict[str, dict[int, float]] = {name: {} for name in names}
    with rocmtui.track("names", runs_dir=tmp_path) as run:
        for step in range(1, steps):
            values = {name: rng.random() for name in names}
            run.log(step, **values)
            for name, value in values.items():
                logged[name][step] = value
    assert _longest_line(run.run_dir) <= MAX_LINE_BYTES
    assert _csv_values(run.run_dir, tmp_path) == logged


def test_a_call_too_large_for_any_line_is_refused_naming_a_key_and_the_run_goes_on(tmp_path: Path) -> None:
    huge = {f"{'x' * 900}{i}": 1.0 for i in range(1000)}
    with rocmtui.track("huge", runs_dir=tmp_path) as run:
        run.log(loss=1.0)
        with pytest.raises(ValueError, match=r"xxxx.*one log\(\) call of 1,000 values"):
            run.log(**huge)  # type: ignore[arg-type]  # a name may be "step": not here
        run.log(loss=2.0)
    assert _csv_values(run.run_dir, tmp_path) == {"loss": {1: 1.0, 2: 2.0}}


def test_a_window_counts_the_bytes_of_its_calls_from_zero_and_starts_again_from_zero() -> None:
    window = Window()
    assert window.bytes == 0
    window.add(1, {"loss": 1.0}, 70)
    window.add(2, {"loss": 2.0}, 50)
    assert window.bytes == 120
    window.drain()
    assert window.bytes == 0
    window.add(3, {"loss": 3.0}, 9)
    window.drain_unconverted()
    assert (window.bytes, window.count) == (0, 0)
    window.add_alone(4, {"loss": 4.0})  # fills the line: the next call writes it first
    assert (window.bytes, window.steps, window.values) == (LINE_BUDGET, [4], {"loss": [4.0]})


def test_one_call_alone_is_bounded_by_its_widest_floats_exactly() -> None:
    scalars = {f"n{i}": WIDEST for i in range(3)}
    window = Window()
    window.add_alone(1, scalars)
    drained = window.drain()
    assert alone_bytes(scalars) == len(encode_json({"values": drained.last, "logged": drained.logged}))


def test_windows_are_cut_where_the_next_call_would_pass_the_line_budget(tmp_path: Path, no_timed_flush: None) -> None:
    names = [f"n{i:04d}" for i in range(5000)]
    first, known = call_bytes(dict.fromkeys(names, 0.0)), 24 + VALUE_BYTES * len(names)
    assert 1 + (LINE_BUDGET - first) // known == 3  # each window pays for its names at its first call
    with rocmtui.track("cut", runs_dir=tmp_path) as run:
        for step in range(1, 11):
            run.log(step, **dict.fromkeys(names, float(step)))
    logged = [e for e in read_events(run.run_dir) if isinstance(e, MetricsLogged)]
    assert [tuple(e.call_steps()) for e in logged] == [(1, 2, 3), (4, 5, 6), (7, 8, 9), (10,)]
    assert _longest_line(run.run_dir) <= MAX_LINE_BYTES


def test_a_call_too_wide_for_the_quick_bound_goes_alone_in_its_window_and_is_read_back(
    tmp_path: Path, no_timed_flush: None
) -> None:
    wide = {f"name-{i:05d}-of-a-wide-call": float(i) for i in range(9000)}
    assert call_bytes(wide) > LINE_BUDGET >= alone_bytes(wide)
    with rocmtui.track("wide", runs_dir=tmp_path) as run:
        run.log(1, loss=1.0)
        run.log(2, **wide)
        run.log(3, loss=3.0)
    logged = [e for e in read_events(run.run_dir) if isinstance(e, MetricsLogged)]
    assert [tuple(e.call_steps()) for e in logged] == [(1,), (2,), (3,)]
    assert _csv_values(run.run_dir, tmp_path) == {"loss": {1: 1.0, 3: 3.0}} | {n: {2: v} for n, v in wide.items()}
    assert _longest_line(run.run_dir) <= MAX_LINE_BYTES


def test_a_config_that_fits_is_read_back_whole_and_one_of_two_megabytes_is_refused_naming_its_key(
    tmp_path: Path,
) -> None:
    fits = {f"key{i}": "v" * 1000 for i in range(300)}  # 300 KB written out
    with rocmtui.track("config", runs_dir=tmp_path, config=fits) as run:
        run.log(loss=1.0)
    started = next(e for e in read_events(run.run_dir) if isinstance(e, TrackStarted))
    assert started.params == fits
    before = set(tmp_path.iterdir())
    with pytest.raises(ValueError, match=r"config\['notes'\]: the config takes more than"):
        rocmtui.track("config", runs_dir=tmp_path, config={"lr": 0.1, "notes": "n" * (2 << 20)})
    assert set(tmp_path.iterdir()) == before  # refused before any folder was made
    with pytest.raises(ValueError, match=r"config\['seed'\]: an int beyond 64 bits"):
        rocmtui.track("config", runs_dir=tmp_path, config={"seed": 1 << 70})


@pytest.mark.slow
def test_a_note_of_three_megabytes_reaches_the_reader_whole_in_parts(tmp_path: Path) -> None:
    message = "".join(f"line {i} \x1b[31mé\n" for i in range(200_000))  # 3.2 MB, escapes written 6 bytes each
    with rocmtui.track("notes", runs_dir=tmp_path) as run:
        run.note(message, "warning")
        run.note("short")
    notes = [e for e in read_events(run.run_dir) if isinstance(e, LogMessage)]
    assert len(notes) == math.ceil(len(message) / NOTE_CHARS) + 1
    assert "".join(n.message for n in notes[:-1]) == message and notes[-1].message == "short"
    assert {n.level for n in notes[:-1]} == {"warning"}
    assert _longest_line(run.run_dir) <= MAX_LINE_BYTES


@pytest.mark.parametrize(
    ("value", "error", "message"),
    [
        (10**400, ValueError, "an int of about 401 digits is beyond the range of a float"),
        (-(10**309), ValueError, "an int of about 310 digits is beyond the range of a float"),
        (torch.tensor(1.0, device="meta"), TypeError, "'meta' device holds no value"),
    ],
    ids=["a huge int", "a huge negative int", "a meta tensor"],
)
def test_a_value_no_float_can_hold_is_refused_at_its_call_and_the_window_is_kept(
    tmp_path: Path, value: object, error: type[Exception], message: str
) -> None:
    with rocmtui.track("bad", runs_dir=tmp_path) as run:
        run.log(loss=1.0)
        with pytest.raises(error, match=f"^bad: .*{message}"):
            run.log(loss=2.0, bad=value)  # type: ignore[arg-type]  # refused at run time, the point
        run.log(loss=3.0, big=float(2**1000))
    events = read_events(run.run_dir)
    assert isinstance(events[-1], RunFinished) and events[-1].reason == "completed"
    assert _csv_values(run.run_dir, tmp_path) == {"loss": {1: 1.0, 2: 3.0}, "big": {2: float(2**1000)}}


def test_a_step_beyond_64_bits_is_refused_at_its_call(tmp_path: Path) -> None:
    with rocmtui.track("steps", runs_dir=tmp_path) as run:
        run.log(1, loss=1.0)
        with pytest.raises(ValueError, match=r"^step: .* is out of range"):
            run.log(10**400, loss=2.0)
        run.log(2, loss=3.0)
    assert _csv_values(run.run_dir, tmp_path) == {"loss": {1: 1.0, 2: 3.0}}


@pytest.mark.parametrize(
    ("total", "error", "message"),
    [
        (10.5, TypeError, "got float"),
        ("100", TypeError, "got str"),
        (True, TypeError, "got bool"),
        (0, ValueError, "out of range"),
        (-5, ValueError, "out of range"),
        (1 << 64, ValueError, "out of range"),
    ],
)
def test_total_steps_is_checked_at_track_and_when_set(
    tmp_path: Path, total: object, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=f"^total_steps: .*{message}"):
        rocmtui.track("steps", runs_dir=tmp_path, total_steps=total)  # type: ignore[arg-type]
    assert not any(tmp_path.iterdir())
    with rocmtui.track("steps", runs_dir=tmp_path, total_steps=100) as run:
        with pytest.raises(error, match=r"^total_steps: "):
            run.total_steps = total  # type: ignore[assignment]
        run.total_steps = 200
        run.log(loss=1.0)
    logged = [e for e in read_events(run.run_dir) if isinstance(e, MetricsLogged)]
    assert [e.total_steps for e in logged] == [200]


def test_a_name_longer_than_a_line_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"^name: 5,000 characters"):
        rocmtui.track("n" * 5000, runs_dir=tmp_path)
    with rocmtui.track("n" * 999, runs_dir=tmp_path) as run:  # long, but a folder name still fits
        run.log(loss=1.0)
    assert len(run.run_dir.name) < 128


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write any folder")
def test_a_folder_that_cannot_be_made_is_one_warning_and_the_script_trains_on_untracked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    _trains_on_untracked(locked / "runs", capsys)


def test_a_runs_folder_that_is_a_file_is_one_warning_and_the_script_trains_on_untracked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a-file").write_text("x")
    _trains_on_untracked(tmp_path / "a-file" / "runs", capsys)


def _trains_on_untracked(runs_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with rocmtui.track("untracked", runs_dir=runs_dir) as run:
        for step in range(3):
            run.log(step, loss=float(step))
        run.note("still here")
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("rocmtui: not tracked, cannot make the run folder: "), err
    assert run.step == 2
