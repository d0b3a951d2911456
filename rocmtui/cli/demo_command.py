"""``rocmtui demo``: a real H200 run, shipped in the package, replayed at a chosen pace in the viewer app.

The recording (``rocmtui/data/demo-run``) is a run folder as ``rocmtui train`` wrote it on an NVIDIA H200:
its events with their times, and the NVML samples taken while it trained. No torch is loaded.
"""

from __future__ import annotations

import argparse
from typing import Any

from rocmtui.base.errors import UsageError
from rocmtui.cli import argtypes
from rocmtui.cli.terminal import can_draw

DEFAULT_SPEED = 0.1

DEMO_EXAMPLES = """\
examples:
  rocmtui demo                  the recorded H200 run, ten times slower than it trained (about 35 s)
  rocmtui demo --speed 1        as fast as the H200 trained it (3.4 s)
  rocmtui demo --loop           start over after each pass, for a booth (q leaves)
"""


def add_demo_parser(sub: Any) -> None:
    demo = sub.add_parser(
        "demo",
        help="replay a real recorded H200 run at a chosen pace (for a meetup screen)",
        epilog=DEMO_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    demo.description = (
        "Replay a real run recorded on an NVIDIA H200 (CIFAR-10, fastnet, 10 epochs, its NVML samples) in the "
        "training view: big plots, high contrast, and a closing card with the shareable result line."
    )
    add_demo_options(demo)


def add_demo_options(parser: argparse.ArgumentParser) -> None:
    """``--speed`` and ``--loop``; ``serve demo`` takes them too."""
    parser.add_argument(
        "--speed",
        type=argtypes.positive_float,
        default=DEFAULT_SPEED,
        help="X times the pace it was recorded at (default: %(default)s, ten times slower)",
    )
    parser.add_argument("--loop", action="store_true", help="start over 15 s after each pass, until q")


def run_demo(args: argparse.Namespace) -> int:
    if not can_draw():
        raise UsageError("demo draws in a terminal (in a browser: 'rocmtui serve demo')")
    from rocmtui.ui.demo_app import build_demo_app

    app = build_demo_app(args.speed, args.loop)
    app.run()
    for line in app.final_lines():
        print(line)
    return 0
