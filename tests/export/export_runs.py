"""Run folders and scrapes for the exporter's tests: copies of the real H200 run, parsed with prometheus_client."""

from __future__ import annotations

import json
import shutil
import socket
import time
import urllib.request
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

H200 = Path(__file__).resolve().parents[1] / "data" / "h200-fastnet-run"


def scrape(port: int) -> dict[str, list]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        text = response.read().decode()
    return {family.name: family.samples for family in text_string_to_metric_families(text)}


def one(families, metric: str, /, **labels) -> float:
    found = [s.value for s in families[metric] if all(s.labels.get(k) == v for k, v in labels.items())]
    assert len(found) == 1, (metric, labels, families.get(metric))
    return found[0]


def copy_run(runs: Path, name: str, *, lines: int, state: str) -> Path:
    run_dir = runs / name
    run_dir.mkdir(parents=True)
    shutil.copy(H200 / "config.json", run_dir)
    events = (H200 / "metrics.jsonl").read_text().splitlines()[:lines]
    (run_dir / "metrics.jsonl").write_text("\n".join(events) + "\n")
    status = json.loads((H200 / "status.json").read_text())
    status.update(host=socket.gethostname(), state=state, epoch=4, best_acc=0.8, heartbeat=time.time())
    (run_dir / "status.json").write_text(json.dumps(status))
    return run_dir
