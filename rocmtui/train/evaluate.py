"""Test-set evaluation on the device: loss, accuracy and per-class accuracy, with one sync at the end."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from rocmtui.train import models
from rocmtui.train.engine import Engine
from rocmtui.train.step import autocast
from rocmtui.train.tta import eval_batch_size


@dataclass(frozen=True)
class EvalResult:
    loss: float
    acc: float
    per_class: tuple[tuple[str, float], ...]


@torch.no_grad()
def evaluate(engine: Engine, tta: bool = False) -> EvalResult:
    """Evaluate the test split in eval mode; ``tta``: with test-time augmentation where the model has it
    (``models.has_tta``, see ``tta.logits``). Batches of ``tta.eval_batch_size``, through the engine's
    ``test_logits`` (compiled with fused kernels)."""
    data, of_batch = engine.data, engine.nets.test_logits
    batch_size = eval_batch_size(engine.config.batch_size)
    tta = tta and models.has_tta(engine.config.model)
    was_training = engine.model.training
    engine.model.eval()
    num_classes = len(data.classes)
    loss_sum = torch.zeros((), device=engine.device, dtype=torch.float64)
    hits = torch.zeros(num_classes, device=engine.device, dtype=torch.int64)
    counts = torch.zeros_like(hits).index_add_(0, data.test_y, torch.ones_like(data.test_y))
    for start in range(0, int(data.test_y.shape[0]), batch_size):
        y = data.test_y[start : start + batch_size]
        with autocast(engine.device, engine.config.amp):
            logits = of_batch(data.test_x[start : start + batch_size], tta)
        loss_sum += nn.functional.cross_entropy(logits.float(), y, reduction="sum")
        hits.index_add_(0, y, (logits.argmax(1) == y).long())  # no boolean mask: that would wait for the GPU
    engine.model.train(was_training)
    values = torch.cat((loss_sum.view(1), hits.double(), counts.double())).tolist()  # the one sync
    total = float(sum(values[1 + num_classes :]))
    class_hits, class_counts = values[1 : 1 + num_classes], values[1 + num_classes :]
    per_class = tuple(
        (name, h / c if c else 0.0) for name, h, c in zip(data.classes, class_hits, class_counts, strict=True)
    )
    return EvalResult(loss=values[0] / total, acc=sum(class_hits) / total, per_class=per_class)
