"""One multi-GPU ``rocmtui monitor --json`` recording from several real single-machine recordings.

Each input is a recording, optionally with ``:N`` to start at its N-th sample; output sample ``i`` holds
the GPUs of every input's sample ``i`` (wrapping around a shorter input), re-indexed 0, 1, 2, ... in input
order, with their processes. Times are the first input's: every other input's readings are shifted onto
them, so the GPUs read as one machine's. The host and the backend statuses are the first input's. No
reading is changed or made up: a combined recording shows real cards side by side, for layout tests and
screenshots of machines with more GPUs than a recording had.

    python scripts/combine_recordings.py out.jsonl a.jsonl b.jsonl:10 a.jsonl:20 --samples 12
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

Record = dict[str, Any]


def read_input(spec: str) -> list[Record]:
    """The samples of ``path[:start]``, from ``start`` on."""
    path, _, start = spec.partition(":")
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines if line.strip()]
    return records[int(start or 0) :]


def shifted(record: Record, key: str, delta: float) -> Record:
    """``record`` with its time ``key`` moved by ``delta`` seconds (None stays None)."""
    value = record.get(key)
    return {**record, key: None if value is None else value + delta}


def combine(inputs: list[list[Record]], samples: int) -> list[Record]:
    """``samples`` records, each with the GPUs of every input's record at that position."""
    out: list[Record] = []
    for i in range(samples):
        base = inputs[0][i % len(inputs[0])]
        gpus: list[Record] = []
        processes: list[Record] = []
        for records in inputs:
            record = records[i % len(records)]
            delta = base["timestamp"] - record["timestamp"]
            new_index = {gpu["index"]: len(gpus) + n for n, gpu in enumerate(record["gpus"])}
            for gpu in record["gpus"]:
                gpus.append({**shifted(gpu, "timestamp", delta), "index": new_index[gpu["index"]]})
            for proc in record["processes"]:
                if proc["gpu_index"] in new_index:
                    moved = shifted(proc, "started_at", delta)
                    processes.append({**moved, "gpu_index": new_index[proc["gpu_index"]]})
        out.append({**base, "gpus": gpus, "processes": processes})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("output", type=Path)
    parser.add_argument("inputs", nargs="+", help="recordings, each as PATH or PATH:FIRST_SAMPLE")
    parser.add_argument("--samples", type=int, default=12, help="samples to write (default 12)")
    args = parser.parse_args()
    combined = combine([read_input(spec) for spec in args.inputs], args.samples)
    text = "".join(json.dumps(record, separators=(",", ":")) + "\n" for record in combined)
    args.output.write_text(text, encoding="utf-8")
    print(f"{args.output}: {len(combined)} samples of {len(combined[0]['gpus'])} GPUs")


if __name__ == "__main__":
    main()
