"""The run folder's format module: one encoder and decoder, the NaN policy, versions, and the docs that match."""

from __future__ import annotations

import ast
import json
import math
import re
import struct
from pathlib import Path

import msgspec
import pytest
from decoded import agrees
from hypothesis import given, settings
from hypothesis import strategies as st

from rocmtui.codec import CodecError, encode_json
from rocmtui.config import TrainConfig
from rocmtui.events import EVENT_NAMES, LogMessage, MetricsLogged, RunFinished, StepsCompleted, TrainEvent
from rocmtui.run import format as fmt
from rocmtui.run.format import (
    EVENTS,
    ControlLine,
    FormatError,
    RankFailed,
    RankProgress,
    RankStarted,
    RunNotes,
    RunStatus,
    StreamHeader,
    decode_event_line,
    encode_event_line,
    encode_header,
    read_notes,
    write_notes,
)
from rocmtui.run.stream import EventTail, EventWriter, read_events

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "run-format.md").read_text(encoding="utf-8")

STEPS = StepsCompleted(0, 3, 3, 10, (2.3, math.nan, 2.1), 100.0, 0.1, 0.5)


def lines_of(*events: TrainEvent) -> bytes:
    return encode_header() + b"".join(encode_event_line(i + 1, 10.0 + i, e) for i, e in enumerate(events))


def test_a_non_finite_number_is_written_as_null_and_read_back_as_nan() -> None:
    raw = encode_event_line(1, 5.0, STEPS)
    assert b"NaN" not in raw and b'"losses":[2.3,null,2.1]' in raw
    line = decode_event_line(raw.strip())
    assert (line.seq, line.t) == (1, 5.0)
    assert isinstance(line.event, StepsCompleted)
    losses = line.event.losses
    assert losses[0] == 2.3 and math.isnan(losses[1]) and losses[2] == 2.1


def test_null_in_a_plain_number_field_is_read_back_as_nan_not_zero(tmp_path: Path) -> None:
    steps = StepsCompleted(0, 3, 3, 10, (2.3,), math.nan, math.inf, 0.5)
    raw = encode_event_line(1, 5.0, steps)
    assert b'"images_per_s":null,"lr":null' in raw
    (tmp_path / EVENTS).write_bytes(lines_of(steps))  # and through the tailer every viewer uses
    for read in (decode_event_line(raw.strip()).event, read_events(tmp_path)[0]):
        assert isinstance(read, StepsCompleted)
        assert math.isnan(read.images_per_s) and math.isnan(read.lr) and read.elapsed_s == 0.5


def test_null_in_a_field_that_may_be_missing_stays_none() -> None:
    metrics = MetricsLogged(5, {"loss": math.inf, "lr": 0.1}, 1.0, total_steps=None)
    line = decode_event_line(encode_event_line(2, 1.0, metrics).strip())
    assert isinstance(line.event, MetricsLogged)
    assert math.isnan(line.event.values["loss"]) and line.event.total_steps is None


def test_a_version_2_line_with_nan_literals_still_loads() -> None:
    raw = (
        b'{"seq":4,"t":1.5,"event":"StepsCompleted","epoch":0,"step":2,"epoch_step":2,"steps_per_epoch":9,'
        b'"losses":[NaN,Infinity],"images_per_s":1.0,"lr":0.1,"elapsed_s":0.2}'
    )
    line = decode_event_line(raw)
    assert line.seq == 4 and isinstance(line.event, StepsCompleted)
    assert math.isnan(line.event.losses[0]) and line.event.losses[1] == math.inf


def test_every_line_is_compact_and_starts_with_its_number(tmp_path: Path) -> None:
    writer = EventWriter(tmp_path)
    writer.write(LogMessage("hi"))
    writer.close()
    header, line = (tmp_path / EVENTS).read_bytes().splitlines()
    assert msgspec.json.decode(header) == {"seq": 0, "format": "rocmtui-events", "version": fmt.VERSION}
    assert re.fullmatch(rb'\{"seq":1,"t":[0-9.]+,"event":"LogMessage","message":"hi","level":"info"\}', line)


def test_a_newer_stream_is_refused_in_one_line(tmp_path: Path) -> None:
    (tmp_path / EVENTS).write_bytes(b'{"seq":0,"format":"rocmtui-events","version":99}\n')
    with pytest.raises(FormatError, match=r"newer rocmtui \(event format 99; this one reads up to 5\)"):
        read_events(tmp_path)


def test_a_stream_of_another_format_is_refused(tmp_path: Path) -> None:
    (tmp_path / EVENTS).write_bytes(b'{"seq":0,"format":"something-else","version":1}\n')
    with pytest.raises(FormatError, match="not a rocmtui event stream"):
        read_events(tmp_path)


def test_a_huge_seq_never_hides_the_lines_after_it(tmp_path: Path) -> None:
    good = lines_of(LogMessage("a"), LogMessage("b")).splitlines()
    bogus = b'{"seq":999999999999,"t":1.0,"event":"LogMessage","message":"x"}'
    after = encode_event_line(3, 12.0, LogMessage("c")).strip()
    (tmp_path / EVENTS).write_bytes(b"\n".join([*good, bogus, after]) + b"\n")
    tail = EventTail(tmp_path)
    events = [e for _, e in tail.poll()]
    assert [e.message for e in events if isinstance(e, LogMessage)] == ["a", "b", "c"]
    assert tail.skipped == 1


def test_a_gap_left_by_unreadable_lines_is_accepted(tmp_path: Path) -> None:
    good = lines_of(LogMessage("a"), LogMessage("b"), LogMessage("c")).splitlines()
    good[2] = b"[1, 2, 3]"  # the line of seq 2 is unreadable: seq 3 follows a gap of one
    (tmp_path / EVENTS).write_bytes(b"\n".join(good) + b"\n")
    tail = EventTail(tmp_path)
    assert [e.message for _, e in tail.poll() if isinstance(e, LogMessage)] == ["a", "c"]
    assert tail.skipped == 1


def test_an_over_long_line_is_dropped_and_counted(tmp_path: Path) -> None:
    first, second = lines_of(LogMessage("a"), LogMessage("b")).splitlines()[1:]
    huge = b'{"seq":2,"event":"LogMessage","message":"' + b"x" * (2 << 20) + b'"}'
    (tmp_path / EVENTS).write_bytes(b"\n".join([first, huge, second.replace(b'"seq":2', b'"seq":3')]) + b"\n")
    tail = EventTail(tmp_path)
    assert [e.message for _, e in tail.poll() if isinstance(e, LogMessage)] == ["a", "b"]
    assert tail.skipped == 1


def check_what_decoded(raw: bytes) -> None:
    """If ``raw`` decodes, the line says what its JSON says (seq, t, every field given) and writes back to
    the same line; otherwise it is refused with CodecError and nothing else."""
    try:
        line = decode_event_line(raw)
    except CodecError:
        return
    # the reference reader (NaN literals included, as version 2 wrote them); msgspec skips an unknown key
    # without reading its bytes as UTF-8, so the reference reads them replaced
    given = json.loads(raw.decode("utf-8", "replace"))
    assert isinstance(given, dict)
    assert (line.seq, line.t) == (given.get("seq"), given.get("t"))
    if line.header is not None:
        assert line.event is None and line.header == StreamHeader(given["format"], given.get("version") or 0)
        return
    assert line.event is not None
    written = encode_json(line.event)
    agrees(json.loads(written), given)
    again = decode_event_line(encode_event_line(line.seq or 0, line.t or 0.0, line.event).strip())
    assert encode_json(again.event) == written  # what was read writes back, and reads back, the same


@pytest.mark.parametrize("raw", [b'{"seq":0,"t":0,"event":""', b'{"seq":1,"t":2,"event":"Nope","x":[1,'])
def test_a_line_cut_short_after_a_bad_tag_is_a_codec_error(raw: bytes) -> None:
    with pytest.raises(CodecError, match="not JSON"):
        decode_event_line(raw)


ONE_LINE = st.sampled_from(lines_of(STEPS, LogMessage("hi"), MetricsLogged(5, {"loss": 0.5}, 1.0)).splitlines())


@st.composite
def damaged_lines(draw: st.DrawFn) -> bytes:
    """One of our lines with a few bytes changed, cut or inserted: near misses, not noise."""
    raw = bytearray(draw(ONE_LINE))
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(raw)))
        piece = draw(st.binary(min_size=0, max_size=3))
        raw[at : at + draw(st.integers(0, 3))] = piece
    return bytes(raw)


@settings(max_examples=1500, deadline=None)
@given(st.one_of(st.binary(max_size=300), damaged_lines()))
def test_any_bytes_decode_to_the_line_they_say_or_a_codec_error(raw: bytes) -> None:
    check_what_decoded(raw)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=1500, deadline=None)
@given(JSON, st.sampled_from(["StepsCompleted", "EpochCompleted", "MetricsLogged", "RunFinished", "Nope", None]))
def test_any_json_decodes_to_the_line_it_says_or_a_codec_error(value: object, tag: str | None) -> None:
    data = {"event": tag, "seq": 1, "losses": value, "values": value, "epoch": value} if tag else value
    check_what_decoded(msgspec.json.encode(data))


def test_a_line_read_wrong_fails_the_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """The check itself bites: a decoder that loses a NaN's place in a list is caught."""
    raw = encode_event_line(1, 5.0, STEPS).strip()
    check_what_decoded(raw)
    wrong = msgspec.structs.replace(STEPS, losses=(2.3, 2.1))
    monkeypatch.setattr(fmt, "decode_event", lambda _raw: wrong)
    with pytest.raises(AssertionError, match=r"losses: 2 items read from 3"):
        check_what_decoded(raw)


def test_the_docs_name_every_file_of_the_folder() -> None:
    names = [fmt.EVENTS, fmt.TORN, fmt.STATUS, fmt.CONTROL, fmt.LOCK, fmt.GPU, fmt.GPU_PREVIOUS, fmt.CONFIG]
    names += [fmt.SUMMARY, fmt.STDERR, fmt.OUTPUT, f"{fmt.RANKS}/rank-N.jsonl", f"{fmt.SCREENS}/screen-DATE-TIME.svg"]
    names += [fmt.NOTES]
    missing = [name for name in names if f"`{name}`" not in DOC]
    assert missing == []


@pytest.mark.parametrize(
    "record", [StreamHeader, RunStatus, ControlLine, RankStarted, RankProgress, RankFailed, fmt.RunNotes]
)
def test_the_docs_show_every_field_of_each_record(record: type[msgspec.Struct]) -> None:
    fields = [field.encode_name for field in msgspec.structs.fields(record)]
    missing = [name for name in fields if f'"{name}"' not in DOC and f"`{name}`" not in DOC]
    assert missing == []


def test_the_docs_name_every_event_and_the_current_version() -> None:
    events = list(EVENT_NAMES)
    assert [name for name in events if f"`{name}`" not in DOC] == []
    assert f'"version":{fmt.VERSION}' in DOC


def test_json_is_parsed_and_written_only_by_the_format_module() -> None:
    """Everything else asks ``rocmtui.run.format`` (or the typed codec under it)."""
    offenders = []
    for path in sorted((ROOT / "rocmtui").rglob("*.py")):
        if path == ROOT / "rocmtui" / "run" / "format.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            imported = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if "json" in imported or (isinstance(node, ast.ImportFrom) and node.module == "json"):
                assert isinstance(node, (ast.Import, ast.ImportFrom))
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert offenders == []


def test_every_logged_value_round_trips_non_finite_ones_included() -> None:
    metrics = MetricsLogged(3, {"loss": 1.0}, 1.0, count=3, steps=(1, 2, 3), logged={"loss": (math.nan, math.inf, 1.0)})
    line = decode_event_line(encode_event_line(7, 1.0, metrics).strip())
    assert isinstance(line.event, MetricsLogged) and line.event.steps == (1, 2, 3)
    nan, inf, one = line.event.logged["loss"]
    assert math.isnan(nan) and math.isnan(inf) and one == 1.0  # not finite: null on disk, NaN when read


def test_a_version_3_window_of_means_is_one_point_per_name() -> None:
    raw = b'{"seq":2,"t":1.0,"event":"MetricsLogged","step":40,"values":{"loss":0.5},"elapsed_s":2.0,"count":20}'
    line = decode_event_line(raw)
    assert isinstance(line.event, MetricsLogged) and line.event.points() == {"loss": ((40,), (0.5,))}


@settings(max_examples=300, deadline=None)
@given(seq=st.integers(0, 10**15), t=st.floats(0, 4e9, allow_nan=False), message=st.text(max_size=20))
def test_our_own_lines_read_the_same_by_their_front_as_through_the_envelope(seq: int, t: float, message: str) -> None:
    raw = encode_event_line(seq, t, LogMessage(message)).strip()
    assert fmt._OUR_PREFIX.match(raw)
    envelope = msgspec.json.decode(raw)
    assert decode_event_line(raw) == fmt.EventLine(envelope["seq"], envelope["t"], LogMessage(message))


def test_a_window_with_more_values_than_steps_is_an_unreadable_line(tmp_path: Path) -> None:
    good = MetricsLogged(2, {"loss": 1.0}, 1.0, 2, steps=(1, 2), logged={"loss": (2.0, 1.0)})
    bad = msgspec.structs.replace(good, logged={"loss": (3.0, 2.0, 1.0)})
    bad_at = msgspec.structs.replace(good, logged={"val": (1.0,)}, logged_at={"val": (1, 2)})
    (tmp_path / EVENTS).write_bytes(lines_of(bad, bad_at, good))
    tail = EventTail(tmp_path)
    assert [e for _, e in tail.poll()] == [good] and tail.skipped == 2


PACKED_LINE = (
    b'{"seq":5,"t":1.0,"event":"MetricsLogged","step":3,"values":{"loss":0.25},"elapsed_s":0.1,"count":3,'
    b'"step_run":[1,3],"packed":{"loss":"%s"}}'
)


def test_a_packed_window_reads_as_its_points() -> None:
    import base64

    raw = base64.b64encode(struct.pack("<3d", 1.0, math.nan, 0.25))
    event = decode_event_line(PACKED_LINE % raw).event
    assert isinstance(event, MetricsLogged)
    steps, values = event.points()["loss"]
    assert list(steps) == [1, 2, 3] and values[0] == 1.0 and math.isnan(values[1]) and values[2] == 0.25


@pytest.mark.parametrize(
    ("packed", "why"),
    [
        (b"not base64!", "Invalid base64 encoded string - at `$.packed[...]`"),  # a type error of the field
        (b"AAAAAAAA8D8=", "1 values of 'loss' at 3 steps"),
        (b"AAAAAAAA8D8AAAA=", "11 bytes of 'loss' are not a whole number of float64s"),  # a value and a half
    ],
    ids=["not-base64", "fewer-values", "partial-value"],
)
def test_a_bad_packed_window_is_an_unreadable_line(packed: bytes, why: str) -> None:
    with pytest.raises(CodecError) as err:
        decode_event_line(PACKED_LINE % packed)
    assert str(err.value) == f"bad MetricsLogged: {why}"


@pytest.mark.parametrize(
    ("run", "why"),
    [
        (b"[0,99999999999999999999]", "Python int too large to convert to C ssize_t"),
        (b"[0,-5]", "3 values of 'loss' at 0 steps"),
        (b"[1]", "Expected `array` of length 2, got 1 - at `$.step_run`"),
        (b'"x"', "Expected `array | null`, got `str` - at `$.step_run`"),
    ],
)
def test_a_step_run_past_any_window_is_an_unreadable_line(run: bytes, why: str) -> None:
    line = PACKED_LINE.replace(b"[1,3]", run) % b"AAAAAAAA8D8AAAAAAADgPwAAAAAAANA/"
    with pytest.raises(CodecError) as err:
        decode_event_line(line)
    assert str(err.value) == f"bad MetricsLogged: {why}"


def test_a_null_in_a_mapping_of_numbers_is_nan_and_only_that_value() -> None:
    line = b'{"seq":5,"t":1.0,"event":"MetricsLogged","step":3,"values":{"loss":null,"acc":0.5},"elapsed_s":0.1}'
    event = decode_event_line(line).event
    assert isinstance(event, MetricsLogged)
    assert math.isnan(event.values["loss"]) and event.values["acc"] == 0.5


def test_a_small_file_is_written_indented_by_one_space_for_people_and_the_defaults_stand_for_no_config(
    tmp_path: Path,
) -> None:
    fmt.write_record(tmp_path / "record.json", {"a": 1, "b": [2]})
    assert (tmp_path / "record.json").read_bytes() == b'{\n "a": 1,\n "b": [\n  2\n ]\n}\n'
    assert fmt.saved_config(tmp_path) == TrainConfig()  # a tracked script's run: none written
    fmt.write_record(tmp_path / fmt.CONFIG, TrainConfig(epochs=3).to_dict())
    assert fmt.saved_config(tmp_path) == TrainConfig(epochs=3)


ODD_LINES = {
    "longer than a line may be": (
        b"x" * (fmt.MAX_LINE_BYTES + 1),
        f"not read: a line of {fmt.MAX_LINE_BYTES + 1} bytes",
    ),
    "not JSON": (b"seq 4: loss 0.5", "not JSON"),
    "a JSON list": (b"[1, NaN]", "bad line: a JSON list, not an object"),
    "a seq that is text": (
        b'{"seq":"4","t":1.5,"event":"LogMessage","message":"x","extra":NaN}',
        "bad line: seq or t of the wrong type",
    ),
    "a t that is text": (
        b'{"seq":4,"t":"1.5","event":"LogMessage","message":"x","extra":NaN}',
        "bad line: seq or t of the wrong type",
    ),
    "more values than steps": (
        b'{"seq":4,"t":1.5,"event":"MetricsLogged","step":2,"values":{},"elapsed_s":1.0,"steps":[1,2],'
        b'"logged":{"loss":[1.0,2.0,3.0]}}',
        "bad MetricsLogged: 3 values of 'loss' at 2 steps",
    ),
    "a number where a list of values goes": (
        b'{"seq":4,"t":1.5,"event":"MetricsLogged","step":2,"values":{},"elapsed_s":1.0,"steps":[1,2],'
        b'"logged":{"loss":5}}',
        "bad MetricsLogged: Expected `array`, got `int` - at `$.logged[...]`",
    ),
}


@pytest.mark.parametrize("what", list(ODD_LINES))
def test_an_unreadable_line_is_refused_with_what_is_wrong_in_one_line(what: str) -> None:
    raw, message = ODD_LINES[what]
    with pytest.raises(CodecError) as err:
        decode_event_line(raw)
    assert str(err.value) == message


def test_an_event_that_is_not_an_object_is_refused_by_its_json_type() -> None:
    with pytest.raises(CodecError) as err:
        fmt.decode_event(b'["StepsCompleted", 1]')
    assert str(err.value) == "bad event: a JSON list, not an object"


def test_a_version_2_line_keeps_its_seq_and_time_exactly_or_has_none() -> None:
    event = b'"event":"LogMessage","message":"x","extra":NaN}'
    assert decode_event_line(b'{"seq":7,"t":3,' + event) == fmt.EventLine(7, 3.0, LogMessage("x"))
    assert isinstance(decode_event_line(b'{"seq":7,"t":3,' + event).t, float)
    assert decode_event_line(b'{"t":2.5,' + event) == fmt.EventLine(None, 2.5, LogMessage("x"))
    assert decode_event_line(b"{" + event) == fmt.EventLine(None, None, LogMessage("x"))  # version 1: neither


def test_a_header_line_keeps_its_time_and_a_missing_version_reads_as_0() -> None:
    line = decode_event_line(b'{"seq":0,"t":1.25,"format":"rocmtui-events"}')
    assert line == fmt.EventLine(0, 1.25, None, StreamHeader("rocmtui-events", 0))


def test_a_name_logged_at_its_own_steps_reads_back_with_them() -> None:
    window = MetricsLogged(
        2, {"loss": 1.0, "val": 0.5}, 1.0, 2, steps=(1, 2), logged={"loss": (2.0, 1.0), "val": (0.5,)},
        logged_at={"val": (2,)},
    )  # fmt: skip
    assert decode_event_line(encode_event_line(3, 1.0, window).strip()).event == window


def test_a_run_without_settings_has_none_and_written_ones_read_back(tmp_path: Path) -> None:
    assert fmt.read_config(tmp_path) is None
    config = TrainConfig(epochs=3, lr=0.5, runs_dir=tmp_path)
    fmt.write_config(tmp_path, config)
    assert fmt.read_config(tmp_path) == config


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (b"[1]", "{path}: Expected `object`, got `array`"),
        (b'{"runs_dir": 5}', "bad run settings: Expected `str` (a path), got `int` - at `$.runs_dir`"),
    ],
)
def test_settings_that_cannot_be_read_are_refused_in_one_line_naming_the_file(
    tmp_path: Path, content: bytes, why: str
) -> None:
    path = tmp_path / fmt.CONFIG
    path.write_bytes(content)
    with pytest.raises(FormatError) as err:
        fmt.read_config(tmp_path)
    assert str(err.value) == f"{path} cannot be read: " + why.format(path=path)


def test_a_written_summary_reads_back_and_a_bad_one_is_none(tmp_path: Path) -> None:
    assert fmt.read_summary(tmp_path) is None
    summary = RunFinished("completed", 3, 0.5, 0.25, 12.0, 100.0, None, str(tmp_path))
    fmt.write_summary(tmp_path, summary)
    assert fmt.read_summary(tmp_path) == summary
    (tmp_path / fmt.SUMMARY).write_bytes(b'{"event": "RunFinished"}')
    assert fmt.read_summary(tmp_path) is None


@pytest.mark.parametrize("raw", [b'{"event":"LogMessage","message":', b'{"event":"NoSuchEvent","x":'])
def test_an_event_cut_short_is_refused_as_not_json_with_msgspecs_reason(raw: bytes) -> None:
    with pytest.raises(CodecError) as err:
        fmt.decode_event(raw)
    assert str(err.value) == "not JSON: Input data was truncated"


def test_a_line_of_exactly_the_longest_length_is_read() -> None:
    front = encode_event_line(3, 1.0, LogMessage("")).strip()
    raw = front[: -len(b'","level":"info"}')] + b"x" * (fmt.MAX_LINE_BYTES - len(front)) + b'","level":"info"}'
    assert len(raw) == fmt.MAX_LINE_BYTES
    line = decode_event_line(raw)
    assert isinstance(line.event, LogMessage) and len(line.event.message) == fmt.MAX_LINE_BYTES - len(front)


def test_a_runs_notes_are_words_cut_to_their_limits_without_repeats_and_read_back(tmp_path: Path) -> None:
    assert read_notes(tmp_path) == RunNotes()  # none written
    tags = ("fast,  baseline", "baseline", "x" * 50, *(f"t{i}" for i in range(40)))
    write_notes(tmp_path, RunNotes(tags, "  the first try  " + "n" * 3000))
    kept = ("fast", "baseline", "x" * fmt.TAG_LIMIT, *(f"t{i}" for i in range(fmt.MAX_TAGS - 3)))
    note = ("the first try  " + "n" * 3000)[: fmt.NOTE_LIMIT]
    assert json.loads((tmp_path / fmt.NOTES).read_bytes()) == {"tags": list(kept), "note": note}
    assert read_notes(tmp_path) == RunNotes(kept, note)
    (tmp_path / fmt.NOTES).write_text(json.dumps({"tags": ["a b,a", "c"], "note": " hand-written "}))
    assert read_notes(tmp_path) == RunNotes(("a", "b", "c"), "hand-written")  # cleaned when read, too
