"""track() misused: values that are not real numbers, several threads logging at once, a forked child."""

from __future__ import annotations

import os
import threading
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest
import torch

import rocmtui
from rocmtui.codec import encode_json
from rocmtui.events import EpochMetrics, MetricsLogged, RunFinished
from rocmtui.run.stream import read_events
from rocmtui.tracking import env
from rocmtui.tracking.values import (
    FLOAT_MAX,
    LINE_BUDGET,
    MAX_NAME_CHARS,
    NOTE_CHARS,
    PACK_FROM,
    REAL,
    Window,
    call_bytes,
    check_name,
    check_params,
    check_scalar,
    check_total_steps,
    note_parts,
    to_float,
    to_floats,
)


@pytest.fixture(autouse=True)
def _no_launcher(monkeypatch) -> None:
    for name in (env.RUN_DIR, env.RUNS_DIR, env.LINK, env.RUN_NAME):
        monkeypatch.delenv(name, raising=False)


BAD = {
    "a str": "0.5",
    "a numpy string": np.str_("x"),
    "a numpy bytes": np.bytes_(b"x"),
    "a complex": 1 + 2j,
    "a numpy complex": np.complex64(1),
    "a torch complex": torch.tensor(1 + 1j),
    "a Decimal": Decimal("1.5"),
    "None": None,
    "a list": [1.0],
    "a vector": torch.zeros(3),
    "a numpy object": np.array(object()),
    "a dict": {"a": 1},
}
GOOD = [1, 2.5, True, np.float32(0.5), np.int64(3), np.bool_(True), np.array(1.5), torch.tensor(2), torch.tensor(0.5)]


@pytest.mark.parametrize("what", list(BAD))
def test_a_value_that_is_not_a_real_number_is_refused_at_log_naming_its_key_and_the_run_goes_on(
    tmp_path: Path, what: str
) -> None:
    with rocmtui.track("x", runs_dir=tmp_path) as run:
        run.log(loss=1.0)
        with pytest.raises(TypeError, match=r"^bad_value: expected"):
            run.log(loss=2.0, bad_value=BAD[what])
        with pytest.raises(TypeError, match="bad_value"):
            run.log_epoch(1, bad_value=BAD[what])
        run.log(loss=3.0)
    events = read_events(run.run_dir)
    logged = [e for e in events if isinstance(e, MetricsLogged)]
    assert sum(m.count for m in logged) == 2 and run.step == 2  # the refused call kept nothing
    assert not any(isinstance(e, EpochMetrics) for e in events)
    assert isinstance(events[-1], RunFinished) and events[-1].reason == "completed"


GOOD_AS_FLOATS = [1.0, 2.5, 1.0, 0.5, 3.0, 1.0, 1.5, 2.0, 0.5]
"""What each of ``GOOD`` is as a number, written by hand (not computed by the code under test)."""


def test_real_numbers_of_every_kind_are_taken_and_read_back_as_their_value(tmp_path: Path) -> None:
    with rocmtui.track("x", runs_dir=tmp_path) as run:
        for value in GOOD:
            run.log(v=value)
        run.log_epoch(1, **{f"v{i}": v for i, v in enumerate(GOOD)})
    events = read_events(run.run_dir)
    steps: list[int] = []
    values: list[float] = []
    for event in events:
        if isinstance(event, MetricsLogged):
            at, logged = event.points()["v"]
            steps += at
            values += logged
    assert steps == list(range(1, len(GOOD) + 1)) and values == GOOD_AS_FLOATS
    assert all(type(v) is float for v in values)
    [epoch] = [e for e in events if isinstance(e, EpochMetrics)]
    assert epoch.values == {f"v{i}": v for i, v in enumerate(GOOD_AS_FLOATS)}
    assert isinstance(events[-1], RunFinished)


def test_eight_threads_logging_at_once_lose_nothing(tmp_path: Path) -> None:
    calls = 400
    with rocmtui.track("x", runs_dir=tmp_path) as run:
        go = threading.Barrier(8)

        def worker(n: int) -> None:
            go.wait()
            for i in range(calls):
                run.log(None, **{f"t{n}_{i % 7}": float(i), "shared": 1.0})
                if i % 50 == 0:
                    run.flush()

        threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    events = read_events(run.run_dir)
    assert sum(e.count for e in events if isinstance(e, MetricsLogged)) == 8 * calls
    assert isinstance(events[-1], RunFinished) and events[-1].reason == "completed"


def test_a_forked_child_never_reports_into_its_parents_run(tmp_path: Path) -> None:
    with rocmtui.track("x", runs_dir=tmp_path) as run:
        run.log(loss=1.0)
        run.flush()
        pid = os.fork()
        if pid == 0:  # the child: logs, fails and exits as a worker would
            try:
                run.log(loss=99.0)
                run.flush()
                run.fail(RuntimeError("child"))
                run.finish()
            finally:
                os._exit(0)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        before_end = read_events(run.run_dir)
        assert not any(isinstance(e, RunFinished) for e in before_end)
        run.log(loss=2.0)
    events = read_events(run.run_dir)
    values = [e.values["loss"] for e in events if isinstance(e, MetricsLogged)]
    assert values == [1.0, 2.0]
    assert sum(isinstance(e, RunFinished) for e in events) == 1


def test_a_tensor_is_kept_detached_from_its_graph_until_the_flush() -> None:
    weight = torch.ones((), requires_grad=True)
    kept = check_scalar("loss", weight * 2)
    assert isinstance(kept, torch.Tensor) and not kept.requires_grad and kept.grad_fn is None


class Tensorish:
    """A scalar of another library: ``item()`` and a dtype, no ``ndim``, ``shape`` or ``detach``."""

    dtype = np.dtype("float32")

    def item(self) -> float:
        return 0.25


def test_a_scalar_with_item_and_a_dtype_only_is_taken() -> None:
    value = Tensorish()
    assert check_scalar("x", value) is value
    assert to_floats({"x": [value, 1, True, 2.5]}) == {"x": [0.25, 1.0, 1.0, 2.5]}


def test_a_refused_tensor_is_named_by_its_shape_or_its_dtype() -> None:
    with pytest.raises(TypeError, match=r"^loss: expected a 0-d tensor, got one of shape \(3,\)$"):
        check_scalar("loss", torch.zeros(3))
    with pytest.raises(TypeError, match=r"^loss: expected a real number .*, got Tensor of dtype torch\.complex64$"):
        check_scalar("loss", torch.tensor(1 + 1j, dtype=torch.complex64))
    with pytest.raises(TypeError, match=r"^loss: expected a real number .*, got ndarray of dtype <U1$"):
        check_scalar("loss", np.array("x"))
    with pytest.raises(TypeError, match=r"^expected a number or a 0-d tensor, got str$"):
        to_float("1")


def test_a_window_of_pack_from_calls_is_packed_and_one_fewer_is_not() -> None:
    for calls, packed in ((PACK_FROM - 1, False), (PACK_FROM, True)):
        window = Window()
        for step in range(1, calls + 1):
            scalars = {"loss": float(step)}
            window.add(step, scalars, call_bytes(scalars, window.values))
        written = window.drain().written()
        assert ("packed" in written) is packed
        if packed:
            assert written["steps"] == () and written["step_run"] == (1, calls)  # consecutive: a run, no list


class NotCallableItem:
    item = 0.5


class NoDtype:
    """``item()`` and nothing else: no dtype says it holds a real number."""

    def item(self) -> float:
        return 0.5


def test_a_value_whose_item_is_not_a_method_or_that_has_no_dtype_is_refused_in_one_line() -> None:
    with pytest.raises(TypeError) as err:
        check_scalar("loss", NotCallableItem())
    assert str(err.value) == f"loss: expected {REAL}, got NotCallableItem"
    with pytest.raises(TypeError) as err:
        check_scalar("loss", NoDtype())
    assert str(err.value) == f"loss: expected {REAL}, got NoDtype of dtype ?"


def test_tensors_of_mixed_dtypes_in_one_window_keep_their_exact_values() -> None:
    big = 2**24 + 1  # no float32 holds it
    kept: dict[str, list[object]] = {"count": [torch.tensor(big)], "loss": [torch.tensor(0.5, dtype=torch.float32)]}
    assert to_floats(kept) == {"count": [float(big)], "loss": [0.5]}
    kept["lr"] = [torch.tensor(0.1, dtype=torch.float64)]
    assert to_floats(kept) == {"count": [float(big)], "loss": [0.5], "lr": [0.1]}


class NoShape:
    """A vector of another library: ``ndim`` but no ``shape``."""

    ndim = 1
    dtype = np.dtype("float32")

    def item(self) -> float:
        return 0.5


def test_a_refused_vector_without_a_shape_and_a_meta_tensor_are_named_in_one_line() -> None:
    with pytest.raises(TypeError) as err:
        check_scalar("loss", NoShape())
    assert str(err.value) == "loss: expected a 0-d tensor, got one of shape ()"
    with pytest.raises(TypeError) as err:
        check_scalar("loss", torch.tensor(1.0, device="meta"))
    assert str(err.value) == "loss: a tensor on the 'meta' device holds no value; log a tensor on a real device"


def test_a_name_total_steps_and_config_are_refused_past_their_bounds_in_one_line() -> None:
    assert check_name("x" * MAX_NAME_CHARS) == "x" * MAX_NAME_CHARS
    with pytest.raises(TypeError) as err:
        check_name(5)
    assert str(err.value) == "name: expected a string, got int"
    assert check_total_steps(1) == 1 and check_total_steps(2**63 - 1) == 2**63 - 1
    with pytest.raises(ValueError, match=r"^total_steps: 9223372036854775808 is out of range"):
        check_total_steps(2**63)
    assert check_scalar("loss", int(FLOAT_MAX)) == int(FLOAT_MAX)  # the largest int a float holds
    with pytest.raises(ValueError, match=r"^total_steps: 0 is out of range"):
        check_total_steps(0)
    with pytest.raises(TypeError) as err:
        check_total_steps("3")
    assert str(err.value) == "total_steps: expected a whole number of steps or None, got str"
    with pytest.raises(ValueError) as too_big:
        check_params({"seed": 2**64})
    assert str(too_big.value) == "config['seed']: an int beyond 64 bits; give it as a string or a float"


def test_a_config_of_half_a_line_written_out_is_kept_and_one_byte_more_is_refused() -> None:
    def written(params: dict[str, object]) -> int:  # each key and value as JSON, with a colon and a comma
        return sum(len(encode_json(k)) + len(encode_json(v)) + 2 for k, v in params.items())

    note = "x" * (LINE_BUDGET // 2 - written({"a": 1, "note": ""}))
    half: dict[str, object] = {"a": 1, "note": note}
    assert written(half) == LINE_BUDGET // 2 and check_params(half) == half
    with pytest.raises(ValueError) as err:
        check_params({**half, "note": note + "x"})
    assert str(err.value) == (
        f"config['note']: the config takes more than {LINE_BUDGET // 2:,} bytes written out; give fewer or shorter "
        "values (a long text as a note, a file as its path)"
    )
    assert f"{LINE_BUDGET // 2:,}" == "516,096"


def test_a_configs_ints_are_kept_to_64_bits_and_a_refusal_names_the_first_40_characters_of_its_key() -> None:
    ends = {"low": -(2**63), "high": 2**63 - 1}
    assert check_params(ends) == ends
    key = "k" * 40 + "-past-forty"
    for beyond in (-(2**63) - 1, 2**63):
        with pytest.raises(ValueError) as err:
            check_params({key: beyond})
        assert str(err.value) == f"config[{'k' * 40!r}]: an int beyond 64 bits; give it as a string or a float"
    with pytest.raises(ValueError, match=r"^config\['k{40}'\]: the config takes more than"):
        check_params({key: "x" * LINE_BUDGET})


def test_the_most_negative_int_a_float_holds_is_taken_and_a_refused_ints_digits_are_counted_right() -> None:
    assert check_scalar("loss", -int(FLOAT_MAX)) == -int(FLOAT_MAX)
    with pytest.raises(ValueError, match=r"^loss: an int of about 309 digits is beyond the range of a float"):
        check_scalar("loss", -int(FLOAT_MAX) - 1)
    # 2**999_998 (999,999 bits) has floor(999_998 * log10(2)) + 1 = 301,030 digits: the estimate holds that far
    with pytest.raises(ValueError, match=r"^loss: an int of about 301030 digits is beyond"):
        check_scalar("loss", 2**999_998)


def test_tensors_are_converted_in_one_stack_a_device_never_one_item_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_item(self: torch.Tensor) -> float:
        raise AssertionError("a tensor converted by .item(): one host sync a value")

    window = Window()
    for step in range(3):
        window.add(step, {"loss": torch.tensor(step + 0.5), "n": torch.tensor(step, dtype=torch.int64)}, 0)
    monkeypatch.setattr(torch.Tensor, "item", no_item)
    assert window.drain().logged == {"loss": (0.5, 1.5, 2.5), "n": (0.0, 1.0, 2.0)}


def test_a_call_bringing_a_new_name_costs_more_than_one_the_window_knows_and_a_short_note_is_one_part() -> None:
    scalars = {"loss": 1.0}
    assert call_bytes(scalars) > call_bytes(scalars, {"loss": [0.5]}) == call_bytes(scalars, {"loss": [], "lr": []})
    assert note_parts("nan at step 5") == ["nan at step 5"] and note_parts("") == [""]
    assert note_parts("x" * (NOTE_CHARS + 1)) == ["x" * NOTE_CHARS, "x"]
    assert call_bytes({"loss": 1.0, "lr": 0.1}, {"loss": [], "lr": []}) > call_bytes(scalars, {"loss": []})
    long_name = "n" * 1000
    assert call_bytes({long_name: 1.0}) > 3 * len(long_name)  # a new name is written three times in a window
