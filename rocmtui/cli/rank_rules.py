"""``--straggler-margin``, ``--straggler-window`` and ``--stall-s``: when ``watch`` and ``runs --ranks`` name a rank."""

from __future__ import annotations

import argparse

from rocmtui.cli import argtypes
from rocmtui.run.rank_health import HealthRules

DEFAULTS = HealthRules()


def add_rank_rules(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--straggler-margin", type=argtypes.positive_float, default=DEFAULTS.margin, metavar="SHARE",
        help="a rank whose steps take this share longer than the median rank's is the straggler (default: "
        "%(default)g, 20%%)",
    )  # fmt: skip
    parser.add_argument(
        "--straggler-window", type=argtypes.positive_int, default=DEFAULTS.window, metavar="REPORTS",
        help="a rank's step time is the median of its latest REPORTS reports (default: %(default)d)",
    )  # fmt: skip
    parser.add_argument(
        "--stall-s", type=argtypes.positive_float, default=DEFAULTS.stall_s, metavar="SECONDS",
        help="a rank silent this long while others answer is stalled (default: %(default)g)",
    )  # fmt: skip


def rank_rules(args: argparse.Namespace) -> HealthRules:
    return HealthRules(args.straggler_margin, args.straggler_window, args.stall_s)
