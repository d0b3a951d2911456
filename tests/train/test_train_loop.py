"""train() on the CPU: event order and contents, the metrics log, stop, pause, save requests, failures."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
import torch

from rocmtui.events import (
    EpochCompleted,
    LogMessage,
    RunControl,
    RunFailed,
    RunFinished,
    RunStarted,
    StepsCompleted,
    TrainEvent,
    event_from_dict,
)
from rocmtui.run.format import VERSION
from rocmtui.run.lock import is_locked
from rocmtui.run.status import read_status
from rocmtui.run.stream import read_events
from rocmtui.train import checkpoints, epochs
from rocmtui.train.evaluate import evaluate
from rocmtui.train.loop import train
from rocmtui.train.saving import Saver
from rocmtui.train.step import EagerStep
from rocmtui.train.summary import RunSummary


def run(config, control: RunControl | None = None, on_event=None) -> tuple[list[TrainEvent], RunSummary]:
    events: list[TrainEvent] = []
    control = control or RunControl()

    def emit(event: TrainEvent) -> None:
        events.append(event)
        if on_event is not None:
            on_event(event, control)

    return events, train(config, emit, control)


def test_events_come_in_order_with_consistent_contents(small) -> None:
    config = small(epochs=2)
    events, summary = run(config)
    kinds = [type(e).__name__ for e in events]
    assert kinds[0] == "RunStarted"
    assert kinds[-1] == "RunFinished"
    assert kinds.count("EpochCompleted") == 2
    started = events[0]
    assert isinstance(started, RunStarted)
    assert started.device == "cpu" and started.train_size == 1900 and started.test_size == 600
    assert started.steps_per_epoch == 6 and started.start_epoch == 0 and len(started.classes) == 10
    assert started.notice is not None and "1,900-image CIFAR-10 sample" in started.notice
    assert any(isinstance(e, LogMessage) and e.message == started.notice for e in events)
    steps = [e for e in events if isinstance(e, StepsCompleted)]
    assert sum(len(e.losses) for e in steps) == 12
    assert [e.step for e in steps] == sorted(e.step for e in steps) and steps[-1].step == 12
    assert all(e.images_per_s > 0 and e.lr == pytest.approx(1e-3) for e in steps)
    # each epoch's StepsCompleted come before its EpochCompleted
    first_epoch_end = kinds.index("EpochCompleted")
    assert all(e.epoch == 0 for e in events[:first_epoch_end] if isinstance(e, StepsCompleted))
    epoch = events[first_epoch_end]
    assert isinstance(epoch, EpochCompleted) and epoch.epoch == 0 and epoch.epochs == 2 and epoch.is_best
    assert 0.0 <= epoch.test_acc <= 1.0 and epoch.train_loss > 0 and epoch.seconds > 0
    finished = events[-1]
    assert isinstance(finished, RunFinished) and finished.reason == "completed" and finished.epochs_completed == 2
    assert finished.peak_memory_bytes is None and len(finished.per_class_acc) == 10
    assert summary.event == finished


def test_metrics_log_holds_every_event_and_the_run_folder_is_complete(small) -> None:
    events, summary = run(small())
    assert summary.run_dir is not None
    folder = Path(summary.run_dir)
    assert folder.parent == small().runs_dir and "-cifar10-simplecnn-" in folder.name  # a random suffix last
    lines = [json.loads(line) for line in (folder / "metrics.jsonl").read_text().splitlines()]
    assert lines[0] == {"seq": 0, "format": "rocmtui-events", "version": VERSION}
    assert [line["seq"] for line in lines] == list(range(len(events) + 1))
    assert [event_from_dict(line) for line in lines[1:]] == events
    assert read_events(folder) == events
    assert {p.name for p in folder.iterdir()} >= {
        "config.json",
        "metrics.jsonl",
        checkpoints.LAST,
        checkpoints.BEST,
        "summary.json",
    }
    status = read_status(folder)
    assert status is not None and status.state == "finished" and status.epoch == 2 and not is_locked(folder)
    assert not (folder / "control").exists()  # a finished run has no control channel
    assert json.loads((folder / "summary.json").read_text())["reason"] == "completed"
    assert json.loads((folder / "config.json").read_text())["batch_size"] == 32
    # each report says when it happened: within its line's own time, an epoch's before its test pass
    reports = [line for line in lines[1:] if line["event"] in ("StepsCompleted", "EpochCompleted")]
    assert reports and all(0 < line["wall"] <= line["t"] + 0.001 for line in reports)  # t is in ms
    walls = [line["wall"] for line in reports]
    assert walls == sorted(walls)


def test_steps_are_batched_between_emits(small) -> None:
    events, _ = run(small(emit_interval_s=1e9))
    steps = [e for e in events if isinstance(e, StepsCompleted)]
    assert [len(e.losses) for e in steps] == [6, 6]  # only the epoch ends flush


def test_stop_mid_epoch_writes_a_checkpoint_and_finishes_stopped(small) -> None:
    def stop_at_step_3(event: TrainEvent, control: RunControl) -> None:
        if isinstance(event, StepsCompleted) and event.step == 3:
            control.request_stop()

    events, summary = run(small(epochs=3), on_event=stop_at_step_3)
    finished = events[-1]
    assert isinstance(finished, RunFinished) and finished.reason == "stopped" and finished.epochs_completed == 0
    assert not any(isinstance(e, StepsCompleted) and e.step > 3 for e in events)
    assert summary.run_dir is not None
    state = checkpoints.load_checkpoint(Path(summary.run_dir) / checkpoints.LAST)
    assert (state["epoch"], state["epoch_step"], state["global_step"]) == (0, 3, 3)


def test_pause_blocks_steps_until_resumed(small) -> None:
    paused = threading.Event()
    control = RunControl()
    events: list[TrainEvent] = []

    def emit(event: TrainEvent) -> None:
        events.append(event)
        if isinstance(event, StepsCompleted) and event.step == 2:
            control.pause()
        if isinstance(event, LogMessage) and event.message == "Paused":
            paused.set()

    worker = threading.Thread(target=train, args=(small(), emit, control))
    worker.start()
    assert paused.wait(60)
    count = len(events)
    assert worker.is_alive()  # blocked in the pause, not finished
    assert not control.wait_while_paused(timeout=0.01)
    assert len(events) == count
    control.resume()
    worker.join(60)
    names = [e.message if isinstance(e, LogMessage) else type(e).__name__ for e in events]
    i = names.index("Paused")
    assert names[i + 1] == "Resumed"
    assert isinstance(events[-1], RunFinished) and events[-1].reason == "completed"


def test_stop_while_paused_ends_the_run(small) -> None:
    def pause_then_stop(event: TrainEvent, control: RunControl) -> None:
        if isinstance(event, StepsCompleted) and event.step == 2:
            control.pause()
        if isinstance(event, LogMessage) and event.message == "Paused":
            control.request_stop()

    events, _ = run(small(), on_event=pause_then_stop)
    assert isinstance(events[-1], RunFinished) and events[-1].reason == "stopped"


def test_save_request_writes_a_checkpoint_at_the_next_step(small) -> None:
    def save_at_step_2(event: TrainEvent, control: RunControl) -> None:
        if isinstance(event, StepsCompleted) and event.step == 2:
            control.request_save()

    events, _ = run(small(epochs=1), on_event=save_at_step_2)
    saved = [e for e in events if isinstance(e, LogMessage) and e.message.startswith("Checkpoint saved")]
    assert len(saved) == 1 and checkpoints.LAST in saved[0].message
    i = events.index(saved[0])
    before_save = events[i - 1]
    assert isinstance(before_save, StepsCompleted) and before_save.step == 2


def test_exploding_loss_fails_with_the_step_named(small) -> None:
    # lr 1e6 only drives this model's loss to ~1e24 (still finite); 1e10 overflows float32 within a few steps
    events, summary = run(small(optimizer="sgd", lr=1e10, epochs=3))
    failed = events[-1]
    assert isinstance(failed, RunFailed) and failed.kind == "nan"
    assert failed.step is not None and f"step {failed.step}" in failed.message
    assert all(e.step < failed.step for e in events if isinstance(e, StepsCompleted))
    assert summary.event == failed
    assert summary.run_dir is not None
    lines = (Path(summary.run_dir) / "metrics.jsonl").read_text().splitlines()
    assert json.loads(lines[-1])["event"] == "RunFailed"
    assert all(json.loads(line) for line in lines)  # every line written so far is intact


def test_out_of_memory_suggests_smaller_batches(small, monkeypatch: pytest.MonkeyPatch) -> None:
    def oom(*_args: object) -> None:
        raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")

    monkeypatch.setattr(EagerStep, "__call__", oom)
    events, _ = run(small())
    failed = events[-1]
    assert isinstance(failed, RunFailed) and failed.kind == "oom"
    assert "--batch-size" in failed.message and "--amp bf16" in failed.message


def test_other_errors_become_one_line_failures(small, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_args: object) -> None:
        raise ValueError("shapes do not match\nsecond line")

    monkeypatch.setattr(EagerStep, "__call__", broken)
    events, _ = run(small())
    failed = events[-1]
    assert isinstance(failed, RunFailed) and failed.kind == "error"
    assert failed.message == "ValueError: shapes do not match"


def test_a_failed_first_step_of_an_epoch_still_sends_and_saves_the_epoch_before(
    small, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An epoch's events and checkpoint follow the next epoch's first step; when that step fails they are
    still sent and written, before the failure."""
    real_step, calls = EagerStep.__call__, {"n": 0}

    def fails_at_the_seventh(self: EagerStep, *args: object) -> None:
        calls["n"] += 1
        if calls["n"] == 7:  # the first step of the second epoch (6 steps an epoch)
            raise ValueError("the second epoch's first step")
        real_step(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(EagerStep, "__call__", fails_at_the_seventh)
    events, summary = run(small(epochs=2))
    kinds = [type(e).__name__ for e in events if isinstance(e, EpochCompleted | RunFailed)]
    assert kinds == ["EpochCompleted", "RunFailed"]
    assert summary.run_dir is not None
    saved = checkpoints.load_checkpoint(summary.run_dir / checkpoints.LAST)
    assert saved["epoch"] == 1 and saved["epoch_step"] == 0 and saved["global_step"] == 6


def test_a_failed_epoch_checkpoint_is_one_failure_and_its_events_are_sent_once(
    small, monkeypatch: pytest.MonkeyPatch
) -> None:
    def disk_full(*_args: object, **_kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Saver, "after_epoch", disk_full)
    events, _ = run(small(epochs=3, emit_interval_s=1e9))
    steps = [e.step for e in events if isinstance(e, StepsCompleted)]
    assert steps == [6] and isinstance(events[-1], RunFailed) and events[-1].kind == "disk"


def test_a_pause_at_an_epochs_end_comes_after_that_epochs_events(small, monkeypatch: pytest.MonkeyPatch) -> None:
    """A pause asked for while an epoch is evaluated: that epoch's events are sent (and its checkpoint handed
    on) before "Paused", not held back for the pause."""
    control = RunControl()
    paused_once = threading.Event()

    def paused_during(engine: object, tta: bool = False) -> object:
        if not paused_once.is_set():
            paused_once.set()
            control.pause()
        return evaluate(engine, tta)  # type: ignore[arg-type]

    def resume_once_paused(event: TrainEvent, control: RunControl) -> None:
        if isinstance(event, LogMessage) and event.message == "Paused":
            control.resume()

    monkeypatch.setattr(epochs, "evaluate", paused_during)
    events, summary = run(small(epochs=2), control, on_event=resume_once_paused)
    assert isinstance(summary.event, RunFinished) and summary.event.epochs_completed == 2
    names = [type(e).__name__ if not isinstance(e, LogMessage) else e.message for e in events]
    assert names.index("EpochCompleted") < names.index("Paused") < names.index("Resumed")


def test_missing_data_is_a_data_failure_not_an_exception(small) -> None:
    events, summary = run(small(dataset="mnist"))
    assert len(events) == 1 and isinstance(events[0], RunFailed) and events[0].kind == "data"
    assert "--download" in events[0].message and summary.run_dir is None


@pytest.mark.parametrize(
    "changes",
    [
        {"amp": "bf16", "channels_last": True},
        {"optimizer": "adamw", "schedule": "onecycle", "weight_decay": 5e-4, "label_smoothing": 0.1},
        {"optimizer": "sgd", "lr": 0.05, "schedule": "linear", "augment": True},
    ],
)
def test_training_options_run_on_the_cpu(small, changes: dict[str, object]) -> None:
    events, _ = run(small(epochs=1, **changes))
    assert isinstance(events[-1], RunFinished), events[-1]


def test_stats_give_the_same_numbers_eager_and_static() -> None:
    from rocmtui.train.stats import Stats

    torch.manual_seed(0)
    steps = [(torch.rand(()), torch.randn(n, 10), torch.randint(0, 10, (n,))) for n in (8, 8, 5)]
    eager, static = Stats(torch.device("cpu")), Stats(torch.device("cpu"))
    for loss, logits, labels in steps:
        eager.record(loss, logits, labels)
        static.record_static(loss, (logits.argmax(1) == labels).sum(), labels.shape[0])
    assert eager.count == static.count == 3
    assert eager.drain() == static.drain() == [float(loss) for loss, _, _ in steps]
    assert eager.loss_sum == pytest.approx(static.loss_sum)
    assert eager.loss_sum == pytest.approx(sum(float(loss) * len(y) for loss, _, y in steps))
    assert int(eager.correct) == int(static.correct) == sum(int((o.argmax(1) == y).sum()) for _, o, y in steps)
    assert eager.count == 0 and eager.pending == []


@pytest.mark.slow
def test_host_reads_do_not_grow_with_the_number_of_steps(small, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every .item()/.tolist() is a GPU sync: between emits the loop must make none, however many steps."""
    calls = {"n": 0}
    real_item, real_tolist = torch.Tensor.item, torch.Tensor.tolist

    def item(self: torch.Tensor):
        calls["n"] += 1
        return real_item(self)

    def tolist(self: torch.Tensor):
        calls["n"] += 1
        return real_tolist(self)

    monkeypatch.setattr(torch.Tensor, "item", item)
    monkeypatch.setattr(torch.Tensor, "tolist", tolist)
    counts = []
    for steps in (4, 16):
        calls["n"] = 0
        events, _ = run(small(max_steps_per_epoch=steps, emit_interval_s=1e9, checkpoint_every_epoch=False))
        assert sum(len(e.losses) for e in events if isinstance(e, StepsCompleted)) == 2 * steps
        counts.append(calls["n"])
    assert counts[0] == counts[1] and counts[0] <= 12


def test_an_unwritable_runs_dir_is_a_failure_event(small, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("a file where the runs folder should go")
    events, summary = run(small(runs_dir=blocker / "runs"))
    assert len(events) == 1 and isinstance(events[0], RunFailed) and events[0].kind == "error"
    assert events[0].message.startswith(("FileExistsError", "NotADirectoryError")) and summary.run_dir is None
