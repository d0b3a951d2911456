"""Named sets of train settings for ``--recipe NAME``, each with what it was measured to reach."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Recipe:
    """A named set of train settings, for ``--recipe NAME``: options given on the command line still win."""

    settings: dict[str, Any]
    reaches: str
    """What it was measured to reach (BENCHMARKS.md), for ``--help``."""


RECIPES: dict[str, Recipe] = {
    "guide": Recipe({}, "the ROCm guide's simplecnn, 5 epochs: ~60% on CIFAR-10, 4.7 s of training on an H200"),
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
        "jitter and the first epoch on 24x24 crops: 94.02% on CIFAR-10 (seeds 0-9, with test-time augmentation) in "
        "1.236 s to result on an H200 with fused kernels cached (eager kernels before the cache is built; no CUDA "
        "graph on a CPU)",
    ),
}
"""``rocmtui train cifar --recipe fast`` instead of twelve flags."""
