"""LaunchedTrainer: the trainer in a process and session of its own, followed through its run folder."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest
from waiting import wait_for

from rocmtui.cli.main import main
from rocmtui.config import TrainConfig
from rocmtui.events import LogMessage, RunControl, RunFailed, RunFinished, RunStarted, StepsCompleted, TrainEvent
from rocmtui.launch.trainer import LaunchedTrainer
from rocmtui.run.control import send_command
from rocmtui.run.lock import is_locked
from rocmtui.run.status import HEARTBEAT_S, read_status
from rocmtui.run.stream import read_events

pytestmark = pytest.mark.slow  # functional tier: real processes


@pytest.fixture(autouse=True)
def no_trainer_left_behind(monkeypatch: pytest.MonkeyPatch):
    """A failing test must not leave a detached trainer running (a paused one would wait forever)."""
    started: list[LaunchedTrainer] = []
    real_init = LaunchedTrainer.__init__

    def tracking_init(self: LaunchedTrainer, *args: object, **kwargs: object) -> None:
        real_init(self, *args, **kwargs)  # type: ignore[arg-type]
        started.append(self)

    monkeypatch.setattr(LaunchedTrainer, "__init__", tracking_init)
    yield
    for trainer in started:
        trainer.kill()


TINY = TrainConfig(epochs=1, batch_size=32, max_steps_per_epoch=4, device="cpu", emit_interval_s=0.0)


def test_events_arrive_in_order_and_the_final_one_is_returned(tmp_path: Path) -> None:
    events: list[TrainEvent] = []
    trainer = LaunchedTrainer()
    final = trainer(replace(TINY, runs_dir=tmp_path), events.append, RunControl())
    assert isinstance(events[0], RunStarted) and any(isinstance(e, StepsCompleted) for e in events)
    assert isinstance(final, RunFinished) and final.reason == "completed" and events[-1] == final
    assert trainer.process is not None and trainer.process.returncode == 0
    assert read_events(Path(final.run_dir)) == events  # the viewer saw exactly what the folder holds
    assert (Path(final.run_dir) / "checkpoint-last.pt").is_file()


def test_the_viewer_process_never_loads_torch(tmp_path: Path) -> None:
    code = f"""
import sys
from pathlib import Path
from rocmtui.cli.main import main
from rocmtui.config import TrainConfig
from rocmtui.events import RunControl
from rocmtui.launch.trainer import LaunchedTrainer
config = TrainConfig(epochs=1, batch_size=32, max_steps_per_epoch=2, device="cpu", runs_dir=Path({str(tmp_path)!r}))
final = LaunchedTrainer()(config, lambda event: None, RunControl())
assert type(final).__name__ == "RunFinished", final
print("torch" in sys.modules)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "False"


def test_a_stop_before_the_folder_exists_still_saves_a_checkpoint(tmp_path: Path) -> None:
    control = RunControl()
    control.request_stop()
    final = LaunchedTrainer()(replace(TINY, epochs=3, runs_dir=tmp_path), lambda _: None, control)
    assert isinstance(final, RunFinished) and final.reason == "stopped"
    assert final.checkpoint is not None and Path(final.checkpoint).is_file()


def test_a_pause_reaches_the_trainer_through_the_folder(tmp_path: Path) -> None:
    control = RunControl()
    control.pause()  # sent as soon as the folder exists
    events: list[TrainEvent] = []
    paused = threading.Event()

    def emit(event: TrainEvent) -> None:
        events.append(event)
        if isinstance(event, LogMessage) and event.message == "Paused":
            paused.set()

    config = replace(TINY, epochs=2, max_steps_per_epoch=None, runs_dir=tmp_path)
    trainer = LaunchedTrainer()
    runner = threading.Thread(target=trainer, args=(config, emit, control))
    runner.start()
    assert paused.wait(60)
    paused_at = time.time()
    run_dir = trainer.run_dir
    assert run_dir is not None

    def beat_since_paused() -> bool:  # the trainer, paused, lived a whole heartbeat period on
        status = read_status(run_dir)
        return status is not None and status.state == "paused" and status.heartbeat >= paused_at + HEARTBEAT_S

    wait_for(beat_since_paused, 30, "a heartbeat of the paused trainer")
    written = read_events(run_dir)
    paused_from = next(i for i, e in enumerate(written) if isinstance(e, LogMessage) and e.message == "Paused")
    assert not any(isinstance(e, StepsCompleted) for e in written[paused_from:]), "a step completed while paused"
    control.resume()
    runner.join(60)
    assert not runner.is_alive() and isinstance(events[-1], RunFinished) and events[-1].reason == "completed"


def test_a_trainer_killed_with_sigkill_is_reported_lost_and_its_folder_resumable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trainer = LaunchedTrainer()
    events: list[TrainEvent] = []

    def emit(event: TrainEvent) -> None:
        events.append(event)
        if isinstance(event, StepsCompleted) and event.epoch == 1 and event.epoch_step >= 3:
            trainer.kill()  # mid-epoch 2, after epoch 1's checkpoint

    config = replace(TINY, epochs=50, max_steps_per_epoch=None, runs_dir=tmp_path)
    final = trainer(config, emit, RunControl())
    assert isinstance(final, RunFailed) and "gone without a last word" in final.message
    run_dir = trainer.run_dir
    assert run_dir is not None and not is_locked(run_dir)
    status = read_status(run_dir)
    assert status is not None and status.state == "running"  # as written: readers call it "lost"
    assert main(["runs", "--runs-dir", str(tmp_path)]) == 0
    assert capsys.readouterr().out.splitlines()[1].startswith("lost")
    argv = ["train", "cifar", "--headless", "--device", "cpu", "--resume", str(run_dir), "--epochs", "2"]
    assert main(argv) == 0  # --resume continues the lost run in its folder
    resumed = read_events(run_dir)
    assert isinstance(resumed[-1], RunFinished) and resumed[-1].epochs_completed == 2
    assert sum(isinstance(e, RunStarted) for e in resumed) == 2


def test_bad_data_before_the_folder_is_one_line_and_kind_data(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    final = LaunchedTrainer()(replace(TINY, data_dir=empty, runs_dir=tmp_path), lambda _: None, RunControl())
    assert isinstance(final, RunFailed) and final.kind == "data" and "\n" not in final.message
    assert "Traceback" not in final.message


def test_leaving_detaches_and_the_run_trains_on_until_stopped(tmp_path: Path) -> None:
    control = RunControl()
    trainer = LaunchedTrainer()

    def emit(event: TrainEvent) -> None:
        if isinstance(event, StepsCompleted):
            control.leave.set()  # the viewer quits with "detach"

    config = replace(TINY, epochs=200, max_steps_per_epoch=None, runs_dir=tmp_path)
    assert trainer(config, emit, control) is None
    assert trainer.process is not None and trainer.run_dir is not None
    run_dir = trainer.run_dir
    steps_seen = sum(isinstance(e, StepsCompleted) for e in read_events(run_dir))
    wait_for(lambda: sum(isinstance(e, StepsCompleted) for e in read_events(run_dir)) > steps_seen, 60, "a step")
    assert trainer.process.poll() is None and is_locked(run_dir)  # still training
    send_command(trainer.run_dir, "stop")
    assert trainer.process.wait(60) == 0
    status = read_status(trainer.run_dir)
    assert status is not None and status.state == "stopped"
    assert isinstance(read_events(trainer.run_dir)[-1], RunFinished)


def test_sigterm_to_the_trainer_stops_it_with_a_checkpoint(tmp_path: Path) -> None:
    trainer = LaunchedTrainer()

    def emit(event: TrainEvent) -> None:
        if isinstance(event, StepsCompleted) and trainer.process is not None:
            trainer.process.send_signal(signal.SIGTERM)

    final = trainer(replace(TINY, epochs=50, max_steps_per_epoch=None, runs_dir=tmp_path), emit, RunControl())
    assert isinstance(final, RunFinished) and final.reason == "stopped"
