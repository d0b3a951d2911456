"""Shared fixtures for the training tests: CPU only, small batches, a private cache folder."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest

from rocmtui.config import TrainConfig

REPO = Path(__file__).resolve().parents[2]
MINI = REPO.parent / "shared" / "data" / "cifar10-mini.npz"


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Never read or write the user's real dataset cache."""
    cache = tmp_path / "xdg-cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    return cache / "rocmtui"


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
    """A --data-dir holding the 5,000-image CIFAR-10 subset in the engine's npz format."""
    if not MINI.is_file():
        pytest.skip(f"{MINI} is absent (the shared test data sits beside the checkout)")
    folder = tmp_path / "mini"
    folder.mkdir()
    shutil.copy(MINI, folder / "cifar10.npz")
    return folder
