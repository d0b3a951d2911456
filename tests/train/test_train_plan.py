"""One plan per run: a resumed run reads its checkpoint once, and its settings enter each module once on
their way from ``run_headless`` to the step loop."""

from __future__ import annotations

import collections
import dataclasses
import sys
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
import torch

from rocmtui.config import TrainConfig
from rocmtui.launch.headless import run_headless
from rocmtui.train import checkpoints, resume
from rocmtui.train.distributed import SINGLE
from rocmtui.train.plan import RunPlan, plan_run, rank_plan

TRAIN = Path(resume.__file__).parent
LAUNCH = TRAIN.parent / "launch"


@pytest.fixture
def finished_run(small, capsys: pytest.CaptureFixture[str]) -> Iterator[TrainConfig]:
    """A one-epoch run, and the settings that resume it for a second epoch."""
    config = small(epochs=1)
    assert run_headless(config) == 0
    capsys.readouterr()
    yield dataclasses.replace(config, epochs=2, resume=next(config.runs_dir.iterdir()))


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The files ``torch.load`` reads from now on."""
    seen: list[Path] = []
    real = torch.load

    def counting(path: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(Path(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(torch, "load", counting)
    return seen


def test_a_resumed_headless_run_reads_its_checkpoint_once(finished_run: TrainConfig, loads: list[Path]) -> None:
    folder = finished_run.resume
    assert folder is not None and run_headless(finished_run) == 0
    assert loads == [folder / "checkpoint-last.pt"]


def test_a_rank_keeps_its_launchers_settings_and_reads_the_checkpoint_once(
    finished_run: TrainConfig, loads: list[Path]
) -> None:
    launcher = plan_run(finished_run)
    rank = rank_plan(launcher.config, str(launcher.device), launcher.resume.checkpoint, SINGLE)
    assert len(loads) == 2  # one each: the launcher's process and the rank's
    assert rank.config == launcher.config and rank.device == launcher.device
    assert rank.resume.state is not None and rank.resume.state["epoch"] == 1


def test_the_device_checks_the_settings_the_run_resumes_with(finished_run: TrainConfig) -> None:
    """``--resume RUN --optimizer muon`` of a fastnet run: muon is checked against the run's fastnet, not
    against the model this invocation would have had on its own."""
    folder = finished_run.resume
    assert folder is not None
    state = checkpoints.load_checkpoint(folder / checkpoints.LAST)
    state["config"].update(model="fastnet", optimizer="muon")  # only the settings are read before the device
    checkpoints.save_checkpoint(folder / checkpoints.LAST, {k: v for k, v in state.items() if k != "format"})
    given = dataclasses.replace(finished_run, optimizer="muon", given=("optimizer",))
    plan = plan_run(given)
    assert (plan.config.model, plan.config.optimizer) == ("fastnet", "muon")


def module_entries(config: TrainConfig, loop_starts: str) -> collections.Counter[str]:
    """How often a call from one module into another of ``rocmtui/train`` or ``rocmtui/launch`` carries the
    settings (a TrainConfig or a RunPlan, other than as the method's own object) while ``run_headless(config)``
    runs, until the function ``loop_starts`` of the step loop is first called."""
    entries: collections.Counter[str] = collections.Counter()

    def profile(frame: FrameType, event: str, _arg: object) -> None:
        if event != "call":
            return
        callee = Path(frame.f_code.co_filename)
        if callee.parent not in (TRAIN, LAUNCH):
            return
        if frame.f_code.co_name == loop_starts:
            sys.setprofile(None)
            return
        caller = frame.f_back
        if caller is not None and Path(caller.f_code.co_filename) == callee:
            return
        names = frame.f_code.co_varnames[: frame.f_code.co_argcount + frame.f_code.co_kwonlyargcount]
        args = [frame.f_locals[name] for name in names if name != "self" and name in frame.f_locals]
        if any(isinstance(value, TrainConfig | RunPlan) for value in args):
            entries[callee.name] += 1

    sys.setprofile(profile)
    try:
        assert run_headless(config) == 0
    finally:
        sys.setprofile(None)
    return entries


def test_the_settings_enter_each_module_once_on_their_way_to_the_loop(finished_run: TrainConfig) -> None:
    entries = module_entries(finished_run, loop_starts="_steps")
    assert {"headless.py", "plan.py", "resume.py", "device.py", "loop.py", "engine.py"} <= set(entries)
    assert {name: count for name, count in entries.items() if count != 1} == {}
