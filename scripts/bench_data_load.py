"""How long loading a dataset takes: the compressed npz read directly, the first load (which builds the .npy
cache) and later loads (memory-mapped from it), on the bundled sample and on any other npz given.

Each later load is also timed with a copy of every byte, since a memory map defers its reads until the
arrays are touched (as the copy to the training device does). Medians and minima over ``--repeats``; the
page cache is warm for every row (the files were read just before), so these are the CPU costs.

    .venv/bin/python scripts/bench_data_load.py [--npz ../shared/data/cifar10-mini.npz] [--repeats 7]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from rocmtui.config import TrainConfig
from rocmtui.train import data
from rocmtui.train.dataset import Arrays


def timed(fn: Callable[[], object], repeats: int) -> tuple[float, float]:
    """(median, min) of ``repeats`` calls, in milliseconds."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times), min(times)


def touch(arrays: Arrays) -> int:
    """Read every byte (one copy per array), as a host-to-device copy would."""
    return sum(int(np.array(getattr(arrays, key)).nbytes) for key in data.NPZ_KEYS)


def rows_for(label: str, config: TrainConfig, repeats: int) -> list[str]:
    source = data.resolve_source(config)
    spec = data.SPECS[source.dataset]
    folder = data.arrays_dir() / data.cache_name(source)

    def first() -> None:
        shutil.rmtree(folder, ignore_errors=True)
        data.load_arrays(source)

    results = {
        "npz, decompressed (no cache)": timed(lambda: data._read_source(source, spec), repeats),
        "first load: npz + writing the .npy cache (fsynced)": timed(first, repeats),
        "later load: memory-mapped from the cache": timed(lambda: data.load_arrays(source), repeats),
        "later load + reading every byte": timed(lambda: touch(data.load_arrays(source)), repeats),
    }
    images = data.load_arrays(source).train_images.shape[0]
    return [
        f"| {label} ({images:,} train images) | {what} | {med:.1f} | {low:.1f} |"
        for what, (med, low) in results.items()
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--npz", type=Path, action="append", default=[], help="another CIFAR-10 npz (engine format) to time"
    )
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["XDG_CACHE_HOME"] = str(Path(tmp) / "cache")  # never the user's cache
        print("| data | load | median ms | min ms |\n|---|---|---|---|")
        for row in rows_for("bundled sample", TrainConfig(), args.repeats):
            print(row)
        for npz in args.npz:
            folder = Path(tmp) / npz.stem
            folder.mkdir()
            shutil.copy(npz, folder / "cifar10.npz")
            for row in rows_for(npz.name, TrainConfig(data_dir=folder), args.repeats):
                print(row)


if __name__ == "__main__":
    main()
