"""``--resume RUN_OR_CHECKPOINT``: read the checkpoint, check it fits this invocation, and say where the run goes.

A run folder, or its ``checkpoint-last.pt``, continues in that folder. Any other checkpoint (such as
``checkpoint-best.pt``, or a copy elsewhere) branches into a new folder, so a run's newer files are never
overwritten; the new run's ``config.json`` names the checkpoint it came from (``resume``).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from rocmtui.base.errors import CheckpointError
from rocmtui.base.ranges import cpu_cores
from rocmtui.config import TrainConfig, train_options
from rocmtui.train import checkpoints
from rocmtui.train.data import fingerprint
from rocmtui.train.dataset import Arrays
from rocmtui.train.state import check_state, saved_config


@dataclass(frozen=True)
class ResumePlan:
    """What a run starts from. A fresh run: the config as given, no state, no checkpoint, no folder."""

    config: TrainConfig
    """The settings to run with (on resume: the saved run's, with this invocation's epochs, device, data)."""
    state: dict[str, Any] | None
    """The checkpoint's contents (tensors and plain values), or None for a fresh run."""
    checkpoint: Path | None
    run_dir: Path | None
    """The folder to continue in (the checkpoint is that run's newest), or None: create a new folder."""

    def release_state(self) -> None:
        """Let go of the checkpoint's contents once they are restored: the model's and the optimizer's copy
        would otherwise stay in host memory for the whole run (its tensors, for a large model, are gigabytes)."""
        if self.state is not None:
            self.state.clear()

    def check_data(self, arrays: Arrays) -> None:
        """CheckpointError (one line) unless ``arrays`` are the data the checkpoint was trained on.

        Checkpoints written before fingerprints existed carry none and are not checked.
        """
        saved = None if self.state is None else self.state.get("data")
        if not isinstance(saved, dict):
            return
        here = fingerprint(self.config.dataset, arrays.train_labels, arrays.test_labels)
        if saved != here:
            raise CheckpointError(
                f"{self.checkpoint} was trained on other data ({_describe(saved)}) than this run has "
                f"({_describe(here)}); resume with the run's own data (--data-dir), or start a new run"
            )


def _describe(data: dict[str, Any]) -> str:
    sizes = f"{data.get('dataset')}, {data.get('train_size'):,} train / {data.get('test_size'):,} test images"
    return f"{sizes}, labels {str(data.get('labels_sha256'))[:12]}"


def conflicting_settings(config: TrainConfig, saved: TrainConfig) -> list[str]:
    """Options given with --resume that would change what the saved run keeps, as ``--lr 0.01 (the run's: 0.001)``.

    Only options named in ``config.given`` count: one left out takes the run's value.
    """
    return [
        f"--{name.replace('_', '-')} {_shown(getattr(config, name))} (the run's: {_shown(getattr(saved, name))})"
        for name, option in train_options().items()
        if option.on_resume == "keep" and name in config.given and getattr(config, name) != getattr(saved, name)
    ]


def _shown(value: object) -> str:
    return ("on" if value else "off") if isinstance(value, bool) else str(value)


def continues_in(given: Path, checkpoint: Path) -> Path | None:
    """The run folder that ``checkpoint`` is the newest of, or None when resuming from it must branch."""
    if given.is_dir():
        return given
    return checkpoint.parent if checkpoint.name == checkpoints.LAST else None


def prepare_resume(config: TrainConfig) -> ResumePlan:
    """The plan for ``config``; for a resume, CheckpointError (one line) for a missing, corrupt, foreign or
    incompatible checkpoint, and for one that has already trained the epochs asked for."""
    if config.resume is None:
        return ResumePlan(config, None, None, None)
    path = checkpoints.checkpoint_file(config.resume)
    if not path.is_file():
        raise CheckpointError(f"{path} is not a file; give a run folder or a checkpoint-*.pt file")
    state = load_state(path)
    saved = saved_config(state, path)
    if saved.dataset != config.dataset:
        raise CheckpointError(f"{path} is a {saved.dataset} run, not {config.dataset}")
    conflicts = conflicting_settings(config, saved)
    if conflicts:
        raise CheckpointError(
            f"a resumed run keeps its own settings, and these differ: {', '.join(conflicts)}; "
            "leave them out, or start a new run"
        )
    resumed = replace(resumed_config(config, saved), resume=path.resolve())
    cores = cpu_cores()
    if resumed.nproc > cores and "nproc" not in config.given:  # given: the command line checked it (--force)
        raise CheckpointError(
            f"{path} trains with nproc {resumed.nproc}, more than this machine's {cores} CPU cores; "
            f"give --nproc {resumed.nproc} --force to resume it so"
        )
    try:
        done = int(state.get("epoch", 0))
    except (TypeError, ValueError):
        raise CheckpointError(f"{path} has an unreadable epoch count") from None
    if done >= resumed.epochs:
        raise CheckpointError(
            f"{path} has already trained {done} of {resumed.epochs} epochs; "
            f"pass --epochs N with N above {done} to train it further"
        )
    return ResumePlan(resumed, state, path, continues_in(config.resume, path))


def load_state(path: Path) -> dict[str, Any]:
    """The checkpoint at ``path``, read once, as data; CheckpointError (one line) unless it is a whole rocmtui
    checkpoint."""
    state = checkpoints.load_checkpoint(path)
    check_state(state, path)
    return state


def resumed_config(config: TrainConfig, saved: TrainConfig) -> TrainConfig:
    """The saved run's ``keep`` settings (the option table in config.py), this invocation's others.

    ``--epochs`` and ``--data-dir`` left out (0 and None) mean the run's own.
    """
    kept = {name for name, option in train_options().items() if option.on_resume == "keep"}
    changes = {f.name: getattr(config, f.name) for f in fields(TrainConfig) if f.name not in kept}
    changes["epochs"] = config.epochs or saved.epochs
    changes["data_dir"] = config.data_dir or saved.data_dir
    return replace(saved, **changes)
