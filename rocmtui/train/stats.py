"""Per-step training statistics kept on the device until an emit moment; the loop's only sync is ``drain``."""

from __future__ import annotations

import torch

PENDING_STEPS = 512
"""Steps held before a forced drain (bounds the memory of retained logits)."""


class Stats:
    """Losses and hits since the last drain, and the epoch's loss sum and hit count.

    Eager steps only append their (loss, logits, labels) tensors: no device work per step. ``drain`` turns
    them into numbers with a handful of batched kernels and one sync. A CUDA graph overwrites its outputs at
    every replay, so graph steps copy theirs into a buffer instead (``record_static``).
    """

    def __init__(self, device: torch.device, capacity: int = PENDING_STEPS) -> None:
        self.capacity = capacity
        self.buffer = torch.zeros(capacity, device=device)
        self.pending: list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]] = []
        self.sizes: list[int] = []
        """Batch size of each pending step; its length is the number of pending steps."""
        self.loss_sum = 0.0
        """Sum over this epoch's drained steps of loss x batch size (on the host)."""
        self.correct = torch.zeros((), device=device, dtype=torch.int64)

    @property
    def count(self) -> int:
        return len(self.sizes)

    @property
    def full(self) -> bool:
        return len(self.sizes) >= self.capacity

    def record(self, loss: torch.Tensor, logits: torch.Tensor, labels: torch.Tensor) -> None:
        self.pending.append((loss.detach(), logits.detach(), labels))
        self.sizes.append(int(labels.shape[0]))

    def record_static(self, loss: torch.Tensor, hits: torch.Tensor, size: int) -> None:
        self.buffer[len(self.sizes)].copy_(loss)
        self.correct.add_(hits)
        self.sizes.append(size)

    def reset_epoch(self) -> None:
        self.loss_sum = 0.0
        self.correct.zero_()

    def drain(self) -> list[float]:
        """The pending per-step losses as floats (one GPU sync); hits are added to ``correct``."""
        if self.pending:
            losses = torch.stack([loss for loss, _, _ in self.pending]).float()
            logits = torch.cat([out for _, out, _ in self.pending])
            labels = torch.cat([y for _, _, y in self.pending])
            self.correct.add_((logits.argmax(1) == labels).sum())
            self.pending.clear()
        else:
            losses = self.buffer[: self.count]
        values = [float(v) for v in losses.tolist()]
        self.loss_sum += sum(v * n for v, n in zip(values, self.sizes, strict=True))
        self.sizes.clear()
        return values
