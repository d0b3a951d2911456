"""``monitor --replay`` of what is not a recording: devices and FIFOs refused at once, sizes capped, a torn last
line skipped; and the sample codec fuzzed: arbitrary bytes and JSON raise nothing but ``CodecError``."""

from __future__ import annotations

import dataclasses
import json
import os
import threading
from pathlib import Path

import pytest
from decoded import agrees
from gpu_factories import sample_set
from hypothesis import given, settings
from hypothesis import strategies as st

from rocmtui.codec import CodecError
from rocmtui.gpu import replay
from rocmtui.gpu import sample_codec as gpu_codec
from rocmtui.gpu.recorder import Recorder
from rocmtui.gpu.replay import ReplaySource, load_replay
from rocmtui.gpu.sample_codec import dumps, loads, sample_set_from_dict, sample_set_to_dict


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/null", "/dev/urandom"])
def test_a_device_is_refused_at_once(device: str) -> None:
    with pytest.raises(ValueError, match="not a regular file"):
        load_replay(Path(device))


def test_a_fifo_is_refused_without_blocking_with_or_without_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "rec.jsonl"
    os.mkfifo(fifo)
    done = threading.Event()
    outcome: list[BaseException] = []

    def load() -> None:
        try:
            load_replay(fifo)
        except BaseException as err:  # what it raised, checked below
            outcome.append(err)
        done.set()

    threading.Thread(target=load, daemon=True).start()
    assert done.wait(5), "replaying a FIFO blocked"
    assert isinstance(outcome[0], ValueError) and "not a regular file" in str(outcome[0])
    writer = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)  # a writer holding it open
    try:
        with pytest.raises(ValueError, match="not a regular file"):
            load_replay(fifo)
    finally:
        os.close(writer)


def test_a_directory_and_a_missing_file_are_one_line_errors(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        load_replay(tmp_path / "missing.jsonl")
    with pytest.raises((OSError, ValueError)):
        load_replay(tmp_path)


def test_a_huge_file_and_a_huge_line_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(replay, "MAX_RECORDING_BYTES", 10_000)
    big = tmp_path / "big.jsonl"
    big.write_text((dumps(sample_set()) + "\n") * 100)
    with pytest.raises(ValueError, match="over the cap"):
        load_replay(big)
    monkeypatch.setattr(replay, "MAX_LINE_BYTES", 1000)
    monkeypatch.setattr(replay, "MAX_RECORDING_BYTES", 10**9)
    long = tmp_path / "long.jsonl"
    long.write_bytes(b"x" * 5000)  # one line, no newline: never read whole
    with pytest.raises(CodecError, match="longer than"):
        load_replay(long)


def test_a_torn_last_line_is_skipped_and_what_is_whole_plays(tmp_path: Path) -> None:
    samples = [sample_set(t=100.0 + i) for i in range(3)]
    path = tmp_path / "rec.jsonl"
    whole = "".join(dumps(s) + "\n" for s in samples)
    path.write_text(whole + dumps(sample_set(t=200.0))[:40])  # the recorder killed mid-line
    assert load_replay(path).samples == tuple(samples)
    path.write_text(whole[:-1] + "\n" + dumps(samples[0])[:40] + "\n" + whole)  # torn in the middle: refused
    with pytest.raises(CodecError, match=r"rec\.jsonl:4"):
        load_replay(path)


def test_a_recording_to_a_fifo_without_reader_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "out.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(OSError):
        Recorder(fifo)


def test_replay_source_from_a_recording_with_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    path.write_text("\n" + dumps(sample_set()) + "\n\n")
    assert len(ReplaySource.from_jsonl(path).samples) == 1


# -- fuzzing the sample codec ----------------------------------------------------------------------------------
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=5),
    max_leaves=25,
)
KEYS = list(sample_set_to_dict(sample_set()))


def _mutated(base: dict, key: str, value: object) -> dict:
    return {**base, key: value}


def fields_given(value: object) -> object:
    """What a sample set reads from ``value``: ``schema`` is written for people and ignored when read."""
    return {k: v for k, v in value.items() if k != "schema"} if isinstance(value, dict) else value


def check_what_loaded(data: bytes | str) -> None:
    """If ``data`` loads as a sample set, it holds what the JSON says at every key given and writes back to
    the same set; otherwise it is refused with CodecError and nothing else."""
    try:
        loaded = gpu_codec.loads(data)
    except CodecError:
        return
    written = sample_set_to_dict(loaded)
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data  # as msgspec skips unknown keys
    agrees(written, fields_given(json.loads(text)))
    assert sample_set_to_dict(loads(dumps(loaded))) == written


@settings(max_examples=1000, deadline=None)
@given(st.binary(max_size=600))
def test_arbitrary_bytes_are_the_sample_they_say_or_a_codec_error(data: bytes) -> None:
    check_what_loaded(data)


@settings(max_examples=1000, deadline=None)
@given(JSON)
def test_arbitrary_json_is_the_sample_it_says_or_a_codec_error(value: object) -> None:
    check_what_loaded(json.dumps(value))
    try:
        converted = sample_set_from_dict(value)
    except CodecError:
        return
    agrees(sample_set_to_dict(converted), fields_given(value))


@settings(max_examples=1000, deadline=None)
@given(st.sampled_from(KEYS), JSON)
def test_a_recorded_sample_with_one_field_changed_is_that_sample_or_a_codec_error(key: str, value: object) -> None:
    changed = _mutated(sample_set_to_dict(sample_set()), key, value)
    check_what_loaded(json.dumps(changed))
    try:
        back = sample_set_from_dict(changed)
    except CodecError:
        return
    agrees(sample_set_to_dict(back), fields_given(changed))


def test_a_sample_read_wrong_fails_the_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """The check itself bites: a loader that drops a GPU is caught."""
    line = dumps(sample_set())
    check_what_loaded(line)
    monkeypatch.setattr(gpu_codec, "loads", lambda data: dataclasses.replace(loads(data), gpus=()))
    with pytest.raises(AssertionError, match=r"\$\.gpus: 0 items read from 2"):
        check_what_loaded(line)


EDGES: list[object] = [
    None,
    True,
    False,
    0,
    -1,
    2**63 - 1,
    -(2**63),
    2**63,
    2**64,
    -(2**64),
    0.5,
    -0.0,
    1e308,
    "",
    "x" * 300,
]
EDGES += [[], {}, [None], [[]], [{}], {"": None}, {"name": 1}, [0, "a", None], {"gpus": []}]
"""Values at the edges of JSON's types and of what a field takes (the empty, the huge, the nested, the wrong
kind), tried at every key: the random examples below then need not find them."""


@pytest.mark.parametrize("key", KEYS)
def test_each_field_given_each_edge_value_is_that_sample_or_a_codec_error(key: str) -> None:
    base = sample_set_to_dict(sample_set())
    for value in EDGES:
        check_what_loaded(json.dumps(_mutated(base, key, value)))
        check_what_loaded(json.dumps(value))


@pytest.mark.slow
@settings(max_examples=2000, deadline=None)  # the edges of each field: test_each_field_given_each_edge_value_...
@given(st.sampled_from(KEYS), JSON, st.binary(max_size=50))
def test_the_sample_codec_under_many_more_examples(key: str, value: object, tail: bytes) -> None:
    base = sample_set_to_dict(sample_set())
    for data in (json.dumps(_mutated(base, key, value)).encode(), json.dumps(value).encode() + tail):
        check_what_loaded(data)
