"""Captured steps before and after the whitening bias's span: a graph for each, picked by the bias's state."""

from __future__ import annotations

import pytest
from graph_pairs import assert_trained_alike, graphed_and_eager

from rocmtui.train.learning_rates import freeze_spent, set_lr, spanned_params
from rocmtui.train.step import GraphSteps

GPU = pytest.mark.gpu(reason="CUDA graphs")


@GPU
def test_graphed_steps_across_the_span_train_as_eager_steps_do(small) -> None:
    config = small(
        model="fastnet", optimizer="muon", lr=0.24, schedule="linear", augment=True, device="cuda",
        batch_size=64, epochs=4, max_steps_per_epoch=2, cudnn_benchmark=False,
    )  # fmt: skip
    with graphed_and_eager(config) as (graphed, eager):
        steps = graphed.optimisation.step
        assert isinstance(steps, GraphSteps) and sorted(key[1] for key in steps.steps) == [False, True]
        x, y = graphed.data.train_x[:64], graphed.data.train_y[:64]
        for step in range(8):
            for engine in (graphed, eager):
                set_lr(engine.optimizer, config, step, engine.total_steps)
                freeze_spent(engine.optimizer, step)
                engine.optimisation.step(x, y, engine.stats)
        assert not spanned_params(graphed.optimizer)[0].requires_grad
        assert_trained_alike(graphed, eager)
