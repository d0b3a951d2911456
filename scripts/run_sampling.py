"""What a run folder's GPU samples saw: how many, how far apart, and the utilisation they caught.

A run of a few seconds sampled once a second shows mostly its set-up; this prints, per folder, the samples'
count, their median spacing and the highest and mean utilisation of GPU 0, to compare sampling rates.

    python scripts/run_sampling.py RUN_DIR [RUN_DIR ...]
"""

from __future__ import annotations

import argparse
import itertools
import statistics
from pathlib import Path

from rocmtui.gpu.sample_codec import loads


def describe(run_dir: Path) -> str:
    lines = [line for line in (run_dir / "gpu.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    samples = [loads(line) for line in lines]
    if not samples:
        return f"{run_dir.name}: no samples"
    times = [s.timestamp for s in samples]
    gaps = [b - a for a, b in itertools.pairwise(times)]
    utils = [s.gpus[0].utilization_pct for s in samples if s.gpus and s.gpus[0].utilization_pct is not None]
    spacing = f"median spacing {statistics.median(gaps):.2f} s" if gaps else "one sample"
    load = f"GPU 0 utilisation max {max(utils):.0f}%, mean {statistics.fmean(utils):.0f}%" if utils else "no GPU"
    return f"{run_dir.name}: {len(samples)} samples over {times[-1] - times[0]:.1f} s, {spacing}, {load}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", type=Path, nargs="+")
    for run_dir in parser.parse_args().runs:
        print(describe(run_dir))


if __name__ == "__main__":
    main()
