"""fp16 in a captured step: a fixed loss scale instead of the GradScaler, the same training as the scaler's."""

from __future__ import annotations

import pytest
import torch
from graph_pairs import assert_trained_alike, graphed_and_eager

from rocmtui.train.learning_rates import set_lr
from rocmtui.train.step import STATIC_LOSS_SCALE, GraphSteps

GPU = pytest.mark.gpu(reason="CUDA graphs")


@GPU
@pytest.mark.parametrize("optimizer", ["muon", "sgd"])
def test_graphed_fp16_steps_train_as_a_scaler_at_the_same_scale_does(small, optimizer: str) -> None:
    config = small(
        model="fastnet", optimizer=optimizer, lr=0.05, schedule="linear", augment=True, device="cuda",
        batch_size=64, epochs=2, max_steps_per_epoch=2, cudnn_benchmark=False, amp="fp16",
    )  # fmt: skip
    with graphed_and_eager(config) as (graphed, eager):
        assert isinstance(graphed.optimisation.step, GraphSteps)
        # the eager step's GradScaler held at the graph's scale: the same sums, unscaled the same way
        eager.eager.scaler = torch.amp.GradScaler("cuda", init_scale=STATIC_LOSS_SCALE, growth_interval=10**6)
        x, y = graphed.data.train_x[:64], graphed.data.train_y[:64]
        for step in range(4):
            for engine in (graphed, eager):
                set_lr(engine.optimizer, config, step, engine.total_steps)
                engine.optimisation.step(x, y, engine.stats)
        assert eager.eager.scaler.get_scale() == STATIC_LOSS_SCALE  # no step of the scaler's was skipped
        assert_trained_alike(graphed, eager)
