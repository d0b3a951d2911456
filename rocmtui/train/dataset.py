"""A dataset in memory, as every reader returns it (the npz, the cache, torchvision's folder layout)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Arrays:
    """A loaded dataset: NHWC uint8 images, int64 labels, class names."""

    train_images: np.ndarray
    train_labels: np.ndarray
    test_images: np.ndarray
    test_labels: np.ndarray
    classes: tuple[str, ...]
