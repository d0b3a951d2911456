"""Named sets of train settings for ``--recipe NAME``, each with what it was measured to reach."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Measured:
    """What a recipe reached in one recorded measurement: the one place ``--help`` takes its figures from."""

    accuracy_pct: float
    """Mean test accuracy over the seeds measured."""
    seconds: float
    """Median time to result (training and the test pass) a run."""
    machine: str
    measurement: str
    """The command, the date and where the figures are recorded."""

    @property
    def summary(self) -> str:
        """``94.02% in 1.236 s on an H200``."""
        return f"{self.accuracy_pct:.2f}% in {self.seconds:g} s on {self.machine}"


@dataclass(frozen=True)
class Recipe:
    """A named set of train settings, for ``--recipe NAME``: options given on the command line still win."""

    settings: dict[str, Any]
    does: str
    """What the recipe is, in words (no figure: those are ``measured``'s)."""
    measured: Measured | None = None

    @property
    def reaches(self) -> str:
        """What it is and what it was measured to reach, for ``--help``."""
        return f"{self.does}: {self.measured.summary}" if self.measured else self.does


GUIDE_MEASURED = Measured(
    60.26,
    4.74,
    "an H200",
    "`rocmtui bench --data-dir ~/c10` (5 epochs of training, the test pass in each), 2026-11-30; BENCHMARKS.md, "
    "'Training: the ROCm guide's workload'",
)
FAST_MEASURED = Measured(
    94.02,
    1.236,
    "an H200",
    "seeds 0-9 through `scripts/recipe_seeds.py`, test-time augmentation, fused kernels cached; 2026-12-04, evening; "
    "BENCHMARKS.md, 'Five Newton-Schulz steps, fp16 inside the graph, and no jitter at the end' (its row '5 "
    "Newton-Schulz steps (now the recipe)')",
)


RECIPES: dict[str, Recipe] = {
    "guide": Recipe({}, "the ROCm guide's simplecnn, 5 epochs on CIFAR-10", GUIDE_MEASURED),
    "fast": Recipe(
        {
            "model": "fastnet",
            "epochs": 8,
            "batch_size": 2000,
            "optimizer": "muon",
            "newton_schulz_steps": 5,
            "lr": 0.24,
            "weight_decay": 0.004,
            "schedule": "linear",
            "label_smoothing": 0.2,
            "augment": True,
            "jitter": 0.13,
            "crop_sizes": (24,),
            "amp": "bf16",
            "channels_last": True,
            "cuda_graph": True,
            "cudnn_benchmark": False,
            "fused_kernels": True,
            "tta_share": 0.25,
        },
        "fastnet with Muon (5 Newton-Schulz steps), 8 epochs (airbench94_muon's design), brightness and contrast "
        "jitter and the first epoch on 24x24 crops, on CIFAR-10 with test-time augmentation and fused kernels cached "
        "(eager kernels before the cache is built; no CUDA graph on a CPU)",
        FAST_MEASURED,
    ),
}
"""``rocmtui train cifar --recipe fast`` instead of twelve flags."""
