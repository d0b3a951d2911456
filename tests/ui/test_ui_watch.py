"""Pilot tests of ``rocmtui watch`` over run folders written from the recorded run: history, resumes, GPU."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from ui_helpers import HOST_RECORDING, recorded_config, recorded_events
from waiting import pilot_wait_for

from rocmtui.events import RunFinished, RunStarted, StepsCompleted, TrainEvent
from rocmtui.gpu.tail_source import TailSource
from rocmtui.run.follow import follow
from rocmtui.run.samples import SampleTail
from rocmtui.run.stream import EventWriter
from rocmtui.ui.screens.finished import SummaryCard
from rocmtui.ui.screens.train import TrainScreen
from rocmtui.ui.train_app import TrainApp

SIZE = (120, 40)


def write_folder(run_dir: Path, events: list[TrainEvent]) -> Path:
    writer = EventWriter(run_dir)
    for event in events:
        writer.write(event)
    writer.close()
    (run_dir / "gpu.jsonl").write_bytes(HOST_RECORDING.read_bytes())
    return run_dir


def watch_app(run_dir: Path) -> tuple[TrainApp, TailSource]:
    samples = TailSource(SampleTail(run_dir).poll, history_len=3600)
    samples.catch_up()

    def source(config, emit, control) -> object:
        return follow(run_dir, emit, control, poll_s=0.01)

    return TrainApp(recorded_config(), source, samples, detachable=True), samples


async def test_a_finished_run_opens_with_its_whole_history_and_gpu(tmp_path: Path) -> None:
    app, samples = watch_app(write_folder(tmp_path, recorded_events()))
    async with app.run_test(size=SIZE) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.state.phase == "finished" and app.train_screen.table.row_count == 3
        assert len(app.state.loss) == 90
        assert len(samples.history()) == len(HOST_RECORDING.read_text().splitlines())
        assert app.train_screen.query_one(SummaryCard).lines[0] == "Training finished"
        await pilot.press("q")
    assert app.return_value == 0
    assert app.final_lines()[0].startswith("rocmtui: completed: 3 epoch(s)")


async def test_a_run_resumed_in_its_folder_shows_the_curves_from_step_0(tmp_path: Path) -> None:
    events = recorded_events()
    started = events[0]
    assert isinstance(started, RunStarted)
    first_epoch_end = next(i for i, e in enumerate(events) if type(e).__name__ == "EpochCompleted")
    final = events[-1]
    assert isinstance(final, RunFinished)
    stopped = msgspec.structs.replace(final, reason="stopped", epochs_completed=1)
    resumed = msgspec.structs.replace(started, start_epoch=1)
    # the first segment ran a few steps into epoch 2 before it was stopped; the resume trains them again
    overrun = [e for e in events[first_epoch_end + 1 : first_epoch_end + 4] if isinstance(e, StepsCompleted)]
    history = [*events[: first_epoch_end + 1], *overrun, stopped, resumed, *events[first_epoch_end + 1 :]]
    app, _ = watch_app(write_folder(tmp_path, history))
    async with app.run_test(size=SIZE) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.state.finished == final  # the stop in the middle is history, not the end
        assert app.train_screen.table.row_count == 3 and app.state.epochs_done == 3
        assert len(app.state.loss) == 90  # every step once, from step 0
        assert app.state.loss.view().x == [step / 30 for step in range(1, 91)]
        assert any("the run stopped; resumed later" in line for line in app.train_screen.log_view.messages)


def live_watcher(run_dir: Path) -> TrainApp:
    """``rocmtui watch`` of a live run's folder, as the CLI builds it, with the run's private control channel."""
    (run_dir / "control").write_bytes(b"")
    (run_dir / "control").chmod(0o600)

    def source(config, emit, control) -> object:
        return follow(run_dir, emit, control, writer_alive=lambda: True, poll_s=0.01)

    return TrainApp(recorded_config(), source, TailSource(SampleTail(run_dir).poll), detachable=True)


async def test_leaving_a_live_run_never_stops_it(tmp_path: Path) -> None:
    """q, then d: the watcher leaves; nothing is sent to the run (its control channel stays empty)."""
    events = recorded_events()
    run_dir = write_folder(tmp_path, events[:20])  # no final event: the run is still going
    app = live_watcher(run_dir)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("q")
        await pilot.press("d")
        await pilot.pause()
    assert app.detached and app.return_value == 0
    assert (run_dir / "control").read_bytes() == b""
    assert "rocmtui watch" in app.final_lines()[1]


async def test_stop_from_the_watcher_reaches_the_run_through_its_channel(tmp_path: Path) -> None:
    run_dir = write_folder(tmp_path, recorded_events()[:20])
    app = live_watcher(run_dir)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("p")
        await pilot.press("q", "y")
        control = run_dir / "control"
        await pilot_wait_for(pilot, lambda: b'"command":"stop"' in control.read_bytes(), what="the stop to be sent")
        assert isinstance(app.screen, TrainScreen) and app.state.phase == "stopping"
        commands = (run_dir / "control").read_text()
        assert '"command":"pause"' in commands and '"command":"stop"' in commands
        app.exit(0)


async def test_a_real_h200_run_opens_with_its_nvml_history(tmp_path: Path) -> None:
    """A folder recorded on an H200 (fastnet recipe, real NVML samples): the GPU panel shows that card."""
    import shutil

    run_dir = tmp_path / "run"
    shutil.copytree(Path(__file__).resolve().parents[1] / "data" / "h200-fastnet-run", run_dir)
    app, samples = watch_app(run_dir)
    async with app.run_test(size=SIZE) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.state.finished is not None and app.state.finished.best_test_acc == 0.9357
        assert app.train_screen.table.row_count == 10
        assert samples.history() and samples.history()[-1].gpus[0].name == "NVIDIA H200"
        peaks = [g.utilization_pct or 0.0 for s in samples.history() for g in s.gpus]
        assert max(peaks) > 50  # the run kept the GPU busy
        assert not app.train_screen.rank_table.display  # one process: no rank table


async def test_a_two_rank_run_shows_a_line_per_rank(tmp_path: Path) -> None:
    """A real 2-rank gloo run (``--nproc 2`` on the CPU), copied elsewhere: the rank table reads its folder
    where it is now, and shows both ranks at their last step."""
    import shutil

    run_dir = tmp_path / "run"
    shutil.copytree(Path(__file__).resolve().parents[1] / "data" / "cpu-ddp-run", run_dir)
    samples = TailSource(SampleTail(run_dir).poll, history_len=3600)

    def source(config, emit, control) -> object:
        return follow(run_dir, emit, control, poll_s=0.01)

    app = TrainApp(recorded_config(), source, samples, detachable=True, run_dir=run_dir)
    async with app.run_test(size=(80, 24)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        app.train_screen.rank_table.refresh_ranks()
        await pilot.pause()
        table = app.train_screen.rank_table
        assert table.display and table.region.height >= 5  # its rule, the job's line, the header, a line per rank
        summary, header, *lines = str(table.render()).splitlines()
        assert summary == "1 node, 2 ranks"  # a finished run: no rank named stalled or slow
        assert header.split()[:3] == ["rank", "device", "step"]
        steps = {line.split()[1]: line.split()[3] for line in lines}
        assert set(steps) == {"0", "1"} and steps["0"] == steps["1"]  # the ranks ended at the same step
        assert all("cpu" in line and "/s" in line and line.endswith("ended") for line in lines)


@pytest.mark.parametrize("saves", [False, True])
async def test_s_on_a_script_says_whether_it_can_save(tmp_path: Path, saves: bool) -> None:
    from rocmtui.events import MetricsLogged, TrackStarted

    run_dir = write_folder(
        tmp_path, [TrackStarted("script", str(tmp_path), saves=saves), MetricsLogged(5, {"loss": 1.0}, 1.0)]
    )
    app = live_watcher(run_dir)
    async with app.run_test(size=SIZE) as pilot:
        await pilot_wait_for(
            pilot, lambda: app.state.tracked is not None and app.state.scalars.last is not None, what="the run"
        )
        await pilot.press("s")
        said = ("the script saves at its next log()", "cannot save on request")
        await pilot_wait_for(pilot, lambda: any(s in m for m in app.train_screen.log_view.messages for s in said))
        if saves:
            await pilot_wait_for(pilot, lambda: b'"command":"save"' in (run_dir / "control").read_bytes())
        logged = " ".join(app.train_screen.log_view.messages)
        commands = (run_dir / "control").read_text()
        if saves:
            assert "the script saves at its next log()" in logged and '"command":"save"' in commands
        else:
            assert "cannot save on request" in logged and commands == ""
        app.exit(0)
