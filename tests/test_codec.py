"""The one codec: events, run settings and Paths round-trip; bad input is one CodecError line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rocmtui.codec import CodecError, convert, decode_json, encode_json, to_builtins
from rocmtui.config import TrainConfig
from rocmtui.events import (
    EpochCompleted,
    LogMessage,
    RunFailed,
    RunFinished,
    RunStarted,
    StepsCompleted,
    TrainEvent,
    event_from_dict,
    event_to_dict,
)

RECORDED_RUN = Path(__file__).resolve().parent / "data" / "recorded-run.jsonl"

STEPS = StepsCompleted(
    epoch=0, step=3, epoch_step=3, steps_per_epoch=10, losses=(2.3, 2.2), images_per_s=1e3, lr=1e-3, elapsed_s=0.5
)
EVENTS: list[TrainEvent] = [
    RunStarted(
        config=TrainConfig(data_dir=Path("/data"), runs_dir=Path("runs"), resume=None),
        run_dir="runs/a",
        device="cpu",
        device_name="x86_64",
        backend="CPU",
        torch_version="2.4",
        dataset="cifar10",
        train_size=100,
        test_size=10,
        classes=("cat", "dog"),
        steps_per_epoch=10,
        start_epoch=0,
        data_source="sample",
    ),
    STEPS,
    EpochCompleted(0, 1, 2.0, 0.3, 2.1, 0.25, 1e-3, 1.5, 900.0, True),
    LogMessage("checkpoint saved", "warning"),
    RunFinished("completed", 1, 0.25, 0.25, 3.0, 800.0, None, "runs/a", (("cat", 0.5), ("dog", 0.0)), "c.pt"),
    RunFailed("No space left on device", "disk", step=3),
]


def one_line_error(data: Any) -> str:
    with pytest.raises(CodecError) as caught:
        event_from_dict(data)
    text = str(caught.value)
    assert "\n" not in text
    return text


@pytest.mark.parametrize("event", EVENTS, ids=lambda e: type(e).__name__)
def test_every_event_round_trips_through_json_text(event: TrainEvent) -> None:
    data = json.loads(json.dumps(event_to_dict(event)))
    assert data["event"] == type(event).__name__
    assert event_from_dict(data) == event


def test_the_recorded_run_loads_and_writes_back_the_same_objects() -> None:
    lines = [json.loads(line) for line in RECORDED_RUN.read_text(encoding="utf-8").splitlines() if line.strip()]
    events = [event_from_dict(data) for data in lines]
    assert isinstance(events[0], RunStarted) and isinstance(events[-1], RunFinished)
    assert events[0].world_size == 1  # recorded before runs of several ranks: one rank
    written = [json.loads(json.dumps(event_to_dict(e))) for e in events]
    added_since: dict[str, dict[str, object]] = {  # fields added after the recording, written back at their defaults
        "RunStarted": {"world_size": 1, "best_acc": None},
        "StepsCompleted": {"wall": 0.0},
        "EpochCompleted": {"eval_s": 0.0, "elapsed_s": 0.0, "wall": 0.0},
        "RunFinished": {"tta_test_acc": None, "eval_s": 0.0},
    }
    assert written == [{**line, **added_since.get(line["event"], {})} for line in lines]


def test_envelope_keys_of_the_run_folder_stream_are_ignored() -> None:
    assert event_from_dict({"seq": 7, "t": 12.5, **event_to_dict(STEPS)}) == STEPS


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"losses": "x"}, "losses"),
        ({"losses": ["x"]}, "losses[0]"),
        ({"epoch": "1"}, "epoch"),
        ({"epoch": 1.5}, "epoch"),
        ({"lr": None}, "lr"),
    ],
)
def test_wrong_types_name_the_field(change: dict[str, Any], named: str) -> None:
    assert f"$.{named}" in one_line_error({**event_to_dict(STEPS), **change})


def test_a_missing_field_is_named() -> None:
    data = event_to_dict(STEPS)
    del data["losses"]
    assert "losses" in one_line_error(data)


@pytest.mark.parametrize("data", [{"event": "RunExploded"}, {"losses": [1.0]}, {"event": 3}])
def test_unknown_or_absent_event_names_are_refused(data: dict[str, Any]) -> None:
    assert "unknown event" in one_line_error(data)


def test_a_non_object_is_refused() -> None:
    assert "JSON object" in one_line_error(["RunFailed"])  # the bad input under test


def test_a_bad_literal_is_refused() -> None:
    assert "kind" in one_line_error({"event": "RunFailed", "message": "x", "kind": "meltdown"})


def test_settings_inside_an_event_are_validated() -> None:
    data = event_to_dict(EVENTS[0])
    data["config"]["batch_size"] = "64"
    assert "$.config.batch_size" in one_line_error(data)


def test_run_settings_round_trip_with_paths_and_ignore_unknown_keys() -> None:
    config = TrainConfig(data_dir=Path("/d"), runs_dir=Path("r"), resume=Path("r/x"), epochs=3)
    data = config.to_dict()
    assert data["data_dir"] == "/d" and data["resume"] == "r/x"
    assert TrainConfig.from_dict({**data, "from_a_newer_version": 1}) == config
    assert TrainConfig.from_dict({}) == TrainConfig()


def test_bad_run_settings_are_one_line() -> None:
    with pytest.raises(CodecError, match=r"bad run settings: .*\$\.data_dir"):
        TrainConfig.from_dict({"data_dir": 5})


def test_paths_encode_as_strings_and_decode_back() -> None:
    assert to_builtins({"p": Path("/a/b")}) == {"p": "/a/b"}
    assert decode_json(encode_json([Path("x")]), list[Path]) == [Path("x")]


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('{"event": "LogMessage", "mess', "Input data was truncated"),
        ("", "Input data was truncated"),
        ("{]", "JSON is malformed: object keys must be strings (byte 1)"),
    ],
)
def test_truncated_or_broken_json_is_one_line(text: str, why: str) -> None:
    with pytest.raises(CodecError) as caught:
        decode_json(text, LogMessage)
    assert str(caught.value) == f"not JSON: {why}"


def test_a_type_the_codec_does_not_know_is_named_when_it_cannot_be_written() -> None:
    class Unknown:
        pass

    with pytest.raises(NotImplementedError) as refused:
        encode_json({"x": Unknown()})
    assert str(refused.value) == "cannot encode Unknown"


def test_convert_names_the_type_by_default() -> None:
    with pytest.raises(CodecError, match=r"^bad LogMessage: .*message"):
        convert({"event": "LogMessage"}, LogMessage)
