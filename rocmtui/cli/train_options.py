"""``rocmtui train``'s options, derived from TrainConfig's field table: flags, help, and which were given.

Each option is defined once, as a field of ``TrainConfig`` with ``option(...)`` metadata. Flags get
``default=argparse.SUPPRESS``, so a parsed namespace holds only what the user typed: ``train_config`` fills
the rest from TrainConfig's defaults and records the names typed in ``TrainConfig.given``, which the
resume check needs ("--model simplecnn" given on a resnet18 run is refused, not ignored).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import fields
from typing import Any, get_args, get_type_hints

from rocmtui.base.errors import UsageError
from rocmtui.cli import argtypes
from rocmtui.config import DATASETS, Option, ParseAs, TrainConfig, train_options
from rocmtui.run.layout import default_runs_dir
from rocmtui.train.recipes import RECIPES

PARSERS: dict[ParseAs, Callable[[str], Any]] = {
    "device": argtypes.device,
    "existing_dir": argtypes.data_dir,  # a missing folder is made by --download, refused without it
    "existing_path": argtypes.existing_path,
    "output_dir": argtypes.output_dir,
    "positive_int": argtypes.positive_int,
    "non_negative_int": argtypes.non_negative_int,
    "positive_float": argtypes.positive_float,
    "non_negative_float": argtypes.non_negative_float,
    "fraction": argtypes.fraction,
    "newton_schulz_steps": argtypes.newton_schulz_steps,
    "share": argtypes.share,
    "crop_sizes": argtypes.crop_sizes,
    "endpoint": argtypes.endpoint,
    "job_id": argtypes.job_id,
    "node_rank": argtypes.non_negative_int,
}
"""The argparse type function for each way of reading a value (``choice`` and ``dataset`` are built)."""


def flag(name: str) -> str:
    """``batch_size`` -> ``--batch-size``."""
    return "--" + name.replace("_", "-")


def choices(name: str, option: Option) -> tuple[str, ...]:
    """The values a ``choice`` option accepts (its field's ``Literal``), or the dataset names."""
    if option.parse == "dataset":
        return tuple(DATASETS)
    return tuple(str(value) for value in get_args(get_type_hints(TrainConfig)[name]))


def _help(name: str, option: Option, default: object) -> str:
    listed = ", ".join(choices(name, option)) if option.parse in ("choice", "dataset") else ""
    return option.help.format(default=default, choices=listed).replace("%", "%%")


def _type(name: str, option: Option) -> Callable[[str], Any]:
    if option.parse in ("choice", "dataset"):
        return argtypes.choice(choices(name, option), option.what or name.replace("_", " "))
    return PARSERS[option.parse]


def add_recipe_option(parser: argparse.ArgumentParser) -> None:
    """``--recipe NAME``: a named set of the options below (``rocmtui.train.recipes.RECIPES``)."""
    listed = "; ".join(f"{name}: {recipe.reaches}" for name, recipe in RECIPES.items())
    parser.add_argument(
        "--recipe",
        type=argtypes.choice(tuple(RECIPES), "recipe"),
        default=None,
        help=f"start from a named set of settings; options given as well win ({listed})".replace("%", "%%"),
    )


def add_train_options(parser: argparse.ArgumentParser) -> None:
    """Add one argument per option of the table: the dataset positional, then the flags in field order."""
    defaults = TrainConfig()
    for name, option in train_options().items():
        help_text = _help(name, option, getattr(defaults, name))
        if option.parse == "dataset":
            parser.add_argument(name, metavar=option.metavar, type=_type(name, option), help=help_text)
        elif option.parse == "switch":
            parser.add_argument(
                flag(name), dest=name, action=argparse.BooleanOptionalAction, default=argparse.SUPPRESS, help=help_text
            )
        else:
            parser.add_argument(
                flag(name),
                dest=name,
                metavar=option.metavar,
                type=_type(name, option),
                default=argparse.SUPPRESS,
                help=help_text,
            )


def resume_note() -> str:
    """One sentence for the help, from the table: what --resume lets change."""
    free = [flag(name) for name, option in train_options().items() if option.on_resume == "may change"]
    free.remove("--resume")
    return (
        f"With --resume, a run keeps its own settings: only {', '.join(free)} may differ "
        "(any other option given must match the run's)."
    )


def given(args: argparse.Namespace) -> dict[str, Any]:
    """The options that were on the command line (the positional dataset included), by field name."""
    return {name: getattr(args, name) for name in train_options() if hasattr(args, name)}


def config_from_args(args: argparse.Namespace) -> TrainConfig:
    """TrainConfig from what was given, TrainConfig's defaults for the rest; ``given`` names the flags typed.

    ``--epochs`` left out with ``--resume`` is 0, which the resume resolves to the saved run's own.
    """
    values = given(args)
    typed = tuple(name for name, option in train_options().items() if name in values and option.parse != "dataset")
    recipe = getattr(args, "recipe", None)
    if recipe is not None:
        if values.get("resume") is not None:
            raise UsageError("--recipe starts a new run; a resumed run keeps its own settings (leave --recipe out)")
        values = {**RECIPES[recipe].settings, **values}  # what was typed wins over the recipe
    if "dataset" in values:
        values["dataset"] = DATASETS[values["dataset"]]
    if "runs_dir" not in values:
        values["runs_dir"] = default_runs_dir()  # $ROCMTUI_RUNS_DIR, as every command and track() read it
    if values.get("resume") is not None and "epochs" not in values:
        values["epochs"] = 0
    unknown = set(values) - {f.name for f in fields(TrainConfig)}
    assert not unknown, unknown  # the table is TrainConfig's own fields
    return TrainConfig(**values, given=typed)
