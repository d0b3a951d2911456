"""Captured steps before and after the whitening bias's span: a graph for each, picked by the bias's state."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from rocmtui.train.data import load_arrays, resolve_source
from rocmtui.train.engine import build_engine, capture_graph
from rocmtui.train.learning_rates import freeze_spent, set_lr, spanned_params
from rocmtui.train.step import GraphSteps

GPU = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU: CUDA graphs")


@GPU
def test_graphed_steps_across_the_span_train_as_eager_steps_do(small) -> None:
    config = small(
        model="fastnet", optimizer="muon", lr=0.24, schedule="linear", augment=True, device="cuda",
        batch_size=64, epochs=4, max_steps_per_epoch=2, cudnn_benchmark=False,
    )  # fmt: skip
    arrays = load_arrays(resolve_source(config))
    device = torch.device("cuda")
    torch.backends.cudnn.deterministic = True
    try:
        graphed = build_engine(dataclasses.replace(config, cuda_graph=True), arrays, device)
        capture_graph(graphed)
        steps = graphed.optimisation.step
        assert isinstance(steps, GraphSteps) and sorted(key[1] for key in steps.steps) == [False, True]
        eager = build_engine(dataclasses.replace(config, cuda_graph=True), arrays, device)
        x, y = graphed.data.train_x[:64], graphed.data.train_y[:64]
        for step in range(8):
            for engine in (graphed, eager):
                set_lr(engine.optimizer, config, step, engine.total_steps)
                freeze_spent(engine.optimizer, step)
                engine.optimisation.step(x, y, engine.stats)
        assert not spanned_params(graphed.optimizer)[0].requires_grad
        for (name, a), b in zip(graphed.model.state_dict().items(), eager.model.state_dict().values(), strict=True):
            assert torch.allclose(a.float(), b.float(), rtol=1e-3, atol=1e-5), name
        assert graphed.stats.drain() == pytest.approx(eager.stats.drain(), rel=1e-4)
    finally:
        torch.backends.cudnn.deterministic = False
