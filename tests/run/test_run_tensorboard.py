"""TensorBoard's logs as runs: a log written by torch's ``SummaryWriter`` read back value for value through
``rocmtui runs LOGDIR --csv``, listed by ``runs LOGDIR``, and followed while it is still being written."""

from __future__ import annotations

import csv
import io
import json
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from waiting import wait_for

from rocmtui.cli.main import main
from rocmtui.events import MetricsLogged, RunControl, TrackStarted, TrainEvent
from rocmtui.run.tensorboard_log import NEEDS, follow_log, tensorboard_runs

pytest.importorskip("tensorboard")
SummaryWriter = pytest.importorskip("torch.utils.tensorboard").SummaryWriter

STEPS = 20_000
"""Twice the 10,000 scalars a tag TensorBoard's own EventAccumulator keeps by default: every one read back here."""
TAGS = ("train/loss", "train/lr", "val/acc")


def value_of(tag: str, step: int) -> float:
    """A value TensorBoard keeps exactly (it stores float32)."""
    raw = {"train/loss": 2.0 / (1 + step / 1000), "train/lr": 1e-3 * 0.5 ** (step // 4_000), "val/acc": step / STEPS}
    return float(np.float32(raw[tag]))


@pytest.mark.slow  # 40,000 scalars written by torch's SummaryWriter, then read back
def test_a_summary_writer_log_reads_back_value_for_value(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    logdir = tmp_path / "tb"
    writer = SummaryWriter(log_dir=str(logdir / "run-a"))
    for step in range(STEPS):
        for tag in TAGS[:2]:
            writer.add_scalar(tag, value_of(tag, step), step)
        if step % 1000 == 999:  # a validation value now and then, at its own steps
            writer.add_scalar("val/acc", value_of("val/acc", step), step)
    writer.close()
    assert main(["runs", str(logdir), "--csv"]) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert rows[0] == ["step", "time_s", "name", "value"]
    got: dict[str, dict[int, float]] = {tag: {} for tag in TAGS}
    for at, time_s, name, value in rows[1:]:
        got[name][int(at)] = float(value)
        assert float(time_s) >= 0.0
    assert got["train/loss"] == {step: value_of("train/loss", step) for step in range(STEPS)}
    assert got["train/lr"] == {step: value_of("train/lr", step) for step in range(STEPS)}
    assert got["val/acc"] == {step: value_of("val/acc", step) for step in range(999, STEPS, 1000)}
    assert main(["runs", str(logdir), "--json"]) == 0
    (listed,) = json.loads(capsys.readouterr().out)
    assert listed["kind"] == "tensorboard" and listed["name"] == "run-a" and listed["step"] == STEPS - 1
    assert listed["metric"] == "train/loss" and listed["metric_value"] == value_of("train/loss", STEPS - 1)


def write(writer: Any, steps: range) -> None:
    for step in steps:
        writer.add_scalar("loss", value_of("train/loss", step), step)
    writer.flush()


def test_a_log_still_being_written_is_followed(tmp_path: Path) -> None:
    writer = SummaryWriter(log_dir=str(tmp_path / "live"))
    write(writer, range(100))
    seen: list[TrainEvent] = []
    control = RunControl()
    follower = threading.Thread(
        target=follow_log, args=(tmp_path / "live", seen.append, control), kwargs={"poll_s": 0.02}
    )
    follower.start()
    try:

        def steps() -> list[int]:
            return [s for e in seen if isinstance(e, MetricsLogged) for s in e.points()["loss"][0]]

        wait_for(lambda: len(steps()) == 100, what="the first 100 steps")
        write(writer, range(100, 250))
        wait_for(lambda: len(steps()) == 250, what="the steps written since")
        assert steps() == list(range(250))
        assert isinstance(seen[0], TrackStarted) and seen[0].name == "live"
        last = [e for e in seen if isinstance(e, MetricsLogged)][-1]
        assert last.values["loss"] == value_of("train/loss", 249)
    finally:
        control.leave.set()
        follower.join()
        writer.close()


def test_runs_of_a_log_folder_and_one_line_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("a", "b/c"):
        writer = SummaryWriter(log_dir=str(tmp_path / "tb" / name))
        write(writer, range(3))
        writer.close()
    assert [p.relative_to(tmp_path / "tb").as_posix() for p in tensorboard_runs(tmp_path / "tb")] == ["a", "b/c"]
    assert main(["runs", str(tmp_path / "tb")]) == 0
    out = capsys.readouterr().out
    assert "a " in out and "b/c" in out and "loss" in out
    assert main(["runs", str(tmp_path / "tb"), "--csv"]) == 2
    assert "holds 2 TensorBoard runs (a, b/c)" in capsys.readouterr().err
    assert main(["runs", str(tmp_path / "tb" / "b" / "c"), "--csv"]) == 0
    assert capsys.readouterr().out.splitlines()[1].split(",")[2] == "loss"


def test_without_tensorboard_it_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    writer = SummaryWriter(log_dir=str(tmp_path / "tb"))
    write(writer, range(3))
    writer.close()
    monkeypatch.setitem(__import__("sys").modules, "tensorboard.backend.event_processing", None)
    assert main(["runs", str(tmp_path / "tb"), "--csv"]) == 2
    assert capsys.readouterr().err.strip().endswith(NEEDS)
