"""Check on this machine's device that FunctionalOptimizer steps as torch.optim does, for every flag set the engine
uses: fused (eager runs) and, on a GPU, foreach + capturable with a tensor learning rate (CUDA graphs).

    python scripts/optimizer_parity.py            # prints one line per case and the largest difference
"""

from __future__ import annotations

import sys

import torch
from torch import nn

from rocmtui.train.optimizer import FunctionalOptimizer


def run(kind: str, device: torch.device, graph: bool) -> float:
    torch.manual_seed(0)
    a = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10)).to(device)
    b = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10)).to(device)
    b.load_state_dict(a.state_dict())

    def lr() -> float | torch.Tensor:
        return torch.tensor(0.01, device=device) if graph else 0.01

    flags = {"capturable": True, "foreach": True} if graph and kind != "sgd" else {"fused": True}
    if kind == "sgd":
        ref: torch.optim.Optimizer = torch.optim.SGD(
            [{"params": list(a.parameters()), "lr": lr()}],
            lr=0.01,
            momentum=0.9,
            nesterov=True,
            weight_decay=5e-3,
            fused=True,
        )
    else:
        cls = torch.optim.AdamW if kind == "adamw" else torch.optim.Adam
        ref = cls([{"params": list(a.parameters()), "lr": lr()}], lr=0.01, weight_decay=5e-3, **flags)
    mine = FunctionalOptimizer(
        kind,  # type: ignore[arg-type]
        [{"params": list(b.parameters()), "lr": lr()}],
        lr=0.01,
        weight_decay=5e-3,
        fused="fused" in flags,
        capturable="capturable" in flags,
        foreach="foreach" in flags,
    )
    gen = torch.Generator(device=device).manual_seed(1)
    for _ in range(20):
        x = torch.randn(64, 32, device=device, generator=gen)
        y = torch.randint(0, 10, (64,), device=device, generator=gen)
        for model, opt in ((a, ref), (b, mine)):
            opt.zero_grad(set_to_none=True)
            nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
    return max((p - q).abs().max().item() for p, q in zip(a.parameters(), b.parameters(), strict=True))


def main() -> int:
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    worst = 0.0
    for kind in ("adam", "adamw", "sgd"):
        for graph in (False, True) if device.type == "cuda" else (False,):
            diff = run(kind, device, graph)
            worst = max(worst, diff)
            print(f"{kind:6} {'graph flags' if graph else 'fused':12} {device}: largest difference {diff:.3g}")
    print(f"largest difference over all cases: {worst:.3g}")
    return 0 if worst == 0.0 else 1


if __name__ == "__main__":
    sys.exit(main())
