"""``rocmtui bench`` on the CPU with the bundled sample: both runs, the shareable lines, JSON, N/A telemetry."""

from __future__ import annotations

import json

import pytest

from rocmtui.base.errors import UsageError
from rocmtui.bench import runner as bench
from rocmtui.bench.runner import BenchOptions, BenchResult, run_bench
from rocmtui.train.telemetry import TemperatureWatch


@pytest.fixture(autouse=True)
def few_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bench, "QUICK_STEPS", 4)


def options(**changes: object) -> BenchOptions:
    base = {"epochs": 5, "model": "simplecnn", "quick": True, "json": False, "data_dir": None, "device": "cpu"}
    return BenchOptions(**{**base, "fast": False, **changes})  # type: ignore[arg-type]


@pytest.mark.slow
def test_quick_bench_prints_two_shareable_lines_and_the_speedup(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_bench(options()) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3
    guide, ours, speedup = lines
    assert guide.startswith("guide loop: simplecnn on cifar10 (sample) | ")
    assert ours.startswith("rocmtui: simplecnn on cifar10 (sample) | ")
    for line in (guide, ours):
        assert "| 1 epoch(s) |" in line and " img/s |" in line and "peak VRAM N/A" in line and "test acc " in line
        assert "(CPU)" in line
    assert speedup.startswith("speedup: ") and speedup.endswith("(rocmtui default settings)")


@pytest.mark.slow
def test_a_recipe_run_follows_with_its_time_to_94_percent(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_bench(options(recipe="fast")) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 4
    assert lines[3].startswith("recipe fast: fastnet on cifar10 (sample) | ")
    assert "| 94% not reached | result in " in lines[3]  # one capped epoch on the sample
    assert lines[3].endswith(" s")


@pytest.mark.slow
def test_each_anchor_is_printed_beside_the_recipe(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    first.write_text(json.dumps({"name": "other", "times_s": [2.0, 1.0, 3.0], "accuracies": [0.9, 0.8, 0.7]}))
    second.write_text(json.dumps({"name": "record", "times_s": [1.1]}))
    assert run_bench(options(recipe="fast", anchors=(first, second))) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[4] == "anchor other: 3 run(s) | median 2.00 s (1.00 to 3.00) | mean acc 80.00%"
    assert lines[5].startswith("time to result: recipe fast ") and lines[5].endswith("x)")
    assert lines[6] == "anchor record: 1 run(s) | median 1.10 s (1.10 to 1.10)"
    assert lines[7].startswith("time to result: recipe fast ") and "against 1.10 s" in lines[7]


def test_a_bad_anchor_is_refused_before_any_run(tmp_path) -> None:
    good, bad = tmp_path / "good.json", tmp_path / "anchor.json"
    good.write_text('{"name": "x", "times_s": [1.0]}')
    bad.write_text('{"name": "x", "times_s": []}')
    with pytest.raises(UsageError, match=r"^--anchor .*: times_s needs 1 to "):
        run_bench(options(anchors=(good, bad), quick=False, epochs=50))


def test_anchor_may_be_given_several_times() -> None:
    from rocmtui.cli.parser import build_parser

    args = build_parser().parse_args(["bench", "--anchor", "a.json", "--anchor", "b.json"])
    assert [str(path) for path in args.anchor] == ["a.json", "b.json"]


@pytest.mark.slow  # trains for more than a second on the 2-core box
def test_bench_json_is_one_object(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_bench(options(json=True, fast=True)) == 0
    out = capsys.readouterr().out
    data = json.loads(out)
    assert set(data) == {"guide", "rocmtui", "speedup"}
    assert data["rocmtui"]["run"] == "rocmtui"  # --fast has no CUDA graph on the CPU
    assert data["guide"]["dataset"] == "cifar10 (sample)" and 0 <= data["rocmtui"]["test_acc"] <= 1


def test_temperature_is_na_when_telemetry_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    from rocmtui.gpu import detect

    def broken(_config: object) -> None:
        raise RuntimeError("no backend")

    monkeypatch.setattr(detect, "open_sampler", broken)
    watch = TemperatureWatch()
    watch.start()
    assert watch.peak(0.0, 1e12) is None
    watch.stop()


def test_result_line_formats_figures() -> None:
    result = BenchResult("rocmtui --cuda-graph", "simplecnn", "cifar10", "NVIDIA H200", "2.11.0 (CUDA 13.0)", 5,
                         1.33, 188684.0, 638 * 2**20, 41.0, 0.6042)  # fmt: skip
    assert result.line() == (
        "rocmtui --cuda-graph: simplecnn on cifar10 | NVIDIA H200 | torch 2.11.0 (CUDA 13.0) | 5 epoch(s) | 1.33 s "
        "| 188,684 img/s | peak VRAM 638.0 MiB | peak temp 41°C | test acc 60.42%"
    )


def test_temperature_peak_comes_from_the_sampler_history(monkeypatch: pytest.MonkeyPatch) -> None:
    from rocmtui.gpu import detect
    from rocmtui.gpu.sample import GpuSample, HostSample, SampleSet

    def sample(t: float, temp: float) -> SampleSet:
        gpu = GpuSample(index=0, name="GPU", timestamp=t, temperatures_c=(("edge", temp - 5), ("junction", temp)))
        return SampleSet(timestamp=t, backend="recorded", gpus=(gpu,), host=HostSample(timestamp=t))

    class Recorded:
        """Stands in for the sampler: a fixed history, as a TelemetrySource returns it."""

        started = stopped = False

        def start(self) -> None:
            self.started = True

        def stop(self) -> None:
            self.stopped = True

        def history(self) -> tuple[SampleSet, ...]:
            return (sample(1.0, 50.0), sample(2.0, 71.0), sample(3.0, 60.0), sample(9.0, 90.0))

    source = Recorded()
    monkeypatch.setattr(detect, "open_sampler", lambda _config: source)
    watch = TemperatureWatch()
    watch.start()
    assert source.started
    assert watch.peak(0.5, 3.5) == 71.0  # junction is the headline; the 90 C sample is outside the window
    assert watch.peak(4.0, 5.0) is None
    watch.stop()
    assert source.stopped
