"""Time the guide's loop and the engine's settings on full CIFAR-10; print a table, write logs to --out.

Usage: python scripts/bench_engine.py --pieces ~/c10 --out $OUT [--skip-reference] [--only NAME ...]
``--pieces`` holds train-0..3.npz and test.npz (keys images, labels); they are joined into the
engine's npz format there once, and that folder is passed as --data-dir.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch

from rocmtui.bench import reference_loop as reference
from rocmtui.config import TrainConfig
from rocmtui.events import EpochCompleted, RunControl, RunFinished, TrainEvent, event_to_dict
from rocmtui.run.stream import read_events
from rocmtui.train.data import load_arrays, resolve_source, save_npz
from rocmtui.train.loop import train
from rocmtui.train.tvdata import CIFAR_CLASSES

FASTNET = TrainConfig(
    model="fastnet",
    epochs=10,
    batch_size=1024,
    optimizer="sgd",
    lr=1.0,
    weight_decay=1.5e-3,
    schedule="onecycle",
    label_smoothing=0.2,
    augment=True,
    amp="bf16",
    channels_last=True,
)
RUNS: dict[str, TrainConfig] = {
    "default": TrainConfig(),
    "default-again": TrainConfig(),
    "graph": TrainConfig(cuda_graph=True),
    "graph-again": TrainConfig(cuda_graph=True),
    "graph-bf16-cl": TrainConfig(cuda_graph=True, amp="bf16", channels_last=True),
    "fastnet": FASTNET,
    "fastnet-graph": replace(FASTNET, cuda_graph=True),
    "fastnet-graph-12ep": replace(FASTNET, epochs=12, cuda_graph=True),
    "fastnet-graph-14ep": replace(FASTNET, epochs=14, cuda_graph=True),
    "fastnet-graph-16ep": replace(FASTNET, epochs=16, cuda_graph=True),
    "resnet18-1ep": TrainConfig(model="resnet18", epochs=1, batch_size=512, amp="bf16", channels_last=True),
    "compile": TrainConfig(compile=True),
}


def join_pieces(folder: Path) -> Path:
    target = folder / "cifar10.npz"
    if target.exists():
        return target
    train = [np.load(folder / f"train-{i}.npz") for i in range(4)]
    test = np.load(folder / "test.npz")
    from rocmtui.train.dataset import Arrays

    arrays = Arrays(
        np.concatenate([t["images"] for t in train]),
        np.concatenate([t["labels"] for t in train]).astype(np.int64),
        test["images"],
        test["labels"].astype(np.int64),
        CIFAR_CLASSES,
    )
    save_npz(arrays, target)
    return target


def time_run(name: str, config: TrainConfig, out: Path) -> dict[str, object]:
    events: list[TrainEvent] = []
    torch.cuda.synchronize()
    start = time.perf_counter()
    summary = train(config, events.append, RunControl())
    wall = time.perf_counter() - start
    (out / f"{name}.jsonl").write_text("".join(json.dumps(event_to_dict(e)) + "\n" for e in events))
    epochs = [e for e in events if isinstance(e, EpochCompleted)]
    cum, curve = 0.0, []
    for e in epochs:
        cum += e.seconds
        curve.append((round(cum, 3), round(e.test_acc, 4)))
    row: dict[str, object] = {"name": name, "wall_s": round(wall, 3), "curve": curve}
    if isinstance(summary.event, RunFinished):
        f = summary.event
        row |= {"train_s": round(f.total_s, 3), "acc": f.final_test_acc, "img_s": round(f.images_per_s)}
        row["peak_gb"] = round((f.peak_memory_bytes or 0) / 1e9, 3)
        for target in (0.93, 0.94):
            hit = next((t for t, a in curve if a >= target), None)
            row[f"t{int(target * 100)}"] = hit
    else:
        row["failed"] = summary.event.message
    print(json.dumps(row), flush=True)
    return row


def count_syncs(config: TrainConfig) -> int:
    """GPU syncs seen by torch's sync debugger over one run (warn mode: each sync is a warning)."""
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.cuda.set_sync_debug_mode(1)
        try:
            train(config, lambda _e: None, RunControl())
        finally:
            torch.cuda.set_sync_debug_mode(0)
    return sum("synchroniz" in str(w.message) for w in caught)


def checks(out: Path) -> None:
    """Syncs must not grow with the step count; a stopped and resumed graph run must match a whole one."""
    base = TrainConfig(batch_size=16, epochs=2, emit_interval_s=1e9, runs_dir=Path("/tmp/check-runs"))
    for graph in (False, True):
        counts = [count_syncs(replace(base, cuda_graph=graph, max_steps_per_epoch=n)) for n in (30, 100)]
        print(json.dumps({"check": "syncs", "cuda_graph": graph, "steps_30_vs_100": counts}), flush=True)
    cfg = replace(FASTNET, epochs=3, batch_size=256, cuda_graph=True, runs_dir=Path("/tmp/check-runs"))
    whole = _epoch_accs(cfg, None)
    control = RunControl()

    def stop_mid(event: TrainEvent) -> None:
        if getattr(event, "step", 0) >= 10 and getattr(event, "epoch_step", 0):
            control.request_stop()

    part = train(replace(cfg, emit_interval_s=0.0), stop_mid, control)
    resumed = _epoch_accs(replace(cfg, resume=part.run_dir), part.run_dir)
    print(json.dumps({"check": "graph-resume", "whole": whole, "stopped+resumed": resumed}), flush=True)


def _epoch_accs(config: TrainConfig, run_dir: Path | None) -> list[float]:
    summary = train(config, lambda _e: None, RunControl())
    folder = run_dir or summary.run_dir
    assert folder is not None
    return [round(e.test_acc, 4) for e in read_events(folder) if isinstance(e, EpochCompleted)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pieces", type=Path, default=None, help="default: the bundled sample")
    parser.add_argument("--epochs", type=int, default=None, help="override every run's epochs")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--skip-reference", action="store_true")
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--checks", action="store_true", help="sync and graph-resume checks on the sample, then exit")
    args = parser.parse_args()
    if args.checks:
        checks(args.out)
        return
    args.out.mkdir(parents=True, exist_ok=True)
    data_dir = join_pieces(args.pieces.expanduser()).parent if args.pieces else None
    print(f"torch {torch.__version__} CUDA {torch.version.cuda} on {torch.cuda.get_device_name()}", flush=True)
    rows = []
    if not args.skip_reference:
        source = resolve_source(TrainConfig(data_dir=data_dir))
        train_set, test_set = reference.datasets(load_arrays(source), None)
        ref = reference.run_reference(train_set, test_set, args.epochs or 5, torch.device("cuda"))
        row = {"name": "guide-loop", "wall_s": round(ref.seconds, 3), "acc": ref.test_acc}
        row["peak_gb"] = round((ref.peak_memory_bytes or 0) / 1e9, 3)
        print(json.dumps(row), flush=True)
        rows.append(row)
    runs_dir = Path("/tmp/bench-runs")
    for name, config in RUNS.items():
        if args.only and name not in args.only:
            continue
        cfg = replace(config, data_dir=data_dir, runs_dir=runs_dir, epochs=args.epochs or config.epochs)
        rows.append(time_run(name, cfg, args.out))
    (args.out / "bench.json").write_text(json.dumps(rows, indent=1))
    print(f"{'run':16} {'wall_s':>7} {'train_s':>7} {'acc':>7} {'img/s':>9} {'t93':>6} {'t94':>6}")
    for r in rows:
        acc = r.get("acc")
        print(
            f"{r['name']:16} {r.get('wall_s', '')!s:>7} {r.get('train_s', '')!s:>7} "
            f"{(f'{acc:.4f}' if isinstance(acc, float) else '-'):>7} {r.get('img_s', '')!s:>9} "
            f"{r.get('t93')!s:>6} {r.get('t94')!s:>6} {r.get('failed', '')}"
        )


if __name__ == "__main__":
    main()
