"""Optimizers and learning-rate schedules; the schedule is a pure function of the step (nothing to save)."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from rocmtui.config import TrainConfig
from rocmtui.train.optimizer import FunctionalOptimizer

BN_BIAS_LR_SCALE = 64.0
"""fastnet's BatchNorm shifts (their scales are frozen) learn this much faster, with as much less decay."""


def param_groups(model: nn.Module, config: TrainConfig) -> list[dict[str, Any]]:
    """One group for everything, except fastnet's BatchNorm biases, which get a scaled learning rate."""
    trainable = [p for p in model.parameters() if p.requires_grad]
    if config.model != "fastnet":
        return [{"params": trainable, "lr_scale": 1.0}]
    norm_ids = {id(m.bias) for m in model.modules() if isinstance(m, nn.BatchNorm2d) and m.bias is not None}
    norms = [p for p in trainable if id(p) in norm_ids]
    others = [p for p in trainable if id(p) not in norm_ids]
    return [
        {"params": others, "lr_scale": 1.0},
        {"params": norms, "lr_scale": BN_BIAS_LR_SCALE, "weight_decay": config.weight_decay / BN_BIAS_LR_SCALE},
    ]


def build_optimizer(model: nn.Module, config: TrainConfig, device: torch.device, graph: bool) -> FunctionalOptimizer:
    """Adam, AdamW or Nesterov SGD over the trainable parameters.

    The fused kernels are used (one launch per step on a GPU, one pass on the CPU). For a CUDA graph the optimizer is
    ``capturable`` and its learning rates are device tensors, so the schedule can change them between replays.
    """
    groups = param_groups(model, config)
    for group in groups:
        value = config.lr * group["lr_scale"]
        group["lr"] = torch.tensor(value, device=device) if graph else value
    kind = config.optimizer
    if kind == "sgd" or not graph:
        return FunctionalOptimizer(kind, groups, lr=config.lr, weight_decay=config.weight_decay, fused=True)
    return FunctionalOptimizer(
        kind, groups, lr=config.lr, weight_decay=config.weight_decay, fused=False, capturable=True, foreach=True
    )


def lr_at(config: TrainConfig, step: int, total_steps: int) -> float:
    """Learning rate for ``step`` (0-based) of ``total_steps``.

    ``onecycle``: linear warm-up over the first 20% from lr/10 to lr, then linear decay to lr/100.
    ``linear``: linear decay from lr to 0 over the run.
    """
    if config.schedule == "constant" or total_steps <= 0:
        return config.lr
    frac = min(step / total_steps, 1.0)
    if config.schedule == "linear":
        return config.lr * (1.0 - frac)
    warm = 0.2
    if frac < warm:
        return config.lr * (0.1 + 0.9 * frac / warm)
    return config.lr * (1.0 - 0.99 * (frac - warm) / (1.0 - warm))


def set_lr(optimizer: FunctionalOptimizer, value: float) -> None:
    """Set every group's learning rate (times its scale); a tensor lr (CUDA graph) is filled in place."""
    for group in optimizer.param_groups:
        lr, scaled = group["lr"], value * group.get("lr_scale", 1.0)
        if isinstance(lr, torch.Tensor):
            lr.fill_(scaled)
        else:
            group["lr"] = scaled
