"""Comparing runs: the settings that differ between them, a train run's options or a script's params."""

from __future__ import annotations

from dataclasses import replace

from rocmtui.config import TrainConfig
from rocmtui.events import RunStarted, TrackStarted
from rocmtui.run.fold import RunFold
from rocmtui.ui.state.config_diff import MISSING, differences, settings


def train_run(**options: object) -> RunFold:
    fold = RunFold()
    config = replace(TrainConfig(), **options)  # type: ignore[arg-type]
    fold.apply(
        RunStarted(config, "runs/a", "cpu", "CPU", "cpu", "2.14", "cifar10", 100, 10, ("a", "b"), 2, 0, "sample")
    )
    return fold


def tracked_run(name: str, **params: str | int | float | bool | None) -> RunFold:
    fold = RunFold()
    fold.apply(TrackStarted(name, "runs/x", params=params))
    return fold


def test_only_the_options_that_differ_are_shown_in_the_order_of_the_first_run() -> None:
    rows = differences(
        [train_run(lr=1e-3, epochs=5), train_run(lr=3e-3, epochs=5), train_run(lr=1e-3, seed=2, epochs=1)]
    )
    assert [(row.name, row.values) for row in rows] == [
        ("epochs", ("5", "5", "1")),
        ("lr", ("0.001", "0.003", "0.001")),
        ("seed", ("0", "0", "2")),
    ]


def test_places_on_disk_are_not_settings() -> None:
    from pathlib import Path

    a, b = train_run(runs_dir=Path("/a")), train_run(runs_dir=Path("/b"))
    assert differences([a, b]) == []
    assert "runs_dir" not in settings(a)


def test_a_scripts_params_and_a_missing_one() -> None:
    rows = differences([tracked_run("llm", lr=1e-3, model="gpt2"), tracked_run("llm", lr=3e-3)])
    assert [(row.name, row.values) for row in rows] == [("lr", ("0.001", "0.003")), ("model", ("gpt2", MISSING))]


def test_outside_text_is_made_plain_and_bounded() -> None:
    rows = differences([tracked_run("a", tag="\x1b]52;c;x\x07" + "y" * 500), tracked_run("b")])
    values = {row.name: row.values for row in rows}
    assert "\x1b" not in values["tag"][0] and "\x07" not in values["tag"][0] and len(values["tag"][0]) <= 40
    assert values["name"] == ("a", "b")


def test_one_run_has_nothing_to_compare() -> None:
    assert differences([train_run()]) == []
