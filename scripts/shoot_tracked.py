"""A screenshot of ``rocmtui run -- python SCRIPT`` part way through: the script's curves beside the GPU panel.

Runs the same app as ``rocmtui run`` (a supervised script in its own session, its run folder followed), headless
at the given size, and saves the app's own SVG (and a PNG where a converter exists) once the script has logged
``--after`` steps. Then it stops the script through its run folder, as ``q`` then ``y`` would.

    python scripts/shoot_tracked.py --out screenshots --name h200-track-llm -- python examples/hf_finetune_tiny_llm.py
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

from make_screenshots import to_png

from rocmtui.config import TrainConfig
from rocmtui.gpu.tail_source import TailSource
from rocmtui.launch.script import ScriptLauncher
from rocmtui.run.layout import create_run_dir, run_name
from rocmtui.run.samples import SampleTail
from rocmtui.ui.train_app import TrainApp


async def shoot(
    command: list[str], out: Path, name: str, *, size: tuple[int, int], after: int, timeout: float, series: str | None
) -> None:
    run_dir = create_run_dir(Path("runs"), run_name("shot"))
    launcher = ScriptLauncher(run_dir, name, command)
    app = TrainApp(TrainConfig(), launcher, TailSource(SampleTail(run_dir).poll), detachable=True)
    async with app.run_test(size=size) as pilot:
        deadline = time.monotonic() + timeout
        while (app.state.scalars.last is None or app.state.scalars.last.step < after) and time.monotonic() < deadline:
            await pilot.pause(0.5)
        others = app.state.scalars.others()
        if series in others:  # the second plot shows this series (as pressing n until it does)
            app.train_screen.accuracy_plot.view = series
        app.train_screen.replot_now()
        await pilot.pause()
        svg = out / f"{name}.svg"
        app.save_screenshot(filename=svg.name, path=str(out))
        print(f"wrote {svg}", to_png(svg) or "(no PNG converter)")
        app.control.request_stop()
        await pilot.pause(1.0)
        app.exit(0)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("screenshots"))
    parser.add_argument("--name", default="track")
    parser.add_argument("--size", default="120x40")
    parser.add_argument("--after", type=int, default=150, help="steps logged before the picture is taken")
    parser.add_argument("--timeout", type=float, default=240.0)
    parser.add_argument("--series", default=None, help="the series the second plot shows, e.g. tokens_per_s")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = [a for a in args.command if a != "--"] if args.command and args.command[0] == "--" else args.command
    cols, rows = (int(x) for x in args.size.split("x"))
    args.out.mkdir(parents=True, exist_ok=True)
    asyncio.run(
        shoot(
            command, args.out, args.name, size=(cols, rows), after=args.after, timeout=args.timeout, series=args.series
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
