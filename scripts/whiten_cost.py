"""What fastnet's whitening conv costs a step on a GPU, with its 3 input channels as they are and zero-padded to 8
(``models._Whiten``): the conv's forward and its bias gradient, bf16 autocast, channels_last, CUDA events.

    python scripts/whiten_cost.py --sides 32,24
"""

from __future__ import annotations

import argparse

import torch
from fast_levers import gpu_ms

from rocmtui.train import models
from rocmtui.train.step import autocast


def step_ms(conv: models._Whiten, side: int, batch: int) -> float:
    x = torch.randn(batch, 3, side, side, device="cuda").contiguous(memory_format=torch.channels_last)

    def work() -> None:
        with autocast(torch.device("cuda"), "bf16"):
            out = conv(x)
        out.float().sum().backward()

    return gpu_ms(work, repeats=40)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sides", default="32,24")
    parser.add_argument("--batch", type=int, default=2000)
    args = parser.parse_args()
    net = models.FastNet(3, 32, 10).cuda().to(memory_format=torch.channels_last)
    conv = net.whiten
    assert isinstance(conv, models._Whiten)
    print("| side | channels as they are, ms | padded to 8, ms | same output (max difference) |\n|---|---|---|---|")
    for side in (int(s) for s in args.sides.split(",")):
        conv.pad_channels = False
        plain = step_ms(conv, side, args.batch)
        x = torch.randn(64, 3, side, side, device="cuda").contiguous(memory_format=torch.channels_last)
        with torch.no_grad(), autocast(torch.device("cuda"), "bf16"):
            before = conv(x).float()
            conv.pad_channels = True
            after = conv(x).float()
        padded = step_ms(conv, side, args.batch)
        print(f"| {side} | {plain:.3f} | {padded:.3f} | {(before - after).abs().max().item():.2e} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
