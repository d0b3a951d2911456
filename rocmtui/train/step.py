"""One optimizer step, eager or captured whole (forward, backward, optimizer) in a CUDA/HIP graph.

A step takes a uint8 batch and labels and hands its loss and logits to ``Stats``; no step syncs with the GPU.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext

import torch
from torch import nn

from rocmtui.train.optimizer import FunctionalOptimizer
from rocmtui.train.stats import Stats

LossFn = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]
STATIC_LOSS_SCALE = 2048.0
"""fp16 in a captured step: the loss is multiplied by this before its backward and the gradients divided by it
after, since a GradScaler's dynamic scale reads the gradients on the host at every step. About a batch of
2,000's size: airbench's fp16 runs sum their loss over the batch, and a batch mean's gradients in the first
layers fall below fp16's smallest normal values. A power of two, so the division is exact."""


def autocast(device: torch.device, amp: str, graph: bool = False) -> AbstractContextManager[object]:
    """torch.amp autocast for ``amp`` (bf16/fp16) or a no-op; a graph needs the cast cache off."""
    if amp == "off":
        return nullcontext()
    dtype = torch.bfloat16 if amp == "bf16" else torch.float16
    return torch.autocast(device.type, dtype=dtype, cache_enabled=not graph)


class EagerStep:
    """Plain autograd step; fp16 uses a GradScaler."""

    def __init__(  # noqa: PLR0917 - each part of a step is its own argument
        self,
        model: nn.Module,
        optimizer: FunctionalOptimizer,
        loss_fn: LossFn,
        prepare: Callable[[torch.Tensor], torch.Tensor],
        device: torch.device,
        amp: str,
    ) -> None:
        self.model, self.optimizer, self.loss_fn, self.prepare = model, optimizer, loss_fn, prepare
        self.device, self.amp = device, amp
        self.scaler = torch.amp.GradScaler(device.type, enabled=amp == "fp16")

    def __call__(self, x: torch.Tensor, y: torch.Tensor, stats: Stats) -> None:
        with autocast(self.device, self.amp):
            logits = self.model(self.prepare(x))
            loss = self.loss_fn(logits, y)
        self.optimizer.zero_grad(set_to_none=True)
        if self.scaler.is_enabled():
            self.scaler.scale(loss).backward()  # type: ignore[no-untyped-call]
            self.scaler.step(self.optimizer)  # type: ignore[arg-type]  # duck-typed: param_groups and step()
            self.scaler.update()
        else:  # the scaler's bookkeeping costs Python time on every step even when disabled
            loss.backward()  # type: ignore[no-untyped-call]
            self.optimizer.step()
        stats.record(loss, logits, y)


class GraphStep:
    """The whole step captured once and replayed: a handful of launches per step instead of dozens.

    Inputs are copied into static buffers; the loss and the hit count are written by the graph into
    static outputs and accumulated outside it. Needs a capturable optimizer with a tensor learning rate.
    fp16 scales the loss by the constant ``STATIC_LOSS_SCALE``: a step whose gradients overflow is not skipped.
    """

    def __init__(
        self, eager: EagerStep, batch_x: torch.Tensor, batch_y: torch.Tensor, warmup: int = 1, frozen: bool = False
    ) -> None:
        """``frozen``: captured with the spent parameters taking no gradient (``freeze_spent``)."""
        self.eager = eager
        self.x = batch_x.clone()
        self.y = batch_y.clone()
        self.key = (tuple(self.x.shape), frozen)
        model, optimizer = eager.model, eager.optimizer
        saved_model = {k: v.clone() for k, v in model.state_dict().items()}
        saved_opt = {
            p: {k: v.clone() for k, v in st.items() if isinstance(v, torch.Tensor)} for p, st in optimizer.state.items()
        }
        side = torch.cuda.Stream()  # type: ignore[no-untyped-call]
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # one step creates the optimizer state and cudnn plans outside the capture
            for _ in range(warmup):
                self._forward_backward()
                optimizer.step()
        torch.cuda.current_stream().wait_stream(side)
        _restore(model, optimizer, saved_model, saved_opt)
        self.graph = torch.cuda.CUDAGraph()
        optimizer.zero_grad(set_to_none=True)
        with torch.cuda.graph(self.graph):
            self.loss, self.hits = self._forward_backward()
            optimizer.step()

    def _forward_backward(self) -> tuple[torch.Tensor, torch.Tensor]:
        eager = self.eager
        with autocast(eager.device, eager.amp, graph=True):
            logits = eager.model(eager.prepare(self.x))
            loss = eager.loss_fn(logits, self.y)
        if eager.amp != "fp16":
            loss.backward()  # type: ignore[no-untyped-call]
        else:
            (loss * STATIC_LOSS_SCALE).backward()  # type: ignore[no-untyped-call]
            grads = [p.grad for p in eager.model.parameters() if p.grad is not None]
            torch._foreach_mul_(grads, 1.0 / STATIC_LOSS_SCALE)
        return loss.detach().float(), (logits.detach().argmax(1) == self.y).sum()

    def __call__(self, x: torch.Tensor, y: torch.Tensor, stats: Stats) -> None:
        """Replay for a batch of the captured shape (``GraphSteps`` picks the step by its ``key``)."""
        self.x.copy_(x)
        self.y.copy_(y)
        self.graph.replay()
        stats.record_static(self.loss, self.hits, int(y.shape[0]))


class GraphSteps:
    """One captured step per batch shape (``--crop-sizes`` trains its first epochs on smaller images) and per
    state of the ``spanned`` parameters (learning, or frozen once spent), each replayed for the batches it
    was captured for; they share the model's and the optimizer's tensors."""

    def __init__(self, steps: list[GraphStep], spanned: list[torch.Tensor] | None = None) -> None:
        self.steps = {step.key: step for step in steps}
        self.spanned = spanned or []

    def __call__(self, x: torch.Tensor, y: torch.Tensor, stats: Stats) -> None:
        frozen = bool(self.spanned) and not self.spanned[0].requires_grad
        step = self.steps.get((tuple(x.shape), frozen))
        if step is None:  # cannot happen with full batches of the captured sides; kept as a guard
            raise RuntimeError(f"no CUDA graph for batches of shape {tuple(x.shape)} (frozen: {frozen})")
        step(x, y, stats)


def graph_keys(
    sides: tuple[int, ...], size: int, epochs: int, frozen_from: int | None, from_epoch: int = 0
) -> list[tuple[int, bool]]:
    """The (image side, spent parameters frozen) of each step a run captures for its epochs from ``from_epoch``:
    ``sides`` are ``--crop-sizes`` (later epochs at the images' own ``size``), ``frozen_from`` the epoch its
    spanned parameters stop learning (None: never). One CUDA graph, and one compiled graph, each."""
    keys = {
        (sides[epoch] if epoch < len(sides) else size, frozen_from is not None and epoch >= frozen_from)
        for epoch in range(from_epoch, epochs)
    }
    return sorted(keys)


@torch.no_grad()
def _restore(
    model: nn.Module,
    optimizer: FunctionalOptimizer,
    saved_model: dict[str, torch.Tensor],
    saved_opt: dict[torch.Tensor, dict[str, torch.Tensor]],
) -> None:
    """Undo the warm-up steps in place (the capture must see the same tensors), so training is unchanged.

    Optimizer state that did not exist before the warm-up is zeroed: a zero moment or momentum buffer
    and a zero step count give the same next step as a fresh optimizer.
    """
    for key, value in model.state_dict().items():
        value.copy_(saved_model[key])
    for param, state in optimizer.state.items():
        before = saved_opt.get(param, {})
        for key, value in state.items():
            if isinstance(value, torch.Tensor):
                value.copy_(before[key]) if key in before else value.zero_()
