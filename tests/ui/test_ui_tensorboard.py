"""``rocmtui watch LOGDIR``: a TensorBoard log folder's runs watched (compared when several), named by their
folders, their scalars drawn as a script's series."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ui_helpers import host_recording

from rocmtui.cli.run_commands import _watched
from rocmtui.config import TrainConfig
from rocmtui.gpu.replay import ManualReplay
from rocmtui.run.tensorboard_log import follow_log
from rocmtui.ui.train_app import TrainApp

SummaryWriter = pytest.importorskip("torch.utils.tensorboard").SummaryWriter


def log(folder: Path, scale: float) -> None:
    writer = SummaryWriter(log_dir=str(folder))
    for step in range(50):
        writer.add_scalar("loss", scale / (1 + step), step)
        writer.add_scalar("acc", step / 50, step)
    writer.close()


async def test_watch_logdir_compares_its_runs_named_by_their_folders(tmp_path: Path) -> None:
    log(tmp_path / "tb" / "small", 1.0)
    log(tmp_path / "tb" / "big", 2.0)
    logs: dict[Path, str] = {}
    folders = _watched([str(tmp_path / "tb")], tmp_path / "runs", logs)
    assert [logs[path] for path in folders] == ["big", "small"]

    def source(path: Path) -> Any:
        return lambda emit, control: follow_log(path, emit, control, name=logs[path], poll_s=0.05)

    app = TrainApp(
        TrainConfig(),
        lambda config, emit, control: source(folders[0])(emit, control),
        ManualReplay(host_recording()),
        detachable=True,
        compare=[("small", source(folders[1]))],
        label="big",
        script="big",
    )
    async with app.run_test(size=(120, 40)) as pilot:
        for _ in range(500):
            if all(run.state.scalars.last is not None for run in app.train_screen.runs):
                break
            await pilot.pause(0.01)
        screen = app.train_screen
        assert [run.state.name for run in screen.runs] == ["big", "small"]
        assert [run.state.scalars.last.step for run in screen.runs if run.state.scalars.last] == [49, 49]
        screen.replot_now()
        await pilot.pause()
        assert set(screen.accuracy_plot.legend_colors) == {"big", "small"}  # acc of both runs
        app.control.leave.set()
        app.exit(0)


async def test_the_runs_table_lists_a_logs_runs_with_their_series(tmp_path: Path) -> None:
    from rocmtui.run.format import read_notes
    from rocmtui.run.run_table import RunRow
    from rocmtui.run.tensorboard_log import listing, tensorboard_runs
    from rocmtui.ui.runs_table import RunsTableApp

    log(tmp_path / "tb" / "small", 1.0)
    log(tmp_path / "tb" / "big", 2.0)
    found = tensorboard_runs(tmp_path / "tb")
    rows = [RunRow(path, listing(path, tmp_path / "tb"), {}, read_notes(path)) for path in found]
    app = RunsTableApp(rows, Path("tb"))
    async with app.run_test(size=(120, 40)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.series == "loss"  # the first series, most common
        names = [row.name for row in app.shown]
        best = [app.cell_at(n, 6) for n in range(len(names))]
        assert dict(zip(names, best, strict=True)) == {"big": f"{2.0 / 50:.4g}", "small": f"{1.0 / 50:.4g}"}
        await pilot.press("enter")
    assert app.return_value == [found[0]]
