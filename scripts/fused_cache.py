"""Build the fast recipe's fused-kernel cache as a run's background build does, then load it as a run does.

Prints the cache's state before, the build's seconds (``python -m rocmtui.train.fused_build``, waited for),
the seconds a run's engine build and graph capture take from the warm cache, and the captured step's time
(CUDA events). Random images of CIFAR-10's shape: the compiled graph depends only on shapes. After the load it
lists the cache's files that no longer match ``ready.json`` (a load that rewrites its cache makes the next run
call it damaged) and the state the next run would find.

    python scripts/fused_cache.py
    python scripts/fused_cache.py --fused-mode max-autotune
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch
from fast_levers import gpu_ms, random_arrays

from rocmtui.config import TrainConfig
from rocmtui.train import fused
from rocmtui.train.engine import build_engine, capture_graph
from rocmtui.train.recipes import RECIPES


def changed(folder: Path) -> list[str]:
    """The files ``ready.json`` lists that are missing or no longer hash as listed."""
    listed = fused._read_json(folder / fused.READY).get("files", {})
    return [name for name, digest in listed.items() if _differs(folder / name, digest)]


def _differs(path: Path, digest: str) -> bool:
    return not path.is_file() or fused._digest(path) != digest


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fused-mode", default="default", choices=["default", "max-autotune"])
    args = parser.parse_args()
    config = TrainConfig(**{**RECIPES["fast"].settings, "device": "cuda", "fused_mode": args.fused_mode})
    plan = fused.plan(config, torch.device("cuda"), (3, 32, 32), 10, 50_000, 10_000)
    print(f"before: {plan.state} ({plan.notice})", flush=True)
    start = time.perf_counter()
    process = fused.build_later(plan)
    code = process.wait() if process is not None else None
    print(f"build: exit {code}, {time.perf_counter() - start:.1f} s", flush=True)
    start = time.perf_counter()
    engine = build_engine(config, random_arrays(), torch.device("cuda"))
    capture_graph(engine)
    torch.cuda.synchronize()
    print(f"engine and capture: {time.perf_counter() - start:.1f} s, {engine.fused.state} ({engine.fused.notice})")
    x, y = engine.data.train_x[:2000], engine.data.train_y[:2000]
    print(f"step: {gpu_ms(lambda: engine.optimisation.step(x, y, engine.stats), repeats=20):.3f} ms", flush=True)
    if plan.folder is not None:
        names = changed(plan.folder)
        print(f"files changed by the load: {len(names)} {names[:10]}")
        after = fused.plan(config, torch.device("cuda"), (3, 32, 32), 10, 50_000, 10_000)
        print(f"the next run finds: {after.state} ({after.notice})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
