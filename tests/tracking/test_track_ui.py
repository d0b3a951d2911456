"""The training screen over a tracked script's folder: its name, its series, the key that cycles them."""

from __future__ import annotations

from pathlib import Path

import pytest

import rocmtui
from rocmtui.config import TrainConfig
from rocmtui.gpu.replay import ManualReplay, ReplaySource
from rocmtui.run.follow import follow
from rocmtui.tracking import env
from rocmtui.ui.screens.finished import SummaryCard
from rocmtui.ui.train_app import TrainApp
from rocmtui.ui.widgets.run_progress import progress_lines

HOST_RECORDING = Path(__file__).resolve().parents[1] / "ui" / "data" / "monitor-cpu-host.jsonl"
"""A real ``rocmtui monitor --json`` recording from a 2-core machine without a GPU."""


def host_recording() -> ManualReplay:
    source = ReplaySource.from_jsonl(HOST_RECORDING)
    samples = []
    while (sample := source.step()) is not None:
        samples.append(sample)
    return ManualReplay(samples)


@pytest.fixture
def tracked_folder(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.delenv(env.RUN_DIR, raising=False)
    monkeypatch.delenv(env.LINK, raising=False)
    with rocmtui.track("tiny-llm", runs_dir=tmp_path, total_steps=40) as run:
        for step in range(1, 41):
            run.log(step=step, loss=3.0 / step, lr=1e-3, tokens_per_s=1000.0 + step)
            if step % 10 == 0:
                run.flush()
                run.log_epoch(epoch=step // 10, eval_loss=3.5 / step, eval_acc=step / 40)
    return run.run_dir


async def test_a_tracked_run_shows_its_name_loss_and_other_series(tracked_folder: Path) -> None:
    def source(config, emit, control) -> object:
        return follow(tracked_folder, emit, control, poll_s=0.01)

    app = TrainApp(TrainConfig(), source, host_recording(), detachable=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        screen = app.train_screen
        state = app.state
        assert state.phase == "finished" and state.scalars.loss_name == "loss"
        assert str(screen.info.line.render()) == f"tiny-llm · {tracked_folder.name}"  # the folder's name: 80 columns
        assert progress_lines(state, 80)[0].startswith("step 40/40 ")
        assert str(screen.loss_plot.border_title).startswith("loss ")
        assert screen.query_one(SummaryCard).lines[0] == "Run finished"
        first = str(screen.accuracy_plot.border_title)
        assert first.startswith("eval_acc per epoch (1/4")
        await pilot.press("n")
        assert str(screen.accuracy_plot.border_title).startswith("lr (2/4")
        await pilot.press("n", "n", "n")
        assert str(screen.accuracy_plot.border_title) == first
        assert "cannot draw" not in str(screen.loss_plot.render())
        await pilot.press("q")
    assert app.return_value == 0
