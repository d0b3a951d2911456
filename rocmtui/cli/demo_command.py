"""``rocmtui demo``: a real H200 run, shipped in the package, replayed at a chosen pace in the viewer app.

The recording (``rocmtui/data/demo-run``) is a run folder as ``rocmtui train`` wrote it on an NVIDIA H200:
its events with their times, and the NVML samples taken while it trained. No torch is loaded.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rocmtui.cli import argtypes
from rocmtui.cli.terminal import can_draw
from rocmtui.errors import UsageError

if TYPE_CHECKING:
    from rocmtui.ui.demo_app import DemoApp

DEMO_RUN = Path(__file__).resolve().parent.parent / "data" / "demo-run"
DEFAULT_SPEED = 0.1
LEAD_S = 1.0
"""Wall seconds between the first frame and the run's first event."""

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


def build_demo_app(speed: float, loop: bool, run_dir: Path = DEMO_RUN) -> DemoApp:
    """The demo app over ``run_dir``'s events and samples; UsageError (one line) when it cannot be read."""
    from rocmtui.cli.run_commands import saved_config
    from rocmtui.gpu.codec import loads
    from rocmtui.run.format import GPU
    from rocmtui.run.pacing import Pace, recorded_events
    from rocmtui.ui.demo_app import create_demo_app
    from rocmtui.ui.state.demo_samples import PacedSamples

    try:
        events = recorded_events(run_dir)
        lines = (run_dir / GPU).read_bytes().splitlines()
        samples = [loads(line) for line in lines if line.strip()]
    except (OSError, ValueError) as err:
        raise UsageError(f"cannot read the recording in {run_dir}: {err}") from None
    if not events:
        raise UsageError(f"no events in the recording in {run_dir}")
    pace = Pace(events[0][0] - LEAD_S * speed, speed)
    paced = PacedSamples(samples, pace)
    paced.catch_up()  # the GPU before the run started is history at the first frame
    return create_demo_app(saved_config(run_dir), events, paced, pace, loop=loop)


def run_demo(args: argparse.Namespace) -> int:
    if not can_draw():
        raise UsageError("demo draws in a terminal (in a browser: 'rocmtui serve demo')")
    app = build_demo_app(args.speed, args.loop)
    app.run()
    for line in app.final_lines():
        print(line)
    return 0
