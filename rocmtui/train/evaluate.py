"""Test-set evaluation on the device: loss, accuracy and per-class accuracy, with one sync at the end."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from rocmtui.train import models
from rocmtui.train.engine import Engine
from rocmtui.train.step import autocast


@dataclass(frozen=True)
class EvalResult:
    loss: float
    acc: float
    per_class: tuple[tuple[str, float], ...]


EVAL_BATCH = 1000


@torch.no_grad()
def evaluate(engine: Engine, tta: bool = False) -> EvalResult:
    """Evaluate the test split in eval mode; ``tta``: with test-time augmentation where the model has it
    (``models.has_tta``, see ``_logits``).

    Batches are at least the training batch: convolutions of the training's shapes reuse the plans cudnn's
    benchmark mode chose for them (a new shape costs a search, 0.3 s for fastnet's first pass on an H200).
    """
    model, data = engine.eval_model, engine.data
    batch_size = max(EVAL_BATCH, engine.config.batch_size)
    tta = tta and models.has_tta(engine.config.model)
    was_training = engine.model.training
    engine.model.eval()
    num_classes = len(data.classes)
    loss_sum = torch.zeros((), device=engine.device, dtype=torch.float64)
    hits = torch.zeros(num_classes, device=engine.device, dtype=torch.int64)
    counts = torch.bincount(data.test_y, minlength=num_classes)
    for start in range(0, int(data.test_y.shape[0]), batch_size):
        x = engine.eager.prepare(data.test_x[start : start + batch_size])
        y = data.test_y[start : start + batch_size]
        with autocast(engine.device, engine.config.amp):
            logits = _logits(model, x, tta, engine.config.tta_share)
        loss_sum += nn.functional.cross_entropy(logits.float(), y, reduction="sum")
        hits += torch.bincount(y[logits.argmax(1) == y], minlength=num_classes)
    engine.model.train(was_training)
    values = torch.cat((loss_sum.view(1), hits.double(), counts.double())).tolist()  # the one sync
    total = float(sum(values[1 + num_classes :]))
    class_hits, class_counts = values[1 : 1 + num_classes], values[1 + num_classes :]
    per_class = tuple(
        (name, h / c if c else 0.0) for name, h, c in zip(data.classes, class_hits, class_counts, strict=True)
    )
    return EvalResult(loss=values[0] / total, acc=sum(class_hits) / total, per_class=per_class)


def _logits(model: nn.Module, x: torch.Tensor, tta: bool, share: float = 1.0) -> torch.Tensor:
    """Plain logits, or fastnet's test-time augmentation: the mean over the image and its mirror, blended
    half and half with the same over copies shifted one pixel up-left and down-right (reflect padding).

    With ``share`` below 1, only that share of the batch (the images whose two best plain logits are closest)
    sees the other five views; the rest keep their plain logits. The five views go through the model as one
    batch."""
    plain: torch.Tensor = model(x)
    if not tta:
        return plain
    chosen = None
    if share < 1.0:
        top2 = plain.float().topk(2, dim=1).values
        chosen = (top2[:, 0] - top2[:, 1]).topk(max(1, math.ceil(share * x.shape[0])), largest=False).indices
        x = x[chosen]
    h, w = x.shape[-2:]
    padded = nn.functional.pad(x, (1, 1, 1, 1), mode="reflect")
    up, down = padded[..., :h, :w], padded[..., 2:, 2:]
    views = torch.cat((x.flip(-1), up, up.flip(-1), down, down.flip(-1)))
    out: torch.Tensor = model(views)
    flip, up_plain, up_flip, down_plain, down_flip = out.view(5, x.shape[0], -1)
    first = plain if chosen is None else plain[chosen]
    shifted = ((up_plain + up_flip) / 2 + (down_plain + down_flip) / 2) / 2
    augmented: torch.Tensor = ((first + flip) / 2 + shifted) / 2
    if chosen is None:
        return augmented
    mixed = plain.clone()
    mixed[chosen] = augmented.to(mixed.dtype)
    return mixed
