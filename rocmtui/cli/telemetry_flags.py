"""The sampler's flags, shared by every command that samples the GPUs (train, monitor, export)."""

from __future__ import annotations

import argparse

from rocmtui.cli import argtypes
from rocmtui.config import BACKENDS, MonitorConfig


def add_telemetry_flags(parser: argparse.ArgumentParser, *, history: bool = True) -> None:
    """``--backend`` and ``--interval``; ``--history`` where a history is drawn."""
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
        default=defaults.interval_s,
        help="seconds between GPU samples, 0.1 to 60 (default: %(default)s)",
    )
    if history:
        parser.add_argument(
            "--history",
            type=argtypes.positive_int,
            default=defaults.history_len,
            help="samples of history kept per GPU (default: %(default)s)",
        )
