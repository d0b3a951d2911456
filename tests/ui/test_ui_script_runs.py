"""A tracked script's run (``rocmtui run``, ``watch`` of its folder) shown as a script's, never as a training's:
no epoch table without epochs, no training titles before its first event, no checkpoint promised, its steps at
the end, and a key's answer that the script's output cannot scroll away."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.pilot import Pilot
from ui_helpers import host_recording

from rocmtui.config import TrainConfig
from rocmtui.events import Emit, MetricsLogged, RunControl, RunFinished, TrackStarted, TrainEvent
from rocmtui.gpu.replay import ManualReplay
from rocmtui.run.listing import RunListing, listing_cells
from rocmtui.ui.screens.quit_confirm import QuitConfirm
from rocmtui.ui.screens.train import ANSWER_S
from rocmtui.ui.state.compare import run_labels
from rocmtui.ui.train_app import TrainApp

SIZE = (120, 40)


class HeldScript:
    """A script's events: held before the first until ``go`` is set, then up to its end (held again before it
    until ``end`` is set)."""

    def __init__(self, run_dir: Path, *, saves: bool = False, epochs: bool = False) -> None:
        self.go, self.end, self.sent = threading.Event(), threading.Event(), threading.Event()
        self.run_dir = run_dir
        self.saves = saves
        self.epochs = epochs

    def __call__(self, config: TrainConfig, emit: Emit, control: RunControl) -> None:
        while not self.go.wait(0.01):
            if control.leave.is_set() or control.stop.is_set():
                return
        events: list[TrainEvent] = [
            TrackStarted("mlp", str(self.run_dir), saves=self.saves),
            MetricsLogged(120, {"loss": 0.5, "acc": 0.8}, 1.5),
        ]
        for event in events:
            emit(event)
        self.sent.set()
        while not self.end.wait(0.01):
            if control.leave.is_set():
                return
            if control.stop.is_set():
                break
        emit(RunFinished("completed", 0, None, None, 2.0, 0.0, None, str(self.run_dir)))


def script_app(run_dir: Path, script: HeldScript) -> TrainApp:
    sampler = ManualReplay(host_recording())
    return TrainApp(TrainConfig(), script, sampler, detachable=True, run_dir=run_dir, script="mlp")


async def wait_for(pilot: Pilot[Any], condition: Callable[[], object]) -> None:
    for _ in range(500):
        if condition():
            return
        await pilot.pause(0.01)
    raise AssertionError("condition not reached")


async def test_a_script_shows_its_name_and_no_epoch_table_from_the_first_frame(tmp_path: Path) -> None:
    script = HeldScript(tmp_path)
    app = script_app(tmp_path, script)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.train_screen
        line = str(screen.info.line.render())
        assert "mlp" in line and "cifar10" not in line and "simplecnn" not in line  # no training's titles
        assert "Epoch" not in " ".join(screen.progress.render().plain.splitlines())
        assert not screen.table.display or not screen.table.region.height  # no empty epoch table
        script.go.set()
        await wait_for(pilot, script.sent.is_set)
        await wait_for(pilot, lambda: app.state.tracked is not None)
        screen.replot_now()
        await pilot.pause()
        assert not screen.table.region.height
        assert screen.log_view.region.height > 0
        script.end.set()
        await wait_for(pilot, lambda: app.final is not None)
        await pilot.press("q")
    head = app.final_lines()[0]
    assert "no epoch completed" not in head and "120 step(s)" in head


async def test_q_on_a_script_that_cannot_save_promises_no_checkpoint(tmp_path: Path) -> None:
    script = HeldScript(tmp_path, saves=False)
    app = script_app(tmp_path, script)
    async with app.run_test(size=SIZE) as pilot:
        script.go.set()
        await wait_for(pilot, lambda: app.state.tracked is not None)
        await pilot.press("q")
        await wait_for(pilot, lambda: isinstance(app.screen, QuitConfirm))
        said = " ".join(str(widget.render()) for widget in app.screen.query("Static"))
        assert "checkpoint" not in said and "stop" in said
        await pilot.press("n")
        app.control.leave.set()
        app.exit(0)


async def test_the_answer_to_s_stays_whatever_the_script_prints(tmp_path: Path) -> None:
    script = HeldScript(tmp_path, saves=False)
    app = script_app(tmp_path, script)
    async with app.run_test(size=SIZE) as pilot:
        script.go.set()
        await wait_for(pilot, lambda: app.state.tracked is not None)
        await pilot.press("s")
        await pilot.pause()
        for n in range(50):  # the script's output, as OutputTail sends it
            app.train_screen.note(f"line {n} of the script's output")
        app.train_screen.flush_text()
        notes = [note for note in app._notifications if "cannot save on request" in note.message]
        assert notes and notes[0].timeout >= 3.0 and ANSWER_S >= 3.0
        app.control.leave.set()
        app.exit(0)


def test_compared_scripts_are_named_by_their_track_name() -> None:
    folders = ["runs/20261206-055054-mlp", "runs/20261206-055128-mlp"]
    assert run_labels(folders, names=["mlp", "mlp-wide"]) == ["mlp", "mlp-wide"]
    assert run_labels(folders, names=["mlp", "mlp"]) == ["mlp 055054", "mlp 055128"]
    assert run_labels(folders) == ["055054-mlp", "055128-mlp"]  # no names (train runs): the folders'


def test_a_live_script_that_has_logged_nothing_is_not_listed_as_dashes() -> None:
    info = RunListing("runs/20261206-055054-mlp", "running", "mlp", 0, 0, None, 0.0, "", None, 1, kind="script")
    state, _started, what, progress, result, *_ = listing_cells(info, 40)
    assert (state, what, progress, result) == ("running", "mlp", "no step yet", "nothing logged")
