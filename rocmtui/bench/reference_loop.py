"""The ROCm guide's training loop as written: torchvision dataset + ToTensor, DataLoader(64, shuffle), Adam.

``rocmtui bench`` times it against the engine. Offline, the same images are wrapped in a Dataset that
converts each item with ToTensor, as torchvision's CIFAR10 does, so the CPU-side cost is the same.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

from rocmtui.train.dataset import Arrays
from rocmtui.train.models import build_model


@dataclass(frozen=True)
class ReferenceResult:
    seconds: float
    """Wall time of the training epochs and the final test pass."""
    images: int
    test_acc: float
    peak_memory_bytes: int | None


class ArrayDataset(Dataset[tuple[Any, int]]):
    """NHWC uint8 images served one PIL image at a time through a transform, like torchvision's CIFAR10."""

    def __init__(self, images: np.ndarray, labels: np.ndarray, transform: Any) -> None:
        self.images, self.labels, self.transform = images, labels, transform

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, index: int) -> tuple[Any, int]:
        from PIL import Image

        image = self.images[index]
        pil = Image.fromarray(image[..., 0] if image.shape[-1] == 1 else image)
        return self.transform(pil), int(self.labels[index])


def datasets(arrays: Arrays | None, data_dir: Path | None) -> tuple[Dataset[Any], Dataset[Any]]:
    """torchvision's CIFAR10 from ``data_dir`` when it has the folder layout, else the arrays."""
    from torchvision import datasets as tv_datasets
    from torchvision import transforms

    transform = transforms.ToTensor()
    if arrays is None:
        assert data_dir is not None
        return (
            tv_datasets.CIFAR10(str(data_dir), train=True, transform=transform),
            tv_datasets.CIFAR10(str(data_dir), train=False, transform=transform),
        )
    return (
        ArrayDataset(arrays.train_images, arrays.train_labels, transform),
        ArrayDataset(arrays.test_images, arrays.test_labels, transform),
    )


def run_reference(  # noqa: PLR0917 - mirrors the guide's few knobs
    train_set: Dataset[Any],
    test_set: Dataset[Any],
    epochs: int,
    device: torch.device,
    model_name: str = "simplecnn",
    max_steps: int | None = None,
) -> ReferenceResult:
    """The guide's loop; ``max_steps`` caps each epoch (for ``bench --quick``)."""
    torch.manual_seed(0)
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
        torch.cuda.synchronize(device)
    start = time.perf_counter()
    loader = DataLoader(train_set, batch_size=64, shuffle=True)
    model = build_model(model_name, 3, 32, 10).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    criterion = nn.CrossEntropyLoss()
    images = 0
    for _ in range(epochs):
        for step, (inputs, labels) in enumerate(loader):
            if max_steps is not None and step >= max_steps:
                break
            x, y = inputs.to(device), labels.to(device)
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
            images += len(y)
    correct = total = 0
    with torch.no_grad():
        for x, y in DataLoader(test_set, batch_size=64):
            pred = model(x.to(device)).argmax(1).cpu()
            correct += int((pred == y).sum())
            total += len(y)
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    seconds = time.perf_counter() - start
    peak = torch.cuda.max_memory_allocated(device) if device.type == "cuda" else None
    return ReferenceResult(seconds, images, correct / max(total, 1), peak)
