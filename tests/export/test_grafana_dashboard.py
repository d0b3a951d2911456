"""The shipped Grafana dashboard asks only for metrics the exporter writes."""

from __future__ import annotations

import json
import re
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from rocmtui.export.metrics_server import build_registry
from rocmtui.gpu.replay import ReplaySource

DASHBOARD = Path(__file__).resolve().parents[2] / "examples" / "grafana-dashboard.json"
H200 = Path(__file__).resolve().parents[1] / "data" / "h200-fastnet-run"


def test_every_metric_in_the_dashboard_is_exported(tmp_path) -> None:
    from prometheus_client import generate_latest

    source = ReplaySource.from_jsonl(H200 / "gpu.jsonl")
    source.step()
    text = generate_latest(build_registry(lambda: source.latest, tmp_path, "box")).decode()
    exported = {s.name for f in text_string_to_metric_families(text) for s in f.samples}
    exported |= set(re.findall(r"# TYPE (\S+) gauge", text))  # families without samples here (no live run)
    dashboard = json.loads(DASHBOARD.read_text())
    wanted = {m for p in dashboard["panels"] for t in p["targets"] for m in re.findall(r"rocmtui_\w+", t["expr"])}
    assert wanted and wanted <= exported, wanted - exported
