"""ProcessTrainer: train() in a spawned child, with events relayed and commands mirrored."""

from __future__ import annotations

import subprocess
import sys
import threading
from dataclasses import replace
from pathlib import Path

import pytest

from rocmtui.config import TrainConfig
from rocmtui.events import RunControl, RunFailed, RunFinished, RunStarted, StepsCompleted, TrainEvent
from rocmtui.train.child import ProcessTrainer

pytestmark = pytest.mark.slow  # functional tier: real processes or interpreters

TINY = TrainConfig(epochs=1, batch_size=32, max_steps_per_epoch=4, device="cpu", emit_interval_s=0.0)


def test_events_arrive_in_order_and_the_final_one_is_returned(tmp_path: Path) -> None:
    events: list[TrainEvent] = []
    control = RunControl()

    def emit(event: TrainEvent) -> None:
        events.append(event)
        if isinstance(event, RunFinished):
            control.request_stop()  # as the UI does on quit: must not hang on a child that is exiting

    final = ProcessTrainer()(replace(TINY, runs_dir=tmp_path), emit, control)
    assert isinstance(events[0], RunStarted)
    assert any(isinstance(e, StepsCompleted) for e in events)
    assert isinstance(final, RunFinished)
    assert events[-1] == final
    assert final.reason == "completed"
    assert (Path(final.run_dir) / "checkpoint-last.pt").is_file()


def test_the_parent_process_never_loads_torch(tmp_path: Path) -> None:
    """Events carry plain values: unpickling them in the UI's process must not import torch."""
    code = f"""
import sys
from pathlib import Path
from rocmtui.config import TrainConfig
from rocmtui.events import RunControl
from rocmtui.train.child import ProcessTrainer
config = TrainConfig(epochs=1, batch_size=32, max_steps_per_epoch=2, device="cpu", runs_dir=Path({str(tmp_path)!r}))
final = ProcessTrainer()(config, lambda event: None, RunControl())
assert type(final).__name__ == "RunFinished", final
print("torch" in sys.modules)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "False"


def test_a_stop_reaches_the_child_which_saves_a_checkpoint(tmp_path: Path) -> None:
    control = RunControl()
    control.request_stop()
    final = ProcessTrainer()(replace(TINY, epochs=3, runs_dir=tmp_path), lambda _: None, control)
    assert isinstance(final, RunFinished)
    assert final.reason == "stopped"
    assert final.checkpoint is not None
    assert Path(final.checkpoint).is_file()


def test_a_pause_reaches_the_child(tmp_path: Path) -> None:
    control = RunControl()
    control.pause()
    started, stepped = threading.Event(), threading.Event()

    def emit(event: TrainEvent) -> None:
        if isinstance(event, RunStarted):
            started.set()
        if isinstance(event, StepsCompleted):
            stepped.set()

    runner = threading.Thread(target=ProcessTrainer(), args=(replace(TINY, runs_dir=tmp_path), emit, control))
    runner.start()
    assert started.wait(60)
    assert not stepped.wait(1.5), "a step completed while paused"
    control.resume()
    assert stepped.wait(60)
    runner.join(60)
    assert not runner.is_alive()


def test_a_child_that_dies_is_reported_as_a_failure(tmp_path: Path) -> None:
    trainer = ProcessTrainer()
    events: list[TrainEvent] = []

    def emit(event: TrainEvent) -> None:
        events.append(event)
        if isinstance(event, RunStarted):
            trainer.kill()

    final = trainer(replace(TINY, epochs=50, runs_dir=tmp_path), emit, RunControl())
    assert isinstance(final, RunFailed)
    assert "ended unexpectedly (exit code -9)" in final.message
    assert events[-1] == final


def test_an_exception_in_the_child_becomes_a_failure_event() -> None:
    final = ProcessTrainer("rocmtui.train.child:_resolve")(TINY, lambda _: None, RunControl())
    assert isinstance(final, RunFailed)
    assert final.kind == "error"
    assert final.message.startswith("TypeError:")
