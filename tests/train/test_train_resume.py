"""Checkpoints: atomic writes, corrupt and foreign files, and resumes that match an uninterrupted run."""

from __future__ import annotations

import dataclasses
import gc
import json
import os
import weakref
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from rocmtui.base.errors import CheckpointError
from rocmtui.events import EpochCompleted, LogMessage, RunControl, RunFinished, StepsCompleted, TrainEvent
from rocmtui.run.listing import run_info
from rocmtui.train import checkpoints, epochs
from rocmtui.train.evaluate import evaluate
from rocmtui.train.gpudata import permutation
from rocmtui.train.loop import train
from rocmtui.train.plan import plan_run
from rocmtui.train.resume import prepare_resume
from rocmtui.train.state import Progress


def epochs_of(run_dir: Path) -> list[dict[str, object]]:
    lines = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    return [line for line in lines if line.get("event") == "EpochCompleted"]


def assert_same_epochs(got: list[dict[str, object]], want: list[dict[str, object]]) -> None:
    assert [e["epoch"] for e in got] == [e["epoch"] for e in want]
    for a, b in zip(got, want, strict=True):
        for key in ("train_loss", "train_acc", "test_loss", "test_acc", "lr"):
            assert a[key] == pytest.approx(b[key], rel=1e-6, abs=1e-7), (a["epoch"], key)


def stop_at(step: int):
    def on_event(event: TrainEvent, control: RunControl) -> None:
        if isinstance(event, StepsCompleted) and event.step == step:
            control.request_stop()

    return on_event


def run(config, on_event=None) -> Path:
    control = RunControl()

    def emit(event: TrainEvent) -> None:
        if on_event is not None:
            on_event(event, control)

    summary = train(config, emit, control)
    assert isinstance(summary.event, RunFinished), summary.event
    assert summary.run_dir is not None
    return summary.run_dir


def random_data(folder: Path, train: int, test: int) -> Path:
    """A --data-dir of random CIFAR-shaped images: a few, so that a run on the CPU takes a fraction of a second."""
    rng = np.random.default_rng(0)
    folder.mkdir()
    np.savez(
        folder / "cifar10.npz",
        train_images=rng.integers(0, 256, (train, 32, 32, 3), dtype=np.uint8),
        train_labels=rng.integers(0, 10, train, dtype=np.uint8),
        test_images=rng.integers(0, 256, (test, 32, 32, 3), dtype=np.uint8),
        test_labels=rng.integers(0, 10, test, dtype=np.uint8),
    )
    return folder


def test_a_run_stopped_at_an_epochs_end_then_mid_epoch_resumes_to_the_uninterrupted_runs_epochs(
    small, tmp_path: Path
) -> None:
    """The default tier's exact resume, a few steps on the CPU: stopped at the first epoch's end, resumed, stopped
    inside the second epoch, resumed; the epochs equal an uninterrupted run's, so the data generator (its state
    between epochs, and the epoch's draws mid-epoch), the loss and correct sums so far, the schedule and the
    optimizer all came back from the checkpoints."""
    config = small(
        epochs=3, max_steps_per_epoch=3, batch_size=8, augment=True, schedule="onecycle", optimizer="sgd", lr=0.05,
        data_dir=random_data(tmp_path / "data", 24, 8),
    )  # fmt: skip
    whole = run(config)
    part = run(dataclasses.replace(config, runs_dir=config.runs_dir / "b"), stop_at(3))
    assert len(epochs_of(part)) == 1
    run(dataclasses.replace(config, resume=part), stop_at(5))
    assert len(epochs_of(part)) == 1  # stopped inside the second epoch
    run(dataclasses.replace(config, resume=part))
    assert_same_epochs(epochs_of(part), epochs_of(whole))


def test_a_finished_run_given_more_epochs_draws_the_uninterrupted_runs_data_order(
    small, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run's last checkpoint, at an epoch's end, has no order drawn for the next epoch: only the data
    generator's state between epochs. Resumed for one more epoch, the run draws that epoch's order (and its
    augmentation) from it, as the uninterrupted run did, and trains to the same figures."""
    orders: list[list[int]] = []

    def recorded(n: int, generator: torch.Generator) -> torch.Tensor:
        order = permutation(n, generator)
        orders.append(order.tolist())
        return order

    monkeypatch.setattr(epochs, "permutation", recorded)
    config = small(
        epochs=2, max_steps_per_epoch=3, batch_size=8, augment=True, data_dir=random_data(tmp_path / "data", 24, 8)
    )
    whole = run(config)
    uninterrupted, orders[:] = list(orders), []
    short = run(dataclasses.replace(config, epochs=1, runs_dir=config.runs_dir / "b"))
    run(dataclasses.replace(config, resume=short))
    assert len(uninterrupted) == 2 and uninterrupted[0] != uninterrupted[1]  # each epoch draws its own order
    assert orders == uninterrupted
    assert_same_epochs(epochs_of(short), epochs_of(whole))


@pytest.mark.slow
@pytest.mark.parametrize("stop_step", [8, 6], ids=["mid-epoch", "epoch-end"])
def test_resume_matches_an_uninterrupted_run(small, stop_step: int) -> None:
    # augmentation and a schedule make the data generator and the step count matter
    config = small(epochs=3, augment=True, schedule="onecycle", optimizer="sgd", lr=0.05)
    whole = run(config)
    part = run(dataclasses.replace(config, runs_dir=config.runs_dir / "b"), stop_at(stop_step))
    resumed = run(dataclasses.replace(config, resume=part))
    assert resumed == part  # the same folder, its metrics.jsonl appended
    assert_same_epochs(epochs_of(part), epochs_of(whole))
    lines = (part / "metrics.jsonl").read_text().splitlines()
    assert sum(json.loads(line).get("event") == "RunStarted" for line in lines) == 2
    assert any(f"step {stop_step}" in json.loads(line).get("message", "") for line in lines)


@pytest.mark.slow
def test_a_stop_during_an_epochs_test_pass_resumes_exactly(small, monkeypatch: pytest.MonkeyPatch) -> None:
    """A stop while the first epoch is evaluated, the second epoch already drawn: the run stops at the boundary,
    with the first epoch's events and checkpoint sent, and resumes to the uninterrupted run's epochs."""
    config = small(epochs=3, augment=True, schedule="onecycle", optimizer="sgd", lr=0.05)
    whole = run(config)
    control = RunControl()
    original = evaluate

    def stopped_during(engine: Any, tta: bool = False) -> Any:
        control.request_stop()
        return original(engine, tta)

    monkeypatch.setattr(epochs, "evaluate", stopped_during)
    events: list[TrainEvent] = []
    summary = train(dataclasses.replace(config, runs_dir=config.runs_dir / "b"), events.append, control)
    monkeypatch.setattr(epochs, "evaluate", original)
    assert isinstance(summary.event, RunFinished) and summary.event.epochs_completed == 1
    assert [type(e).__name__ for e in events if isinstance(e, EpochCompleted | RunFinished)] == [
        "EpochCompleted", "RunFinished",
    ]  # fmt: skip
    part = summary.run_dir
    assert part is not None
    run(dataclasses.replace(config, resume=part))
    assert_same_epochs(epochs_of(part), epochs_of(whole))


@pytest.mark.slow
def test_a_fast_recipe_run_resumes_exactly(small, tmp_path: Path) -> None:
    """Muon's momentum, the whitening bias's own span (3 epochs of 4 steps: it ends after the resume), the
    alternating flips (an odd epoch resumed mid-way) and the epoch's crop side (its 28 px crops redrawn) all
    come back from the checkpoint. On 64 random images
    and 20 test images: fastnet's test passes on the CPU would take most of the time otherwise."""
    folder = random_data(tmp_path / "data", 64, 20)
    config = small(
        model="fastnet", optimizer="muon", lr=0.24, weight_decay=0.004, schedule="linear", label_smoothing=0.2,
        augment=True, jitter=0.13, crop_sizes=(24, 28), epochs=4, max_steps_per_epoch=4, batch_size=16,
        data_dir=folder,
    )  # fmt: skip
    whole = run(config)
    part = run(dataclasses.replace(config, runs_dir=config.runs_dir / "b"), stop_at(6))
    resumed = run(dataclasses.replace(config, resume=part))
    assert resumed == part
    assert_same_epochs(epochs_of(part), epochs_of(whole))
    finished = [json.loads(line) for line in (part / "metrics.jsonl").read_text().splitlines()][-1]
    assert finished["event"] == "RunFinished" and finished["tta_test_acc"] is not None


@pytest.mark.slow  # trains for more than a second on the 2-core box
def test_resume_with_more_epochs_continues_the_run(small) -> None:
    config = small(epochs=3)
    whole = run(config)
    short = run(dataclasses.replace(config, epochs=1, runs_dir=config.runs_dir / "b"))
    run(dataclasses.replace(config, resume=short / checkpoints.LAST))
    assert_same_epochs(epochs_of(short), epochs_of(whole))
    lines = [json.loads(line) for line in (short / "metrics.jsonl").read_text().splitlines()]
    starts = [line for line in lines if line.get("event") == "RunStarted"]
    first_epoch = epochs_of(short)[0]
    assert [start["best_acc"] for start in starts] == [None, first_epoch["test_acc"]]  # the status keeps it
    assert run_info(short).best_acc == max(e["test_acc"] for e in epochs_of(short))  # type: ignore[type-var]


@pytest.mark.slow  # two runs
def test_a_resumed_run_lets_go_of_the_checkpoint_once_restored(small) -> None:
    config = small(epochs=1)
    done = run(config)
    plan = plan_run(dataclasses.replace(config, epochs=2, resume=done))
    assert plan.resume.state is not None
    saved = weakref.ref(plan.resume.state["model"]["0.weight"])
    summary = train(plan, lambda _event: None, RunControl())
    assert isinstance(summary.event, RunFinished)
    gc.collect()
    assert plan.resume.state == {}
    assert saved() is None  # the model's weights as saved are no longer held anywhere


def test_resuming_a_finished_run_without_more_epochs_is_refused(small) -> None:
    done = run(small(epochs=2))
    with pytest.raises(CheckpointError, match="already trained 2 of 2 epochs; pass --epochs N with N above 2"):
        prepare_resume(small(resume=done))
    with pytest.raises(CheckpointError, match="already trained 2 of 1 epochs"):
        prepare_resume(small(epochs=1, resume=done))
    assert prepare_resume(small(epochs=4, resume=done)).config.epochs == 4
    short = run(dataclasses.replace(small(epochs=3), runs_dir=done.parent / "b"), stop_at(2))
    assert prepare_resume(small(epochs=0, resume=short)).config.epochs == 3  # --epochs left out: the run's own


def test_options_that_change_a_resumed_run_are_refused(small) -> None:
    done = run(small(epochs=1, optimizer="sgd", lr=0.05))
    with pytest.raises(CheckpointError, match=r"--lr 0.01 \(the run's: 0.05\), --augment on \(the run's: off\)"):
        prepare_resume(small(epochs=2, optimizer="sgd", lr=0.01, augment=True, resume=done, given=("lr", "augment")))
    resumed = prepare_resume(small(epochs=2, lr=0.01, augment=True, resume=done)).config  # not given: the run's own
    assert (resumed.optimizer, resumed.lr, resumed.augment) == ("sgd", 0.05, False)


def test_an_interrupted_save_leaves_the_previous_checkpoint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / checkpoints.LAST
    checkpoints.save_checkpoint(path, {"config": {}, "value": torch.arange(4)})

    def crash(*_args: object) -> None:
        raise OSError("simulated crash between write and rename")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError, match="simulated"):
        checkpoints.save_checkpoint(path, {"config": {}, "value": torch.arange(8)})
    assert torch.equal(checkpoints.load_checkpoint(path)["value"], torch.arange(4))
    assert sorted(p.name for p in tmp_path.iterdir()) == [checkpoints.LAST]  # no temp file left behind


def test_a_failed_save_mid_run_is_a_failure_event_and_keeps_the_last_good_checkpoint(
    small, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_replace = os.replace
    calls = {"n": 0}

    def crash_on_second_last(src: object, dst: object) -> None:
        if Path(str(dst)).name == checkpoints.LAST:
            calls["n"] += 1
            if calls["n"] == 2:
                raise OSError("disk full")
        real_replace(src, dst)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "replace", crash_on_second_last)
    events: list[TrainEvent] = []
    summary = train(small(epochs=3), events.append, RunControl())
    assert summary.event.kind == "error" and "disk full" in summary.event.message  # type: ignore[union-attr]
    assert summary.run_dir is not None
    state = checkpoints.load_checkpoint(summary.run_dir / checkpoints.LAST)
    assert state["epoch"] == 1


def test_garbage_and_truncated_checkpoints_give_one_line_errors(small, tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.pt"
    garbage.write_bytes(b"not a checkpoint at all")
    with pytest.raises(CheckpointError, match="corrupt") as err:
        checkpoints.load_checkpoint(garbage)
    assert "\n" not in str(err.value)
    folder = run(small(epochs=1))
    good = (folder / checkpoints.LAST).read_bytes()
    truncated = tmp_path / "truncated.pt"
    truncated.write_bytes(good[: len(good) // 2])
    with pytest.raises(CheckpointError, match="corrupt"):
        prepare_resume(small(resume=truncated))


def test_foreign_and_incompatible_checkpoints_are_refused(small, tmp_path: Path) -> None:
    foreign = tmp_path / "foreign.pt"
    torch.save({"state_dict": {}}, foreign)
    with pytest.raises(CheckpointError, match="not a rocmtui checkpoint"):
        checkpoints.load_checkpoint(foreign)
    folder = run(small(epochs=1))
    with pytest.raises(CheckpointError, match="cifar10 run, not mnist"):
        prepare_resume(small(dataset="mnist", resume=folder))
    empty = tmp_path / "empty-run"
    empty.mkdir()
    with pytest.raises(CheckpointError, match=r"no checkpoint-last\.pt"):
        prepare_resume(small(resume=empty))


def test_a_checkpoint_that_does_not_fit_the_model_fails_the_run_cleanly(small) -> None:
    folder = run(small(epochs=1))
    state = checkpoints.load_checkpoint(folder / checkpoints.LAST)
    state["model"]["0.weight"] = torch.zeros(1)
    checkpoints.save_checkpoint(folder / checkpoints.LAST, {k: v for k, v in state.items() if k != "format"})
    events: list[TrainEvent] = []
    summary = train(small(resume=folder), events.append, RunControl())
    assert summary.event.kind == "data" and "does not fit" in summary.event.message  # type: ignore[union-attr]
    assert not any(isinstance(e, EpochCompleted | LogMessage) for e in events)


def test_rates_saved_as_tensors_come_back_as_plain_numbers(small) -> None:
    """A CUDA-graph run keeps its learning rates in device tensors; a resume must not keep stale copies."""
    from rocmtui.train.data import load_arrays, resolve_source
    from rocmtui.train.engine import build_engine
    from rocmtui.train.state import restore, snapshot

    config = small(schedule="onecycle")
    engine = build_engine(config, load_arrays(resolve_source(config)), torch.device("cpu"))
    for group in engine.optimizer.param_groups:
        group["lr"] = torch.tensor(0.123)
    state = snapshot(engine, Progress(), 0.0)
    fresh = build_engine(config, load_arrays(resolve_source(config)), torch.device("cpu"))
    restore(fresh, state, Path("x"))
    assert [g["lr"] for g in fresh.optimizer.param_groups] == [pytest.approx(0.123)]
    assert all(type(g["lr"]) is float for g in fresh.optimizer.param_groups)
