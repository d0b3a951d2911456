"""A tiny Lightning module for the callback tests: one linear layer fitted to random data.

Imported by the tests after ``pytest.importorskip("lightning.pytorch")``, and by the DDP test's script through
``PYTHONPATH``.
"""

from __future__ import annotations

import lightning.pytorch as pl
import torch


class Tiny(pl.LightningModule):
    def __init__(self) -> None:
        super().__init__()
        self.layer = torch.nn.Linear(4, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = torch.nn.functional.mse_loss(self.layer(x), y)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", torch.nn.functional.mse_loss(self.layer(x), y))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)
