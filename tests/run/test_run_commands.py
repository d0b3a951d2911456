"""``rocmtui runs`` and ``rocmtui stop`` over folders with live, finished, stopped, failed and lost runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from msgspec.structs import replace

from rocmtui.cli.main import main
from rocmtui.events import EpochCompleted, MetricsLogged, RunControl, RunFailed, RunFinished, TrackStarted
from rocmtui.run.session import RunSession
from rocmtui.run.status import read_status, write_status

H200_RUN = Path(__file__).resolve().parents[1] / "data" / "h200-fastnet-run"


def epoch(n: int, acc: float) -> EpochCompleted:
    return EpochCompleted(n, 4, 1.0, 0.5, 1.1, acc, 1e-3, 2.0, 1000.0, True)


def session_run(runs: Path, name: str, *events: object) -> tuple[Path, RunSession]:
    run_dir = runs / name
    run_dir.mkdir(parents=True)
    session = RunSession(run_dir, RunControl(), name="cifar10 simplecnn")
    for event in events:
        session.emit(event)  # type: ignore[arg-type]
    return run_dir, session


@pytest.fixture
def runs(tmp_path: Path) -> tuple[Path, RunSession]:
    runs = tmp_path / "runs"
    _, done = session_run(runs, "20261201-080000-finished", epoch(0, 0.3), epoch(1, 0.5))
    done.emit(RunFinished("completed", 2, 0.5, 0.5, 4.0, 100.0, None, "x"))
    done.close()
    _, failed = session_run(runs, "20261201-081000-failed", RunFailed("disk full", "disk"))
    failed.close()
    lost_dir, lost = session_run(runs, "20261201-082000-lost", epoch(0, 0.2))
    lost.close()
    status = read_status(lost_dir)
    assert status is not None
    write_status(lost_dir, replace(status, state="running"), durable=True)  # as kill -9 leaves it
    _, live = session_run(runs, "20261201-083000-live", epoch(0, 0.4))
    return runs, live


def test_runs_lists_every_state_newest_first(runs, capsys: pytest.CaptureFixture[str]) -> None:
    runs_dir, live = runs
    try:
        assert main(["runs", "--runs-dir", str(runs_dir), "--json"]) == 0
        listed = json.loads(capsys.readouterr().out)
        assert [(Path(r["folder"]).name.split("-")[-1], r["state"]) for r in listed] == [
            ("live", "starting"),
            ("lost", "lost"),
            ("failed", "failed"),
            ("finished", "finished"),
        ]
        assert listed[3]["best_acc"] == 0.5 and listed[3]["epoch"] == 2
        assert main(["runs", "--runs-dir", str(runs_dir)]) == 0
        table = capsys.readouterr().out.splitlines()
        assert table[0].split()[:5] == ["STATE", "STARTED", "WHAT", "PROGRESS", "RESULT"] and len(table) == 5
        assert "best 50.00%" in table[4] and "DEVICE" in table[0]
    finally:
        live.close()


def test_runs_shows_a_tracked_runs_step_and_headline_value(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = tmp_path / "runs" / "20260101-000000-script"
    run_dir.mkdir(parents=True)
    session = RunSession(run_dir, RunControl(), name="llm")
    session.emit(TrackStarted("llm", str(run_dir)))
    session.emit(MetricsLogged(1200, {"lr": 0.1, "train_loss": 0.4537}, 12.0))
    session.close()
    assert main(["runs", "--runs-dir", str(tmp_path / "runs")]) == 0
    row = capsys.readouterr().out.splitlines()[1]
    assert "step 1,200 (100/s)" in row and "train_loss 0.4537" in row and "llm" in row


@pytest.mark.parametrize(("step", "elapsed_s", "shown"), [(5, 2.0, "step 5 (2.5/s)"), (7, 0.0, "step 7")])
def test_a_tracked_runs_rate_is_its_steps_over_its_clock(step: int, elapsed_s: float, shown: str) -> None:
    from dataclasses import replace

    from rocmtui.run.listing import listing_cells, run_info

    info = replace(run_info(Path("/nonexistent")), step=step, elapsed_s=elapsed_s, epochs=0)
    assert listing_cells(info, 80)[3] == shown


def test_stop_refuses_a_run_that_is_not_live(runs, capsys: pytest.CaptureFixture[str]) -> None:
    runs_dir, live = runs
    live.close()
    assert main(["stop", "--runs-dir", str(runs_dir)]) == 2
    assert (
        capsys.readouterr().err.strip()
        == f"rocmtui stop: error: no live run of yours under {runs_dir}; give a run folder, or --runs-dir"
    )
    assert main(["stop", str(runs_dir / "20261201-080000-finished")]) == 2
    assert "is not running" in capsys.readouterr().err


def test_watch_refuses_what_is_not_a_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["watch", str(tmp_path)]) == 2
    assert "is not a run folder" in capsys.readouterr().err
    assert main(["watch", "--runs-dir", str(tmp_path / "none")]) == 2
    assert "no run of yours under" in capsys.readouterr().err


def test_runs_reads_a_real_h200_run_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import shutil

    shutil.copytree(H200_RUN, tmp_path / "20261201-071828-cifar10-fastnet")
    assert main(["runs", "--runs-dir", str(tmp_path)]) == 0
    line = capsys.readouterr().out.splitlines()[1]
    assert line.split()[:1] == ["finished"] and "10/10" in line and "93.57%" in line and "NVIDIA H200" in line
