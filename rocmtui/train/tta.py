"""A test batch's logits, plain or with fastnet's test-time augmentation, as one function of its uint8 images.

The test pass (``evaluate``) calls a ``BatchLogits`` for each batch. Eager, it is ``batch_logits``; with fused
kernels it is the same function through ``torch.compile``, loaded from the run's cache (``fused``), so that
the normalisation, the views and each layer's BatchNorm and GELU run as fused kernels. The compiled graphs
are made for the batch sizes ``eval_batches`` gives, one graph each with and without the augmentation.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import nn

BatchLogits = Callable[[torch.Tensor, bool], torch.Tensor]
"""``(uint8 images, tta) -> logits`` for one test batch; the caller sets eval mode and autocast."""

EVAL_BATCH = 1000


def eval_batch_size(train_batch: int) -> int:
    """Test batches are at least the training batch: convolutions of the training's shapes reuse the plans
    cudnn's benchmark mode chose for them (a new shape costs a search, 0.3 s for fastnet's first pass on an
    H200)."""
    return max(EVAL_BATCH, train_batch)


def eval_batches(count: int, train_batch: int) -> list[int]:
    """The distinct sizes of the test pass's batches over ``count`` images, largest first."""
    size = eval_batch_size(train_batch)
    return sorted({min(size, count - start) for start in range(0, count, size)}, reverse=True)


def batch_logits(model: nn.Module, prepare: Callable[[torch.Tensor], torch.Tensor], share: float) -> BatchLogits:
    """The test pass's function of a batch: ``model`` over the batch ``prepare`` makes of its uint8 images, with
    the augmentation (``logits``) when asked; ``share``: the share of each batch that sees the extra views."""

    def of_batch(images: torch.Tensor, tta: bool) -> torch.Tensor:
        return logits(model, prepare(images), tta, share)

    return of_batch


def logits(model: nn.Module, x: torch.Tensor, tta: bool, share: float = 1.0) -> torch.Tensor:
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
