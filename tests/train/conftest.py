"""Shared fixtures for the training tests: CPU only, small batches, a private cache folder."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from training_fixtures import private_cache

from rocmtui.config import TrainConfig

__all__ = ["mini_dir", "private_cache", "small"]

SAMPLE = Path(__file__).resolve().parents[2] / "rocmtui" / "data" / "cifar10-sample.npz"
"""The real CIFAR-10 sample bundled with rocmtui: in every clone."""
SUBSET = (1000, 300)
"""Train and test images of the data folder made from it (other data than the sample itself)."""


@pytest.fixture(autouse=True)
def one_torch_thread() -> Iterator[None]:
    """torch on one thread a test process: the default tier runs a process a core, and a few small CPU steps on a
    thread a core wait for each other (a run of 6 tiny steps took 4.4 s on the loaded 2-core box, 0.2 s on one)."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture
def small(tmp_path: Path):
    """A factory of quick CPU configs on the bundled sample: batch 32, 6 steps an epoch."""

    def make(**changes: object) -> TrainConfig:
        base = TrainConfig(device="cpu", batch_size=32, epochs=2, max_steps_per_epoch=6, emit_interval_s=0.0)
        base = dataclasses.replace(base, runs_dir=tmp_path / "runs")
        return dataclasses.replace(base, **changes)

    return make


@pytest.fixture
def mini_dir(tmp_path: Path) -> Path:
    """A --data-dir holding real CIFAR-10 images in the engine's npz format: the first 1,000 train and 300 test
    images of the bundled sample (so other data than the sample a run without --data-dir trains on)."""
    train, test = SUBSET
    with np.load(SAMPLE) as sample:
        arrays = {
            "train_images": sample["train_images"][:train],
            "train_labels": sample["train_labels"][:train],
            "test_images": sample["test_images"][:test],
            "test_labels": sample["test_labels"][:test],
            "classes": sample["classes"],
        }
    folder = tmp_path / "mini"
    folder.mkdir()
    np.savez(folder / "cifar10.npz", **arrays)
    return folder
