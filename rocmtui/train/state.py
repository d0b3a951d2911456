"""Where a run is (epoch, step, data order, accumulators) and its checkpoint form, for exact resumes."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from rocmtui.base.errors import CheckpointError
from rocmtui.config import TrainConfig
from rocmtui.train.data import fingerprint
from rocmtui.train.engine import Engine
from rocmtui.train.gpudata import permutation


@dataclass
class Progress:
    """Position of the run at a step boundary."""

    epoch: int = 0
    epoch_step: int = 0
    global_step: int = 0
    seen: int = 0
    """Images trained on in this epoch."""
    best_acc: float | None = None
    final_acc: float | None = None
    perm: torch.Tensor | None = None
    """This epoch's data order (None before the epoch draws it)."""
    epoch_rng: torch.Tensor | None = None
    """The data generator's state when this epoch drew its order and augmentation (None before): a resume in
    the middle of the epoch draws both again from it."""
    elapsed_s: float = 0.0
    """Training seconds before this (re)start, pauses excluded."""
    images: int = 0
    """Images trained on over the whole run."""


REQUIRED = ("config", "model", "optimizer", "scaler", "rng_cpu", "rng_data", "epoch", "epoch_step", "global_step")
"""Keys every rocmtui checkpoint has (``data``, the fingerprint, is newer and optional)."""


def check_state(state: dict[str, Any], path: Path) -> None:
    """CheckpointError (one line) for a dict that is not a whole rocmtui checkpoint."""
    missing = [key for key in REQUIRED if key not in state]
    if missing:
        raise CheckpointError(f"{path} is not a rocmtui checkpoint (it has no {missing[0]!r})")


def snapshot(engine: Engine, progress: Progress, elapsed_s: float) -> dict[str, Any]:
    """Everything needed to continue exactly from this step boundary (syncs: call at save moments only).

    Tensors, state dicts and plain values only: ``load_checkpoint`` reads it back without running code.
    """
    return {**device_state(engine), **position(engine, progress, elapsed_s)}


def device_state(engine: Engine) -> dict[str, Any]:
    """The part of a checkpoint the steps change: the model, the optimizer, the scaler and the generators."""
    cuda_rng = torch.cuda.get_rng_state(engine.device) if engine.device.type == "cuda" else None
    return {
        "config": engine.config.to_dict(),
        "data": data_fingerprint(engine),
        "model": engine.model.state_dict(),
        "optimizer": engine.optimizer.state_dict(),
        "scaler": engine.eager.scaler.state_dict(),
        "rng_cpu": torch.get_rng_state(),
        "rng_cuda": cuda_rng,
        "rng_data": engine.batching.gen.get_state(),
    }


def position(engine: Engine, progress: Progress, elapsed_s: float) -> dict[str, Any]:
    """The part of a checkpoint the loop keeps on the host: where the run is, its accumulators and its clock."""
    return {
        "epoch": progress.epoch,
        "epoch_step": progress.epoch_step,
        "global_step": progress.global_step,
        "seen": progress.seen,
        "best_acc": progress.best_acc,
        "final_acc": progress.final_acc,
        "perm": None if progress.perm is None else progress.perm.cpu(),
        "rng_epoch": progress.epoch_rng,
        "loss_sum": engine.stats.loss_sum,
        "correct": int(engine.stats.correct.item()),
        "elapsed_s": elapsed_s,
        "images": progress.images,
    }


def data_fingerprint(engine: Engine) -> dict[str, str | int]:
    """The fingerprint of the data on the engine's device, taken once per run (the labels never change; the
    copy to the CPU syncs with the device, which every checkpoint used to pay)."""
    if engine.data_print is None:
        data = engine.data
        engine.data_print = fingerprint(engine.config.dataset, data.train_y.cpu().numpy(), data.test_y.cpu().numpy())
    return engine.data_print


def saved_config(state: dict[str, Any], path: Path) -> TrainConfig:
    try:
        return TrainConfig.from_dict(state["config"])
    except (TypeError, ValueError, KeyError) as err:
        raise CheckpointError(f"{path} has an unreadable config ({err})") from None


def restore(engine: Engine, state: dict[str, Any], path: Path) -> Progress:
    """Load model, optimizer, scaler, RNGs and position into a freshly built engine."""
    try:
        engine.model.load_state_dict(state["model"])
        engine.optimizer.load_state_dict(state["optimizer"])
        for group in engine.optimizer.param_groups:  # a graph run saves its rates as (now CPU) tensors
            group["lr"] = float(group["lr"])
        engine.eager.scaler.load_state_dict(state["scaler"])
        torch.set_rng_state(state["rng_cpu"])
        if state["rng_cuda"] is not None and engine.device.type == "cuda":
            torch.cuda.set_rng_state(state["rng_cuda"], engine.device)
        engine.batching.gen.set_state(state["rng_data"])
        perm, epoch_rng = state["perm"], state.get("rng_epoch")
        if perm is not None and epoch_rng is not None:  # mid-epoch: the epoch's draws again, in their order
            engine.batching.gen.set_state(epoch_rng)
            perm = permutation(int(engine.data.train_y.shape[0]), engine.batching.gen)
        engine.stats.loss_sum = float(state["loss_sum"])
        engine.stats.correct.fill_(int(state["correct"]))
        progress = Progress(
            epoch=int(state["epoch"]),
            epoch_step=int(state["epoch_step"]),
            global_step=int(state["global_step"]),
            seen=int(state["seen"]),
            best_acc=state["best_acc"],
            final_acc=state["final_acc"],
            perm=None if perm is None else perm.to(engine.device),
            epoch_rng=epoch_rng if perm is not None else None,
            elapsed_s=float(state["elapsed_s"]),
            images=int(state["images"]),
        )
    except (KeyError, RuntimeError, ValueError, TypeError) as err:
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise CheckpointError(f"{path} does not fit this model/optimizer: {first}") from None
    steps = engine.batching.steps_per_epoch
    if progress.epoch_step > steps:
        raise CheckpointError(f"{path} is at step {progress.epoch_step} of an epoch of {steps}")
    return progress
