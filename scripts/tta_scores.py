"""Test-time augmentation schemes scored on the same trained model, off the clock (``recipe_seeds --compare-tta``).

After a run's timed final pass, every test image goes through the eval model in each view of ``SHIFTS`` (and
their mirrors), with eager kernels and the run's autocast; the schemes of ``SCHEMES`` are then blends of those
logits, with the least certain share of each test batch chosen as ``tta.logits`` chooses it. So a scheme's gain
is measured on the same weights as the recipe's own, without training again (the training's own spread between
seeds is ten times the gains looked for).

A view ``(dy, dx)`` moves the image's content ``dy`` pixels down and ``dx`` right, with reflected edges: the
recipe's pass uses ``(1, 1)`` and ``(-1, -1)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from rocmtui.train.step import autocast
from rocmtui.train.tta import eval_batch_size

Shift = tuple[int, int]
SHIFTS: dict[str, tuple[Shift, ...]] = {
    "diagonal": ((1, 1), (-1, -1)),
    "antidiagonal": ((1, -1), (-1, 1)),
    "axes": ((0, 1), (0, -1), (1, 0), (-1, 0)),
    "diagonal2": ((2, 2), (-2, -2)),
}
PAD = 2


@dataclass(frozen=True)
class Scheme:
    """A blend: ``plain_weight`` of the image and its mirror, the rest the mean of the shifted views and their
    mirrors; only ``share`` of each batch (the least certain) blended, the rest plain."""

    share: float
    shifts: tuple[str, ...] = ("diagonal",)
    plain_weight: float = 0.5

    @property
    def name(self) -> str:
        return f"share {self.share:g}, {'+'.join(self.shifts)}, plain weight {self.plain_weight:g}"

    @property
    def extra_views(self) -> float:
        """The views beyond the plain pass, as whole test sets (a measure of the pass's cost)."""
        return self.share * (1 + 2 * sum(len(SHIFTS[s]) for s in self.shifts))


RECIPE = Scheme(0.25)
SCHEMES: tuple[Scheme, ...] = (
    RECIPE,
    Scheme(0.35),
    Scheme(0.5),
    Scheme(1.0),
    Scheme(0.25, plain_weight=0.4),
    Scheme(0.25, plain_weight=0.6),
    Scheme(0.25, ("diagonal", "antidiagonal")),
    Scheme(0.25, ("diagonal", "antidiagonal"), 0.4),
    Scheme(0.25, ("axes",)),
    Scheme(0.25, ("diagonal", "antidiagonal", "axes")),
    Scheme(0.25, ("diagonal", "diagonal2")),
    Scheme(0.35, ("diagonal", "antidiagonal")),
    Scheme(0.5, ("diagonal", "antidiagonal")),
    Scheme(1.0, ("diagonal", "antidiagonal")),
    Scheme(1.0, ("diagonal", "antidiagonal", "axes")),
)


def shifted(x: torch.Tensor, shift: Shift) -> torch.Tensor:
    """``x``'s content moved ``shift`` pixels (down, right), its edges reflected."""
    h, w = x.shape[-2:]
    padded = nn.functional.pad(x, (PAD, PAD, PAD, PAD), mode="reflect")
    dy, dx = shift
    return padded[..., PAD - dy : PAD - dy + h, PAD - dx : PAD - dx + w]


@torch.no_grad()
def view_logits(engine: Any) -> tuple[dict[str, torch.Tensor], torch.Tensor]:
    """Every test image's float logits in each view (``plain``, ``flip``, ``SHIFT`` and ``SHIFT flip`` for each
    shift), on the host, and the labels."""
    model, prepare, data = engine.nets.eval_model, engine.optimisation.eager.prepare, engine.data
    was_training = model.training
    model.eval()
    shifts = sorted({s for group in SHIFTS.values() for s in group})
    parts: dict[str, list[torch.Tensor]] = {}
    size = eval_batch_size(engine.config.batch_size)
    for start in range(0, int(data.test_y.shape[0]), size):
        with autocast(engine.device, engine.config.amp):
            x = prepare(data.test_x[start : start + size])
            views = {"plain": x, "flip": x.flip(-1)}
            for shift in shifts:
                moved = shifted(x, shift)
                views[f"{shift}"], views[f"{shift} flip"] = moved, moved.flip(-1)
            for name, view in views.items():
                parts.setdefault(name, []).append(model(view).float().cpu())
    model.train(was_training)
    return {name: torch.cat(chunks) for name, chunks in parts.items()}, data.test_y.cpu()


def accuracy(scheme: Scheme, views: dict[str, torch.Tensor], labels: torch.Tensor, batch: int) -> float:
    """The scheme's test accuracy, its share chosen within each test batch of ``batch`` images."""
    plain = views["plain"]
    shifts = [s for group in scheme.shifts for s in SHIFTS[group]]
    moved = sum((views[f"{s}"] + views[f"{s} flip"]) / 2 for s in shifts) / len(shifts)
    blended = scheme.plain_weight * (plain + views["flip"]) / 2 + (1 - scheme.plain_weight) * moved
    out = plain.clone()
    for start in range(0, plain.shape[0], batch):
        part = plain[start : start + batch]
        if scheme.share >= 1.0:
            chosen = torch.arange(part.shape[0])
        else:
            top2 = part.topk(2, dim=1).values
            chosen = (top2[:, 0] - top2[:, 1]).topk(max(1, math.ceil(scheme.share * part.shape[0])), largest=False)
            chosen = chosen.indices
        out[start + chosen] = blended[start + chosen]
    return float((out.argmax(1) == labels).double().mean())


OWN = "the recipe's own eager pass (its blend in the autocast dtype)"


@torch.no_grad()
def own_accuracy(engine: Any) -> float:
    """The run's eager test pass with TTA (``Nets.eager_test_logits``), for a check of ``RECIPE``'s score."""
    data, model = engine.data, engine.nets.eval_model
    size = eval_batch_size(engine.config.batch_size)
    was_training = model.training
    model.eval()
    hits = 0
    for start in range(0, int(data.test_y.shape[0]), size):
        with autocast(engine.device, engine.config.amp):
            out = engine.nets.eager_test_logits(data.test_x[start : start + size], True)
        hits += int((out.argmax(1) == data.test_y[start : start + size]).sum())
    model.train(was_training)
    return hits / int(data.test_y.shape[0])


def score(engine: Any) -> dict[str, float]:
    """Each scheme's accuracy on the engine's trained model (blended in float32), and ``OWN``."""
    views, labels = view_logits(engine)
    batch = eval_batch_size(engine.config.batch_size)
    return {OWN: own_accuracy(engine)} | {scheme.name: accuracy(scheme, views, labels, batch) for scheme in SCHEMES}


def table(runs: list[dict[str, float]], seeds: list[int]) -> list[str]:
    """A markdown table: each scheme's mean accuracy over the runs, its mean gain over the recipe's scheme, the
    seeds it won and lost, and the same mean over each half of the seeds."""
    half = len(runs) // 2
    lines = [
        f"| scheme (seeds {seeds[0]}-{seeds[-1]}) | extra views | mean | gain | seeds up / down "
        f"| gain, first {half} | gain, last {len(runs) - half} |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, extra in [(OWN, RECIPE.extra_views), *((s.name, s.extra_views) for s in SCHEMES)]:
        gains = [100 * (run[name] - run[RECIPE.name]) for run in runs]
        mean = 100 * sum(run[name] for run in runs) / len(runs)
        up, down = sum(g > 0 for g in gains), sum(g < 0 for g in gains)
        first = sum(gains[:half]) / max(1, half)
        last = sum(gains[half:]) / max(1, len(runs) - half)
        lines.append(
            f"| {name} | {extra:.2f} | {mean:.3f}% | {sum(gains) / len(gains):+.3f} "
            f"| {up} / {down} | {first:+.3f} | {last:+.3f} |"
        )
    return lines
