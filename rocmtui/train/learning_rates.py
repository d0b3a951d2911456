"""Which parameters learn at which rate: the optimizer's groups for a recipe, built once, and the schedule (a pure
function of the step: nothing to save)."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from rocmtui.config import TrainConfig
from rocmtui.train import models
from rocmtui.train.optimizer import FunctionalOptimizer

BN_BIAS_LR_SCALE = 64.0
"""fastnet's BatchNorm shifts (their scales are frozen) learn this much faster, with as much less decay."""

MUON_MOMENTUM = 0.6
MUON_SGD_MOMENTUM = 0.85
MUON_BIAS_RATE = 0.053 / 0.24
"""airbench94_muon's bias rate over its Muon rate, for a loss summed over the batch: per image of the
batch, since our loss is the batch mean."""
MUON_HEAD_RATE = 0.67 / 0.24 / (models.HEAD_SCALE * 256) ** 2
"""The same for the head, whose output airbench scales by 1/256 where fastnet's is scaled by 1/9."""
WHITEN_BIAS_EPOCHS = 3
"""With muon, the whitening layer's bias learns for this many epochs, its rate falling to 0, then stays."""


def spent_from_epoch(config: TrainConfig) -> int | None:
    """The epoch from which a group with its own span (muon's whitening bias) has stopped learning, or None."""
    return WHITEN_BIAS_EPOCHS if config.optimizer == "muon" and config.epochs > WHITEN_BIAS_EPOCHS else None


def param_groups(
    model: nn.Module, config: TrainConfig, steps_per_epoch: int = 0, images_per_step: int = 0
) -> list[dict[str, Any]]:
    """One group for everything, except fastnet's BatchNorm biases, which get a scaled learning rate.

    With muon (fastnet only), airbench94_muon's groups: the conv filters through Muon, and through Nesterov
    SGD the whitening bias (for ``WHITEN_BIAS_EPOCHS`` epochs: its own ``span`` of steps), the BatchNorm
    biases and the head.
    """
    trainable = [p for p in model.parameters() if p.requires_grad]
    if config.optimizer == "muon":
        assert isinstance(model, models.FastNet)
        images = images_per_step or config.batch_size
        return _muon_groups(model, config, trainable, WHITEN_BIAS_EPOCHS * steps_per_epoch, images)
    if config.model != "fastnet":
        return [{"params": trainable, "lr_scale": 1.0}]
    norm_ids = _norm_bias_ids(model)
    norms = [p for p in trainable if id(p) in norm_ids]
    others = [p for p in trainable if id(p) not in norm_ids]
    return [
        {"params": others, "lr_scale": 1.0},
        {"params": norms, "lr_scale": BN_BIAS_LR_SCALE, "weight_decay": config.weight_decay / BN_BIAS_LR_SCALE},
    ]


def _muon_groups(
    model: models.FastNet, config: TrainConfig, trainable: list[nn.Parameter], whiten_span: int, images: int
) -> list[dict[str, Any]]:
    """``images``: per step, over every rank (DDP averages the ranks' gradients, as a batch mean would)."""
    assert model.whiten.bias is not None
    norm_ids = _norm_bias_ids(model)
    filters = [p for p in trainable if p.ndim == 4]
    sgd_groups: list[dict[str, Any]] = [
        {"params": [model.whiten.bias], "lr_scale": images * MUON_BIAS_RATE, "span": whiten_span},
        {"params": [p for p in trainable if id(p) in norm_ids], "lr_scale": images * MUON_BIAS_RATE},
        {"params": [model.head.weight], "lr_scale": images * MUON_HEAD_RATE},
    ]
    for group in sgd_groups:  # decoupled: the same share decayed per step at the peak rate in each group
        group.update(momentum=MUON_SGD_MOMENTUM, weight_decay=config.weight_decay / (config.lr * group["lr_scale"]))
    muon = {
        "params": filters,
        "lr_scale": 1.0,
        "muon": True,
        "momentum": MUON_MOMENTUM,
        "weight_decay": 0.0,
        "newton_schulz_steps": config.newton_schulz_steps,
    }
    grouped = {id(p) for group in (muon, *sgd_groups) for p in group["params"]}
    assert grouped == {id(p) for p in trainable}, "every trainable parameter in exactly one group"
    return [muon, *sgd_groups]


def _norm_bias_ids(model: nn.Module) -> set[int]:
    """The ids of the BatchNorm shifts (fastnet's BatchNorm scales are frozen)."""
    return {id(m.bias) for m in model.modules() if isinstance(m, nn.BatchNorm2d) and m.bias is not None}


def build_optimizer(  # noqa: PLR0917 - the run's settings, each its own argument
    model: nn.Module,
    config: TrainConfig,
    device: torch.device,
    graph: bool,
    steps_per_epoch: int = 0,
    images_per_step: int = 0,
) -> FunctionalOptimizer:
    """Adam, AdamW, Nesterov SGD or Muon over the trainable parameters.

    The fused kernels are used (one launch per step on a GPU, one pass on the CPU). For a CUDA graph the optimizer is
    ``capturable`` and its learning rates are device tensors, so the schedule can change them between replays.
    """
    groups = param_groups(model, config, steps_per_epoch, images_per_step)
    for group in groups:
        value = config.lr * group["lr_scale"]
        group["lr"] = torch.tensor(value, device=device) if graph else value
    kind = config.optimizer
    if kind in ("sgd", "muon") or not graph:
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


def spanned_params(optimizer: FunctionalOptimizer) -> list[torch.Tensor]:
    """The parameters of the groups with their own span of steps (``freeze_spent`` stops their gradients)."""
    return [p for group in optimizer.param_groups if group.get("span") for p in group["params"]]


def freeze_spent(optimizer: FunctionalOptimizer, step: int) -> None:
    """From the end of its span, a group's parameters take no gradient: their rate is 0 from then on, so the
    backward pass need not compute them (for fastnet's whitening bias, the first conv's input gradient and the
    whitening layer's backward are left out, as airbench does). A captured step is picked by it
    (``GraphSteps``). Not for DistributedDataParallel, which expects every parameter's gradient."""
    for group in optimizer.param_groups:
        span = group.get("span")
        if span and step >= span and group["params"][0].requires_grad:
            for param in group["params"]:
                param.requires_grad_(False)


def set_lr(optimizer: FunctionalOptimizer, config: TrainConfig, step: int, total_steps: int) -> None:
    """Every group's learning rate for ``step``: the schedule times the group's scale. A group with its own
    ``span`` of steps runs the schedule over those and then stops learning (rate 0). A tensor lr (CUDA
    graph) is filled in place."""
    for group in optimizer.param_groups:
        span = group.get("span") or total_steps
        value = lr_at(config, step, span) if step < span else 0.0
        lr, scaled = group["lr"], value * group.get("lr_scale", 1.0)
        if isinstance(lr, torch.Tensor):
            lr.fill_(scaled)
        else:
            group["lr"] = scaled
