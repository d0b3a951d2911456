"""A Lightning fit reporting to rocmtui through its callback, on the CIFAR-10 sample bundled with rocmtui.

The sample (1,900 training and 600 test images, ``rocmtui/data/cifar10-sample.npz``) ships with the
package: nothing is downloaded. A few epochs of a small CNN take well under a minute on a 2-core CPU.

    rocmtui run -- python examples/lightning_cifar.py --epochs 5
"""

from __future__ import annotations

import argparse
from importlib.resources import files

import lightning.pytorch as pl
import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from rocmtui.integrations.lightning import RocmtuiCallback


def tensors(data: np.lib.npyio.NpzFile, split: str) -> TensorDataset:
    x = torch.from_numpy(data[f"{split}_images"]).permute(0, 3, 1, 2).float().div(255.0)
    x = (x - 0.5) / 0.25
    return TensorDataset(x, torch.from_numpy(data[f"{split}_labels"]).long())


class SmallCNN(pl.LightningModule):
    def __init__(self, lr: float) -> None:
        super().__init__()
        self.save_hyperparameters()
        self.net = nn.Sequential(
            nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Flatten(), nn.Linear(64 * 8 * 8, 128), nn.ReLU(), nn.Linear(128, 10),
        )  # fmt: skip

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)

    def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> torch.Tensor:
        x, y = batch
        loss = nn.functional.cross_entropy(self(x), y)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> None:
        x, y = batch
        logits = self(x)
        self.log("val_loss", nn.functional.cross_entropy(logits, y))
        self.log("val_acc", (logits.argmax(1) == y).float().mean())

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.Adam(self.parameters(), lr=self.hparams["lr"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=1e-3)
    args = parser.parse_args()

    pl.seed_everything(0, verbose=False)
    with np.load(str(files("rocmtui") / "data" / "cifar10-sample.npz")) as data:
        train, test = tensors(data, "train"), tensors(data, "test")
    trainer = pl.Trainer(
        max_epochs=args.epochs,
        callbacks=[RocmtuiCallback("lightning-cifar")],
        enable_progress_bar=False,  # the progress is in rocmtui's window
        enable_checkpointing=False,
        logger=False,
    )
    trainer.fit(
        SmallCNN(args.lr),
        DataLoader(train, batch_size=args.batch_size, shuffle=True),
        DataLoader(test, batch_size=256),
    )


if __name__ == "__main__":
    main()
