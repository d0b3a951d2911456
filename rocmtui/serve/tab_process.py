"""The process ``rocmtui serve`` starts for each browser tab: one app, drawn through Textual's web driver.

``python -m rocmtui.serve.tab_process monitor | watch RUN | demo [--speed X] [--loop]``. It is not the user's
command line: under textual-serve stdout is a pipe, where ``rocmtui monitor`` would print JSON lines and
``watch`` would refuse, so this entry builds the same apps without those terminal checks. The arguments
were checked by ``rocmtui serve`` before it listened.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from textual.app import App


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m rocmtui.serve.tab_process")
    sub = parser.add_subparsers(dest="what", required=True)
    sub.add_parser("monitor")
    sub.add_parser("watch").add_argument("run", type=Path)
    demo = sub.add_parser("demo")
    demo.add_argument("--speed", type=float, default=0.1)
    demo.add_argument("--loop", action="store_true")
    return parser


def build_app(args: argparse.Namespace) -> App[Any]:
    """The app a tab gets."""
    if args.what == "demo":
        from rocmtui.ui.demo_app import build_demo_app

        return build_demo_app(args.speed, args.loop)
    if args.what == "watch":
        from rocmtui.config import TrainConfig
        from rocmtui.events import Emit, RunControl
        from rocmtui.gpu.tail_source import TailSource
        from rocmtui.run.follow import follow
        from rocmtui.run.format import saved_config
        from rocmtui.run.samples import SampleTail
        from rocmtui.ui.train_app import TrainApp

        run_dir: Path = args.run
        samples = TailSource(SampleTail(run_dir).poll, history_len=3600)
        samples.catch_up()

        def source(config: TrainConfig, emit: Emit, control: RunControl) -> object:
            return follow(run_dir, emit, control)

        from rocmtui.ui.state.settings import notify_watched

        notify = notify_watched(False, run_dir)  # the bell (and the app's toast) for a run that ends while watched
        return TrainApp(saved_config(run_dir), source, samples, detachable=True, run_dir=run_dir, notify=notify)
    from rocmtui.config import MonitorConfig
    from rocmtui.gpu.detect import open_sampler
    from rocmtui.gpu.sample import HOST_PROCESS_ROWS
    from rocmtui.ui.app import create_monitor_app

    config = MonitorConfig()
    return create_monitor_app(config, open_sampler(config, host_processes=HOST_PROCESS_ROWS))


def main(argv: Sequence[str] | None = None) -> int:
    app = build_app(_parser().parse_args(argv))
    result = app.run()
    return result if isinstance(result, int) else 0


if __name__ == "__main__":
    sys.exit(main())
