"""Resumes that mean what they say: data-only checkpoints, the same data, branches, options given explicitly."""

from __future__ import annotations

import builtins
import json
import pickle
from pathlib import Path

import pytest
import torch

from rocmtui.base.errors import CheckpointError
from rocmtui.cli.main import build_parser, main, train_config
from rocmtui.events import RunControl, RunFailed, RunFinished, TrainEvent
from rocmtui.train import checkpoints
from rocmtui.train.data import load_arrays, resolve_source
from rocmtui.train.loop import train
from rocmtui.train.resume import prepare_resume


class Payload:
    """Unpickling this calls ``open(marker, "w")``: the file appears if the loader runs code."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        return builtins.open, (str(self.marker), "w")


def crafted(folder: Path, kind: str) -> tuple[Path, Path]:
    """A checkpoint-looking file that would create ``marker`` when loaded with full pickle."""
    marker = folder / f"pwned-{kind}"
    state = {"format": checkpoints.CHECKPOINT_FORMAT, "config": {}, "epoch": Payload(marker)}
    path = folder / f"{kind}.pt"
    if kind == "torch-zip":
        torch.save(state, path)
    else:
        path.write_bytes(pickle.dumps(state))
    return path, marker


def finished(config) -> Path:
    summary = train(config, lambda _event: None, RunControl())
    assert isinstance(summary.event, RunFinished), summary.event
    assert summary.run_dir is not None
    return summary.run_dir


@pytest.mark.parametrize("kind", ["torch-zip", "raw-pickle"])
def test_a_crafted_checkpoint_runs_nothing_and_is_refused_in_one_line(tmp_path: Path, kind: str) -> None:
    path, marker = crafted(tmp_path, kind)
    with pytest.raises(CheckpointError) as err:
        checkpoints.load_checkpoint(path)
    assert not marker.exists()
    assert "\n" not in str(err.value) and str(path) in str(err.value)


def test_a_crafted_checkpoint_on_the_command_line_exits_2_and_creates_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, marker = crafted(tmp_path, "torch-zip")
    runs_dir = str(tmp_path / "runs")
    code = main(["train", "cifar", "--headless", "--device", "cpu", "--runs-dir", runs_dir, "--resume", str(path)])
    _, err = capsys.readouterr()
    assert code == 2
    assert not marker.exists()
    assert len(err.strip().splitlines()) == 1 and "not a rocmtui checkpoint" in err, err
    assert not (tmp_path / "runs").exists()


def test_a_checkpoint_carries_its_data_fingerprint(small) -> None:
    config = small(epochs=1)
    state = checkpoints.load_checkpoint(finished(config) / checkpoints.LAST)
    arrays = load_arrays(resolve_source(config))
    assert state["data"]["dataset"] == "cifar10"
    assert (state["data"]["train_size"], state["data"]["test_size"]) == (
        len(arrays.train_labels),
        len(arrays.test_labels),
    )
    assert len(state["data"]["labels_sha256"]) == 64


def test_resuming_on_other_data_is_refused_in_one_line_before_anything_is_written(small, mini_dir: Path) -> None:
    folder = finished(small(epochs=1))
    before = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file() and p.name != "run.lock"}
    events: list[TrainEvent] = []
    summary = train(small(epochs=2, resume=folder, data_dir=mini_dir), events.append, RunControl())
    assert isinstance(summary.event, RunFailed)
    assert summary.event.kind == "data"
    assert "trained on other data" in summary.event.message and "\n" not in summary.event.message
    assert "1,900 train" in summary.event.message and "1,000 train" in summary.event.message
    assert "NaN" not in summary.event.message
    assert {p.name: p.read_bytes() for p in folder.iterdir() if p.name in before} == before
    assert summary.run_dir is None and sorted(p.name for p in folder.parent.iterdir()) == [folder.name]


def test_the_same_data_from_another_place_resumes(small, tmp_path: Path) -> None:
    from rocmtui.train.data import SAMPLE_PATH

    folder = finished(small(epochs=1))
    elsewhere = tmp_path / "copy"
    elsewhere.mkdir()
    (elsewhere / "cifar10.npz").write_bytes(SAMPLE_PATH.read_bytes())
    plan = prepare_resume(small(epochs=2, resume=folder, data_dir=elsewhere))
    plan.check_data(load_arrays(resolve_source(plan.config)))  # no error: same labels, same sizes


def test_the_plan_continues_in_the_run_only_from_its_newest_checkpoint(small) -> None:
    folder = finished(small(epochs=1))
    assert prepare_resume(small(epochs=2, resume=folder)).run_dir == folder
    assert prepare_resume(small(epochs=2, resume=folder / checkpoints.LAST)).run_dir == folder
    best = prepare_resume(small(epochs=2, resume=folder / checkpoints.BEST))
    assert best.run_dir is None and best.checkpoint == folder / checkpoints.BEST
    assert prepare_resume(small()).run_dir is None  # a fresh run


@pytest.mark.slow  # trains for more than a second on the 2-core box
def test_resuming_from_the_best_checkpoint_branches_and_leaves_the_run_alone(small) -> None:
    folder = finished(small(epochs=2))
    kept = ("checkpoint-last.pt", "checkpoint-best.pt", "summary.json", "config.json", "metrics.jsonl")
    before = {name: (folder / name).read_bytes() for name in kept}
    branch = finished(small(epochs=3, resume=folder / checkpoints.BEST))
    assert branch != folder and branch.parent == folder.parent
    assert {name: (folder / name).read_bytes() for name in kept} == before
    config = json.loads((branch / "config.json").read_text())
    assert config["resume"] == str((folder / checkpoints.BEST).resolve())
    assert (branch / checkpoints.LAST).is_file() and (branch / "summary.json").is_file()


def test_an_option_given_at_its_default_on_resume_is_refused_naming_the_runs_value(small, tmp_path: Path) -> None:
    folder = finished(small(epochs=1))
    state = checkpoints.load_checkpoint(folder / checkpoints.LAST)
    state["config"]["model"] = "resnet18"  # the conflict is found before any weights are read
    checkpoints.save_checkpoint(folder / checkpoints.LAST, {k: v for k, v in state.items() if k != "format"})

    def config(*flags: str):
        argv = ["train", "cifar", "--resume", str(folder), "--epochs", "2", *flags]
        return train_config(build_parser().parse_args(argv))

    with pytest.raises(CheckpointError, match=r"--model simplecnn \(the run's: resnet18\)"):
        prepare_resume(config("--model", "simplecnn"))
    assert prepare_resume(config()).config.model == "resnet18"  # left out: the run's own
    assert prepare_resume(config("--model", "resnet18")).config.model == "resnet18"  # given and equal
    assert prepare_resume(config("--device", "cpu", "--runs-dir", str(tmp_path))).config.runs_dir == tmp_path
