"""The run folder's GPU samples: 4 Hz for a run's first minutes unless ``--interval`` is given, then the interval."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from waiting import wait_for

from rocmtui.cli.main import monitor_config
from rocmtui.cli.parser import build_parser
from rocmtui.config import MonitorConfig
from rocmtui.gpu import run_recorder
from rocmtui.gpu.run_recorder import GpuRecorder
from rocmtui.gpu.sample import SampleSet
from rocmtui.run.samples import SampleLog


def recorded_times(run_dir: Path) -> list[float]:
    path = run_dir / "gpu.jsonl"
    if not path.exists():
        return []
    return [json.loads(line)["timestamp"] for line in path.read_text().splitlines() if line.strip()]


class StillClock:
    """The recorder's clock, moved by the test: when the fast start ends is decided here, not by a loaded
    machine's scheduling."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


def test_a_run_samples_at_4_hz_at_first_then_at_its_interval(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    clock = StillClock()
    monkeypatch.setattr(run_recorder, "time", clock)
    taken_at: list[float | None] = []  # the sampler's interval when each sample was taken
    record = GpuRecorder._record

    def noted(self: GpuRecorder, sample_set: SampleSet) -> None:
        taken_at.append(self.interval_s)
        record(self, sample_set)

    monkeypatch.setattr(GpuRecorder, "_record", noted)
    recorder = GpuRecorder(lambda: SampleLog(tmp_path), MonitorConfig(backend="auto", interval_s=1.0, fast_start_s=0.6))
    try:
        assert recorder.interval_s == MonitorConfig.FAST_INTERVAL_S
        wait_for(lambda: len(recorded_times(tmp_path)) >= 3, what="three samples")
        assert recorder.interval_s == MonitorConfig.FAST_INTERVAL_S  # the fast start has not ended on its clock
        clock.now += 0.6
        wait_for(lambda: recorder.interval_s == 1.0, what="the run's interval")
        fast = len(taken_at)
        wait_for(lambda: len(taken_at) > fast, what="a sample at the run's interval")
    finally:
        recorder.close()
    assert taken_at[:3] == [MonitorConfig.FAST_INTERVAL_S] * 3 and taken_at[-1] == 1.0
    assert recorder.interval_s is None  # closed


def test_a_given_interval_is_kept_from_the_start(tmp_path: Path) -> None:
    recorder = GpuRecorder(lambda: SampleLog(tmp_path), MonitorConfig(backend="auto", interval_s=2.0))
    try:
        assert recorder.interval_s == 2.0
    finally:
        recorder.close()


@pytest.mark.parametrize(
    ("argv", "interval", "fast_start"),
    [
        (["train", "cifar"], 1.0, MonitorConfig.RUN_FAST_START_S),
        (["train", "cifar", "--interval", "0.5"], 0.5, 0.0),
        (["monitor"], 1.0, 0.0),
        (["monitor", "--interval", "2"], 2.0, 0.0),
    ],
)
def test_only_a_run_not_given_an_interval_starts_fast(argv: list[str], interval: float, fast_start: float) -> None:
    config = monitor_config(build_parser().parse_args(argv))
    assert (config.interval_s, config.fast_start_s) == (interval, fast_start)
    assert MonitorConfig(**json.loads(json.dumps(config.recorder_settings()))).fast_start_s == fast_start
