"""The sampler's flags, shared by every command that samples the GPUs (train, monitor, export)."""

from __future__ import annotations

import argparse

from rocmtui.cli import argtypes
from rocmtui.config import BACKENDS, MonitorConfig


def add_telemetry_flags(parser: argparse.ArgumentParser, *, history: bool = True, run: bool = False) -> None:
    """``--backend`` and ``--interval`` (None when not given); ``--history`` where a history is drawn.

    ``run``: the command trains, and samples its first minutes at 4 Hz unless ``--interval`` is given.
    """
    defaults = MonitorConfig()
    parser.add_argument(
        "--backend",
        type=argtypes.choice(BACKENDS, "backend"),
        default=defaults.backend,
        help=f"telemetry backend: {', '.join(BACKENDS)} (default: %(default)s)",
    )
    parser.add_argument(
        "--interval",
        type=argtypes.interval,
        default=None,
        help="seconds between GPU samples, 0.1 to 60 (default: "
        + (
            f"{defaults.FAST_INTERVAL_S:g} for a run's first {defaults.RUN_FAST_START_S / 60:g} minutes, "
            f"then {defaults.interval_s:g})"
            if run
            else f"{defaults.interval_s:g})"
        ),
    )
    if history:
        parser.add_argument(
            "--history",
            type=argtypes.positive_int,
            default=defaults.history_len,
            help="samples of history kept per GPU (default: %(default)s)",
        )


def interval_given(args: argparse.Namespace) -> float:
    """``--interval``, or the default where it was not given."""
    return MonitorConfig.interval_s if args.interval is None else float(args.interval)
