"""JSON round trip of SampleSets and the ReplaySource used by UI tests."""

from __future__ import annotations

import json
import threading

import pytest
from gpu_factories import sample_set

from rocmtui.codec import CodecError
from rocmtui.gpu import sample_codec
from rocmtui.gpu.replay import ReplaySource, recorded_interval, shifted
from rocmtui.gpu.sample import GpuSample, SampleSet


def test_round_trip_is_exact_through_json_text() -> None:
    original = sample_set(t=1234.5, n_gpus=3)
    again = sample_codec.loads(sample_codec.dumps(original))
    assert again == original
    assert again.gpus[1].temperatures_c == (("edge", 45.0), ("junction", 52.0))


def test_none_fields_and_errors_survive() -> None:
    s = sample_set()
    broken = GpuSample(index=1, name="gone", timestamp=1.0, error="card removed")
    s = SampleSet(timestamp=1.0, backend="sysfs", gpus=(broken,), host=s.host)
    again = sample_codec.loads(sample_codec.dumps(s))
    assert again.gpus[0].error == "card removed"
    assert again.gpus[0].utilization_pct is None


def test_unknown_keys_are_ignored_and_missing_optionals_default() -> None:
    data = sample_codec.sample_set_to_dict(sample_set())
    data["future_field"] = 1
    data["gpus"][0]["future_gpu_field"] = "x"
    del data["gpus"][0]["fan_rpm"]
    del data["processes"]
    again = sample_codec.sample_set_from_dict(data)
    assert again.gpus[0].fan_rpm is None
    assert again.processes == ()


@pytest.mark.parametrize(
    "text",
    ["not json", "[]", '{"backend": "x"}', '{"timestamp": 1, "backend": "x", "host": {}, "gpus": [{"name": "a"}]}'],
)
def test_malformed_input_is_a_value_error(text: str) -> None:
    with pytest.raises(ValueError):
        sample_codec.loads(text)


@pytest.mark.parametrize(
    ("where", "key", "value"),
    [("gpu", "utilization_pct", "87"), ("gpu", "index", 1.5), ("host", "ram_used_bytes", "1 GiB")],
)
def test_wrong_types_are_refused_at_load_in_one_line(where: str, key: str, value: object) -> None:
    data = sample_codec.sample_set_to_dict(sample_set())
    (data["gpus"][0] if where == "gpu" else data["host"])[key] = value
    with pytest.raises(CodecError, match=key) as caught:
        sample_codec.loads(json.dumps(data))
    assert "\n" not in str(caught.value)


def test_bad_temperatures_are_a_value_error() -> None:
    data = sample_codec.sample_set_to_dict(sample_set())
    data["gpus"][0]["temperatures_c"] = [["edge"]]
    with pytest.raises(ValueError, match="temperatures_c"):
        sample_codec.sample_set_from_dict(data)


def test_replay_steps_deterministically_and_keeps_bounded_history() -> None:
    samples = [sample_set(t=float(t)) for t in range(5)]
    source = ReplaySource(samples, history_len=3)
    seen: list[SampleSet] = []
    source.subscribe(seen.append)
    assert source.latest is None
    for expected in samples:
        assert source.step() == expected
    assert source.step() is None
    assert seen == samples
    assert source.history() == tuple(samples[-3:])
    assert source.latest == samples[-1]
    assert source.remaining == 0


def test_replay_loops_when_asked() -> None:
    samples = [sample_set(t=float(t)) for t in range(2)]
    source = ReplaySource(samples, loop=True)
    played = [source.step() for _ in range(5)]
    # each later pass is shifted by the recording's length (1 s) plus its interval (1 s): time moves forward
    assert played == [
        samples[0],
        samples[1],
        shifted(samples[0], 2.0),
        shifted(samples[1], 2.0),
        shifted(samples[0], 4.0),
    ]
    assert [p.timestamp for p in played if p is not None] == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert all(p is not None and p.gpus[0].timestamp == p.timestamp for p in played)


def test_recorded_interval_is_the_median_spacing() -> None:
    assert recorded_interval([sample_set(t=t) for t in (0.0, 0.5, 1.0, 3.0)]) == 0.5
    assert recorded_interval([sample_set(t=0.0)]) == 1.0


def test_replay_reads_monitor_json_lines(tmp_path) -> None:
    samples = [sample_set(t=float(t)) for t in range(3)]
    path = tmp_path / "rec.jsonl"
    path.write_text("\n".join(sample_codec.dumps(s) for s in samples) + "\n\n")
    source = ReplaySource.from_jsonl(path)
    assert source.samples == tuple(samples)
    assert [source.step() for _ in range(3)] == samples


def test_replay_names_the_bad_line(tmp_path) -> None:
    path = tmp_path / "rec.jsonl"
    path.write_text(sample_codec.dumps(sample_set()) + "\n" + json.dumps({"nope": 1}) + "\n")
    with pytest.raises(CodecError, match=r"rec\.jsonl:2: .*timestamp"):
        ReplaySource.from_jsonl(path)


def test_timed_playback_plays_everything_then_stops() -> None:
    samples = [sample_set(t=float(t)) for t in range(4)]
    source = ReplaySource(samples, interval_s=0.1)
    done = threading.Event()
    source.subscribe(lambda s: done.set() if s is samples[-1] else None)
    source.start()
    assert done.wait(10)
    source.stop()
    assert not source.running
    assert source.history() == tuple(samples)


def test_interval_is_clamped() -> None:
    source = ReplaySource([])
    source.interval_s = 0.001
    assert source.interval_s == 0.1
    source.interval_s = 1e6
    assert source.interval_s == 60.0
