"""``--resume RUN_OR_CHECKPOINT``: read the checkpoint and the settings the run continues with."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rocmtui.config import TrainConfig
from rocmtui.errors import CheckpointError
from rocmtui.train import runs
from rocmtui.train.engine import resumed_config
from rocmtui.train.state import saved_config

KEPT_ON_RESUME = (
    "model",
    "batch_size",
    "lr",
    "optimizer",
    "schedule",
    "weight_decay",
    "label_smoothing",
    "augment",
    "amp",
    "channels_last",
    "compile",
    "cuda_graph",
    "seed",
)
"""Settings a resumed run takes from its checkpoint; ``resumed_config`` takes the others (epochs, device,
data and limits) from the command line."""


def conflicting_settings(config: TrainConfig, saved: TrainConfig) -> list[str]:
    """Options given with --resume that differ from the saved run's, as ``--lr 0.01 (the run's: 0.001)``.

    An option at its default value counts as not given: the command line cannot tell the two apart.
    """
    defaults = TrainConfig()
    return [
        f"--{name.replace('_', '-')} {_shown(getattr(config, name))} (the run's: {_shown(getattr(saved, name))})"
        for name in KEPT_ON_RESUME
        if getattr(config, name) != getattr(defaults, name) and getattr(config, name) != getattr(saved, name)
    ]


def _shown(value: object) -> str:
    return ("on" if value else "off") if isinstance(value, bool) else str(value)


def prepare_resume(config: TrainConfig) -> tuple[TrainConfig, dict[str, Any] | None, Path | None]:
    """(config to run, checkpoint state, checkpoint path); the same config and Nones for a fresh run.

    CheckpointError (one line) for a missing, corrupt or incompatible checkpoint.
    """
    if config.resume is None:
        return config, None, None
    path = runs.checkpoint_file(config.resume)
    if not path.is_file():
        raise CheckpointError(f"{path} does not exist; give a run folder or a checkpoint-*.pt file")
    state = runs.load_checkpoint(path)
    saved = saved_config(state, path)
    if saved.dataset != config.dataset:
        raise CheckpointError(f"{path} is a {saved.dataset} run, not {config.dataset}")
    conflicts = conflicting_settings(config, saved)
    if conflicts:
        raise CheckpointError(
            f"a resumed run keeps its own settings, and these differ: {', '.join(conflicts)}; "
            "leave them out, or start a new run"
        )
    resumed = resumed_config(config, saved)
    done = int(state.get("epoch", 0))
    if done >= resumed.epochs:
        raise CheckpointError(
            f"{path} has already trained {done} of {resumed.epochs} epochs; "
            f"pass --epochs N with N above {done} to train it further"
        )
    return resumed, state, path
