"""Screenshots of the training view from real run folders, as ``rocmtui watch RUN [RUN...]`` shows them.

The folders are real runs (their events and the GPU samples recorded while they trained); nothing is made up.
``--keys`` are pressed before the picture is taken.

    python scripts/shoot_watch.py --name h200-watch tests/data/h200-fastnet-run
    python scripts/shoot_watch.py --name compare --size 200x50 RUN1 RUN2
    python scripts/shoot_watch.py --name smoothing --keys "left_square_bracket left_square_bracket" RUN

Writes ``<out>/<name>.svg`` and a PNG beside it (``rsvg-convert``, as scripts/make_screenshots.py).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from make_screenshots import to_png

from rocmtui.config import TrainConfig
from rocmtui.events import Emit, RunControl
from rocmtui.gpu.tail_source import TailSource
from rocmtui.run.follow import follow
from rocmtui.run.format import saved_config
from rocmtui.run.samples import SampleTail
from rocmtui.ui.state.compare import OtherSource, run_labels
from rocmtui.ui.train_app import TrainApp


def watch_app(run_dirs: list[Path], theme: str) -> TrainApp:
    """The app ``rocmtui watch`` builds for these folders (the first one followed, the others compared)."""
    main = run_dirs[0]
    samples = TailSource(SampleTail(main).poll, history_len=3600)
    samples.catch_up()
    labels = run_labels(run_dirs)

    def source(config: TrainConfig, emit: Emit, control: RunControl) -> object:
        return follow(main, emit, control, poll_s=0.01)

    def other(path: Path) -> OtherSource:
        return lambda emit, control: follow(path, emit, control, poll_s=0.01)

    compare = [(name, other(path)) for name, path in zip(labels[1:], run_dirs[1:], strict=True)]
    return TrainApp(
        saved_config(main),
        source,
        samples,
        detachable=True,
        theme=theme,
        compare=compare,
        label=labels[0],
    )


async def shoot(app: TrainApp, size: tuple[int, int], keys: list[str], svg: Path) -> None:
    async with app.run_test(size=size) as pilot:
        await app.workers.wait_for_complete()  # finished runs: every event applied
        await pilot.pause()
        app.train_screen.replot_now()
        await pilot.pause()
        for key in keys:
            await pilot.press(key)
        app.train_screen.replot_now()
        await pilot.pause()
        app.save_screenshot(filename=svg.name, path=str(svg.parent))
    png = to_png(svg)
    print(f"wrote {svg}" + (f" and {png}" if png else ""))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--name", required=True)
    parser.add_argument("--out", type=Path, default=Path("screenshots"))
    parser.add_argument("--size", default="120x40")
    parser.add_argument("--keys", default="", help="keys pressed before the picture, Textual names, space-separated")
    parser.add_argument("--theme", default="textual-dark")
    args = parser.parse_args(argv)
    cols, rows = (int(x) for x in args.size.split("x"))
    args.out.mkdir(parents=True, exist_ok=True)
    app = watch_app([path.resolve() for path in args.runs], args.theme)
    asyncio.run(shoot(app, (cols, rows), args.keys.split(), args.out.resolve() / f"{args.name}.svg"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
