"""The smallest tracked training: a linear model fitted with SGD, reporting through ``rocmtui.track()``.

Run it alone (a run folder appears under ./runs) or under the TUI:

    rocmtui run -- python examples/track_minimal.py
"""

from __future__ import annotations

import argparse
import time

import torch

import rocmtui


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--steps", type=int, default=200, help="steps per epoch")
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--step-ms", type=float, default=5.0, help="extra time per step, to watch it live")
    args = parser.parse_args()

    torch.manual_seed(0)
    true_w = torch.randn(16, 1)
    model = torch.nn.Linear(16, 1)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr)
    with rocmtui.track(config=vars(args), total_steps=args.epochs * args.steps) as run:
        step = 0
        for epoch in range(args.epochs):
            for _ in range(args.steps):
                x = torch.randn(64, 16)
                y = x @ true_w + 0.1 * torch.randn(64, 1)
                loss = torch.nn.functional.mse_loss(model(x), y)
                opt.zero_grad()
                loss.backward()
                opt.step()
                step += 1
                time.sleep(args.step_ms / 1000)  # stands in for a bigger model's step
                run.log(step=step, loss=loss, lr=args.lr)  # a tensor: converted a few times a second
                if run.should_stop:
                    return
            with torch.no_grad():
                x = torch.randn(1024, 16)
                val = torch.nn.functional.mse_loss(model(x), x @ true_w).item()
            run.log_epoch(epoch=epoch + 1, val_loss=val)
            print(f"epoch {epoch + 1}: val_loss {val:.4f}")


if __name__ == "__main__":
    main()
