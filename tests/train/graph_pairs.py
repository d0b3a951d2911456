"""A graphed engine beside an eager one of the same settings, for the GPU tests of captured steps."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import torch

from rocmtui.config import TrainConfig
from rocmtui.train.data import load_arrays, resolve_source
from rocmtui.train.engine import Engine, build_engine, capture_graph


@contextmanager
def graphed_and_eager(config: TrainConfig) -> Iterator[tuple[Engine, Engine]]:
    """Two engines of ``config`` on the GPU, the first with its steps captured, cuDNN deterministic inside."""
    arrays = load_arrays(resolve_source(config))
    device = torch.device("cuda")
    torch.backends.cudnn.deterministic = True
    try:
        graphed = build_engine(dataclasses.replace(config, cuda_graph=True), arrays, device)
        capture_graph(graphed)
        yield graphed, build_engine(dataclasses.replace(config, cuda_graph=True), arrays, device)
    finally:
        torch.backends.cudnn.deterministic = False


def assert_trained_alike(graphed: Engine, eager: Engine) -> None:
    """The same weights (to bf16's rounding) and the same losses."""
    for (name, a), b in zip(graphed.model.state_dict().items(), eager.model.state_dict().values(), strict=True):
        assert torch.allclose(a.float(), b.float(), rtol=1e-3, atol=1e-5), name
    assert graphed.stats.drain() == pytest.approx(eager.stats.drain(), rel=1e-4)
