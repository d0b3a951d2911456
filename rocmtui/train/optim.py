"""Optimizers and learning-rate schedules; the schedule is a pure function of the step (nothing to save)."""

from __future__ import annotations

import torch
from torch import nn

from rocmtui.config import TrainConfig


def build_optimizer(model: nn.Module, config: TrainConfig, device: torch.device, graph: bool) -> torch.optim.Optimizer:
    """Adam, AdamW or Nesterov SGD over the trainable parameters.

    On a GPU the fused kernels are used (one launch per step). For a CUDA graph the optimizer is
    ``capturable`` and its learning rate is a device tensor, so the schedule can change it between replays.
    """
    params = [p for p in model.parameters() if p.requires_grad]
    cuda = device.type == "cuda"
    lr: float | torch.Tensor = torch.tensor(config.lr, device=device) if graph else config.lr
    if config.optimizer == "sgd":
        return torch.optim.SGD(
            params, lr=lr, momentum=0.9, nesterov=True, weight_decay=config.weight_decay, fused=cuda or None
        )
    cls = torch.optim.AdamW if config.optimizer == "adamw" else torch.optim.Adam
    if graph:
        return cls(params, lr=lr, weight_decay=config.weight_decay, capturable=True, foreach=True)
    return cls(params, lr=lr, weight_decay=config.weight_decay, fused=cuda or None)


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


def set_lr(optimizer: torch.optim.Optimizer, value: float) -> None:
    """Set every group's learning rate; a tensor lr (CUDA graph) is filled in place, without a sync."""
    for group in optimizer.param_groups:
        lr = group["lr"]
        if isinstance(lr, torch.Tensor):
            lr.fill_(value)
        else:
            group["lr"] = value
