"""Command-line parsing: bad input gives one line on stderr and exit code 2; help is real."""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest
from cli_run import run_cli
from fresh_interpreter import modules_loaded_by

from rocmtui.base.errors import UsageError, first_line
from rocmtui.cli.main import build_parser, main, prepare_data_dir, train_config
from rocmtui.config import TrainConfig
from rocmtui.train.recipes import FAST_MEASURED, RECIPES

BAD_INPUT = [
    (["train", "nosuchset"], "unknown dataset 'nosuchset'; choose from cifar"),
    (["train", "cifar", "--epochs", "0"], "'0' is out of range; it must be a positive integer"),
    (["train", "cifar", "--epochs", "-3"], "must be a positive integer"),
    (["train", "cifar", "--epochs", "2.5"], "not a whole number"),
    (["train", "cifar", "--batch-size", "0"], "--batch-size: '0' is out of range"),
    (["train", "cifar", "--lr", "0"], "positive finite number"),
    (["train", "cifar", "--lr", "nan"], "positive finite number"),
    (["train", "cifar", "--lr", "inf"], "positive finite number"),
    (["train", "cifar", "--lr", "fast"], "is not a number"),
    (["train", "cifar", "--data-dir", "/no/such/folder"], "data folder '/no/such/folder' does not exist"),
    (["train", "cifar", "--model", "gpt5"], "unknown model 'gpt5'; choose from simplecnn, fastnet, resnet18"),
    (["train", "cifar", "--optimizer", "lion"], "unknown optimizer 'lion'; choose from adam, adamw, sgd"),
    (["train", "cifar", "--amp", "fp8"], "unknown amp mode 'fp8'; choose from off, bf16, fp16"),
    (["train", "cifar", "--device", "tpu"], "'tpu' is not a device"),
    (["train", "cifar", "--label-smoothing", "1"], "must be at least 0 and below 1"),
    (["train", "cifar", "--resume", "/no/such/run"], "'/no/such/run' does not exist"),
    (["train", "cifar", "--crop-sizes", "24,x"], "'24,x' is not a list of whole numbers"),
    (["train", "cifar", "--crop-sizes", "24,,28"], "is not a list of whole numbers"),
    (["train", "cifar", "--crop-sizes", "8"], "'8' is out of range; give sides of 9 to 4096 px"),
    (["train", "cifar", "--crop-sizes", "-24"], "is not a list of whole numbers"),
    (["train", "cifar", "--newton-schulz-steps", "0"], "'0' is out of range; give a whole number of iterations, 1"),
    (["train", "cifar", "--newton-schulz-steps", "2.5"], "'2.5' is not a number"),
    (["train", "cifar", "--newton-schulz-steps", "5"], "--newton-schulz-steps is Muon's; with --optimizer adam"),
    (["train", "cifar", "--frobnicate"], "unrecognized arguments: --frobnicate"),
    (["train"], "the following arguments are required: DATASET"),
    (["fly"], "invalid choice: 'fly'"),
    (["monitor", "--interval", "0.01"], "out of range; give 0.1 to 60 seconds"),
    (["monitor", "--backend", "cuda"], "unknown backend 'cuda'; choose from auto, rocm, sysfs, nvml, host"),
    (["monitor", "--once", "--json"], "not allowed with argument"),
    (["monitor", "--count", "3"], "--count goes with --json"),
    (["bench", "--epochs", "0"], "must be a positive integer"),
]


@pytest.mark.parametrize(("argv", "expected"), BAD_INPUT, ids=[" ".join(a) or "<none>" for a, _ in BAD_INPUT])
def test_bad_input_is_one_line_and_exit_2(argv: list[str], expected: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(argv, capsys)
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1, err
    assert expected in err
    assert "Traceback" not in err


def test_rocmtui_alone_prints_the_commands(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli([], capsys)
    assert code == 0 and err == ""
    assert out.startswith("usage: rocmtui") and all(f"    {name} " in out for name in ("train", "monitor", "watch"))


@pytest.mark.parametrize("command", [None, "train", "monitor", "watch", "runs", "run", "bench", "doctor", "demo"])
def test_help_is_wrapped_at_80_columns_on_a_wide_terminal(
    command: str | None, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    code, out, _ = run_cli([*([command] if command else []), "--help"], capsys)
    assert code == 0 and out.count("\n") > 5
    too_long = [line for line in out.splitlines() if len(line) > 80]
    assert too_long == []
    assert "--max-\n" not in out  # options are never split at their hyphens


def test_every_subcommand_has_help_with_examples(capsys: pytest.CaptureFixture[str]) -> None:
    for command in ("train", "monitor", "bench", "doctor"):
        code, out, _ = run_cli([command, "--help"], capsys)
        assert code == 0
        assert "examples:" in out
        assert f"rocmtui {command}" in out


def commands(parser: argparse.ArgumentParser) -> list[str]:
    """The command names a parser was built with."""
    groups = [action for action in parser._actions if isinstance(action, argparse._SubParsersAction)]
    return [name for group in groups for name in group.choices]


EVERY_COMMAND = [
    ["train", "cifar", "--epochs", "2", "--recipe", "fast"],
    ["monitor", "--json", "--count", "3"],
    ["bench", "--quick"],
    ["doctor", "--json"],
    ["watch", "runs/a", "runs/b"],
    ["runs", "--runs-dir", "elsewhere"],
    ["stop", "runs/a"],
    ["run", "train.py", "--", "--lr", "0.1"],
    ["demo", "--speed", "2"],
    ["export", "--port", "0"],
    ["serve", "demo", "--loop"],
]


@pytest.mark.parametrize("argv", EVERY_COMMAND, ids=lambda argv: argv[0])
def test_a_command_parsed_alone_reads_as_in_the_whole_parser(argv: list[str]) -> None:
    """The start builds only the named command's parsers: what it parses must not differ."""
    alone = build_parser(argv)
    whole = build_parser()
    assert argv[0] in commands(alone) and len(commands(alone)) < len(commands(whole))
    assert vars(alone.parse_args(argv)) == vars(whole.parse_args(argv))


def test_the_monitors_start_loads_no_other_commands_module() -> None:
    loaded = modules_loaded_by(
        "from rocmtui.cli.main import build_parser; build_parser(['monitor']).parse_args(['monitor'])"
    )
    needed = {"rocmtui.cli.main", "rocmtui.cli.parser", "rocmtui.cli.argtypes", "rocmtui.cli.lazy_command"}
    needed |= {"rocmtui.cli.telemetry_flags", "rocmtui.cli.terminal"}
    assert sorted(m for m in loaded if m.startswith("rocmtui.cli.")) == sorted(needed)


def test_train_help_explains_every_flag(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run_cli(["train", "--help"], capsys)
    for flag in (
        "--model",
        "--epochs",
        "--batch-size",
        "--lr",
        "--optimizer",
        "--amp",
        "--seed",
        "--data-dir",
        "--download",
        "--runs-dir",
        "--resume",
        "--headless",
        "--device",
    ):
        assert flag in out


def test_version_comes_from_package_metadata(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(["--version"], capsys)
    assert code == 0
    assert out.strip() == f"rocmtui {version('rocmtui')}"


def test_python_dash_m_runs_the_same_cli() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "rocmtui", "train", "cifar", "--epochs", "0"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert "must be a positive integer" in result.stderr


def test_defaults_build_the_reference_workload() -> None:
    args = build_parser().parse_args(["train", "cifar"])
    assert train_config(args) == TrainConfig()


def test_resume_keeps_the_runs_epochs_unless_epochs_is_given(tmp_path: Path) -> None:
    kept = train_config(build_parser().parse_args(["train", "cifar", "--resume", str(tmp_path)]))
    assert kept.epochs == 0  # resolved to the saved run's epochs when the checkpoint is read
    given = train_config(build_parser().parse_args(["train", "cifar", "--resume", str(tmp_path), "--epochs", "5"]))
    assert given.epochs == 5  # the default's value, given on purpose: it counts


def test_flags_reach_the_config() -> None:
    args = build_parser().parse_args(
        [
            "train",
            "fashion-mnist",
            "--model",
            "FASTNET",
            "--epochs",
            "3",
            "--batch-size",
            "512",
            "--lr",
            "0.2",
            "--optimizer",
            "sgd",
            "--amp",
            "bf16",
            "--seed",
            "7",
            "--device",
            "cuda:1",
            "--augment",
        ]
    )
    config = train_config(args)
    assert (config.dataset, config.model, config.epochs, config.batch_size) == ("fashionmnist", "fastnet", 3, 512)
    assert (config.lr, config.optimizer, config.amp, config.seed, config.device) == (0.2, "sgd", "bf16", 7, "cuda:1")
    assert config.augment


def test_config_round_trips_through_json_form() -> None:
    config = TrainConfig(model="resnet18", epochs=2, resume=None)
    assert TrainConfig.from_dict(config.to_dict()) == config


def test_the_parser_knows_which_options_were_given() -> None:
    config = train_config(build_parser().parse_args(["train", "cifar", "--lr", "0.001", "--augment", "--epochs", "5"]))
    assert config.given == ("epochs", "lr", "augment")  # in the table's order, the default's value included
    assert (config.lr, config.augment, config.epochs) == (0.001, True, 5)
    assert train_config(build_parser().parse_args(["train", "cifar"])).given == ()


def test_every_train_option_is_derived_from_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    from rocmtui.cli.train_options import flag
    from rocmtui.config import train_options

    _, out, _ = run_cli(["train", "--help"], capsys)
    defaults = TrainConfig()
    for name, option in train_options().items():
        if option.parse == "dataset":
            continue
        assert flag(name) in out
        if "{default}" in option.help:
            assert f"default: {getattr(defaults, name)}" in " ".join(out.split())
    unwrapped = " ".join(out.split()).replace("- ", "-")  # argparse may wrap a line after a flag's hyphen
    may_change = "only --epochs, --cudnn-benchmark, --fused-kernels, --fused-mode, --tta-share, --data-dir"
    assert f"With --resume, a run keeps its own settings: {may_change}" in unwrapped


def test_a_switch_turns_off_what_a_recipe_or_a_default_turns_on() -> None:
    argv = ["train", "cifar", "--recipe", "fast", "--no-cuda-graph", "--cudnn-benchmark"]
    parsed = build_parser().parse_args(argv)
    config = train_config(parsed)
    assert (config.model, config.cuda_graph, config.cudnn_benchmark) == ("fastnet", False, True)
    recipe = train_config(build_parser().parse_args(["train", "cifar", "--recipe", "fast"]))
    assert (recipe.cuda_graph, recipe.cudnn_benchmark) == (True, False)  # the switches above changed both
    assert TrainConfig().cudnn_benchmark
    assert train_config(build_parser().parse_args(["train", "cifar", "--channels-last"])).channels_last


def test_a_recipe_fills_the_settings_and_typed_options_win() -> None:
    from rocmtui.train.recipes import RECIPES

    config = train_config(build_parser().parse_args(["train", "cifar", "--recipe", "fast", "--epochs", "12"]))
    fast = RECIPES["fast"].settings
    assert (config.model, config.batch_size, config.lr, config.cuda_graph) == (
        fast["model"],
        fast["batch_size"],
        fast["lr"],
        True,
    )
    assert config.epochs == 12 and config.given == ("epochs",)  # recipe values are not "given"
    assert config.newton_schulz_steps == 5  # Muon's own count, not airbench94_muon's 3 (BENCHMARKS.md)
    fewer = ["train", "cifar", "--recipe", "fast", "--newton-schulz-steps", "3"]
    assert train_config(build_parser().parse_args(fewer)).newton_schulz_steps == 3
    guide = train_config(build_parser().parse_args(["train", "cifar", "--recipe", "guide"]))
    assert guide == train_config(build_parser().parse_args(["train", "cifar"]))


def test_a_recipe_with_resume_is_one_line_and_exit_2(tmp_path, capsys) -> None:
    (tmp_path / "run").mkdir()
    assert main(["train", "cifar", "--recipe", "fast", "--resume", str(tmp_path / "run"), "--headless"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "--recipe starts a new run" in err


def test_the_help_lists_the_recipes_with_what_they_reach(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "--recipe" in out and "guide:" in out
    for name, recipe in RECIPES.items():
        assert f"{name}: {' '.join(recipe.reaches.split())}" in out


def test_every_figure_the_train_help_gives_a_recipe_is_its_measured_one(capsys) -> None:
    """No stale figure: the accuracies and times that ``train --help`` states for the recipes (the ``--recipe``
    option and the examples) are the ones recorded in ``rocmtui.train.recipes`` with their measurement."""
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    recipe_help = re.search(r"--recipe RECIPE (.*?) --headless", out)
    assert recipe_help is not None
    about_recipes = recipe_help[1] + out[out.index("examples:") :]
    figure = re.compile(r"\d+(?:\.\d+)?%|\d+(?:\.\d+)? s\b")
    measured = [recipe.measured for recipe in RECIPES.values() if recipe.measured is not None]
    assert len(measured) == len(RECIPES)
    allowed = {found for m in measured for found in figure.findall(m.summary)}
    assert set(figure.findall(about_recipes)) == allowed
    assert FAST_MEASURED.summary in out[out.index("examples:") :]


def test_a_path_the_output_encoding_cannot_show_is_printed_escaped(tmp_path: Path) -> None:
    """``PYTHONIOENCODING=ascii`` (or a C locale) and a runs folder named in another script: no traceback."""
    folder = tmp_path / "rün"
    env = {**os.environ, "PYTHONIOENCODING": "ascii"}
    done = subprocess.run(
        [sys.executable, "-m", "rocmtui", "runs", "--runs-dir", str(folder)],
        capture_output=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert b"r\\xfcn" in done.stdout and b"Traceback" not in done.stderr


def test_download_makes_a_missing_data_folder_and_without_it_the_folder_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "data" / "mnist"
    with pytest.raises(UsageError, match="does not exist; make it, or add --download"):
        prepare_data_dir(TrainConfig(dataset="mnist", data_dir=folder))
    assert not folder.exists()
    prepare_data_dir(TrainConfig(dataset="mnist", data_dir=folder, download=True))
    assert folder.is_dir()
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(UsageError, match="cannot be made"):
        prepare_data_dir(TrainConfig(dataset="mnist", data_dir=blocker / "sub", download=True))


def test_an_error_whose_first_line_introduces_its_reason_keeps_the_reason_on_one_line() -> None:
    offline = RuntimeError(  # torchvision's download error, as raised offline
        "Error downloading train-images-idx3-ubyte.gz:\nTried https://ossci-datasets.s3.amazonaws.com/mnist/, got:\n"
        "<urlopen error [Errno -2] Name or service not known>\nTried https://yann.lecun.com/exdb/mnist/, got:\n<x>"
    )
    assert first_line(offline) == (
        "Error downloading train-images-idx3-ubyte.gz: Tried https://ossci-datasets.s3.amazonaws.com/mnist/, got: "
        "<urlopen error [Errno -2] Name or service not known>"
    )
    assert first_line(ValueError("first\nsecond")) == "first" and first_line(ValueError("")) == "ValueError"
