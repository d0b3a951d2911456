"""``rocmtui run [--name N] -- python script.py ARGS``: any script as a run, its curves and output live.

The script runs under ``rocmtui.launch.script_supervisor`` in a session of its own: it never dies with the
terminal, and its run folder records how it ended whether or not it calls ``rocmtui.track()``. The exit
code is the script's (when the UI detaches, 0: the script runs on).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from rocmtui.base.errors import UsageError
from rocmtui.base.text import plain
from rocmtui.cli.notify_option import add_notify_flag
from rocmtui.cli.terminal import can_draw
from rocmtui.config import MonitorConfig, train_options
from rocmtui.ui.state.settings import notify_wanted

RUN_EXAMPLES = """\
examples:
  rocmtui run -- python examples/track_minimal.py
  rocmtui run --name llm -- python examples/hf_finetune_tiny_llm.py --max-steps 200
  rocmtui run --runs-dir ~/exp -- python train.py --lr 3e-4
"""
POLL_S = 0.2


def add_script_parser(sub: Any) -> None:
    """The ``run`` subcommand, added to the CLI's subparsers."""
    parser = sub.add_parser(
        "run",
        help="run any training script live: its curves (rocmtui.track), output and the GPU panel",
        epilog=RUN_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.description = (
        "Start COMMAND in a process of its own with a run folder (given to it as $ROCMTUI_RUN_DIR) and watch it: "
        "the scalars it logs through rocmtui.track(), its stdout and stderr (also in the folder's output.log) and "
        "the GPUs. q detaches or stops; the exit code is the script's."
    )
    parser.add_argument("--name", default=None, help="the run's name (default: the script's file name)")
    parser.add_argument("--runs-dir", type=Path, default=None, help="where the run folder goes (default: runs)")
    parser.add_argument(
        "--shared-runs-dir", action="store_true", default=None, help=train_options()["shared_runs_dir"].help
    )
    parser.add_argument("--theme", default=MonitorConfig().theme, help="Textual theme (default: %(default)s)")
    add_notify_flag(parser)
    parser.add_argument("script", nargs=argparse.REMAINDER, metavar="-- COMMAND ...", help="the command to run")


def script_name(command: list[str]) -> str:
    """The first argument that looks like a script or module, else the program: ``python train.py`` -> train."""
    for index, arg in enumerate(command[1:], start=1):
        if command[index - 1] == "-m":
            return arg.rsplit(".", 1)[-1]
        if not arg.startswith("-"):
            return Path(arg).stem
    return Path(command[0]).stem


def parse_command(args: argparse.Namespace) -> list[str]:
    command = list(args.script)
    if command[:1] == ["--"]:
        command = command[1:]
    if not command:
        raise UsageError("give the command to run after --, e.g. rocmtui run -- python train.py")
    if shutil.which(command[0]) is None and not Path(command[0]).is_file():
        raise UsageError(f"{command[0]}: command not found")
    return command


def run_script(args: argparse.Namespace) -> int:
    from rocmtui.run.layout import create_run_dir, default_runs_dir, run_name
    from rocmtui.tracking.sink import slug

    command = parse_command(args)
    name = args.name or script_name(command)
    runs_dir = args.runs_dir or default_runs_dir()
    run_dir = create_run_dir(runs_dir, run_name(slug(name)), shared=args.shared_runs_dir)  # the viewer knows it now
    if not can_draw():
        return _run_plain(run_dir, name, command)
    return _run_ui(args, run_dir, name, command)


OUTPUT_LINE_LIMIT = 16384
"""Characters of one line of a script's output shown on a terminal (the folder's output.log keeps it whole)."""


def _run_plain(run_dir: Path, name: str, command: list[str]) -> int:
    """No terminal: the script's output on stdout as it is written, then its exit code."""
    from rocmtui.launch.script import start
    from rocmtui.run.format import OUTPUT
    from rocmtui.run.lines import LineTailer

    process = start(run_dir, name, command)
    tail = LineTailer(run_dir / OUTPUT)
    print(f"rocmtui: run folder {plain(run_dir)}", flush=True)
    terminal = sys.stdout.isatty()  # TERM=dumb: a terminal all the same, where the script's escapes are shown
    try:
        while True:
            done = process.poll() is not None
            for line in tail.read_lines():
                text = line.decode(errors="replace")
                sys.stdout.write((plain(text, lines=True, limit=OUTPUT_LINE_LIMIT) if terminal else text) + "\n")
            sys.stdout.flush()
            if done:
                return process.returncode
            time.sleep(POLL_S)
    finally:
        tail.close()


def _run_ui(args: argparse.Namespace, run_dir: Path, name: str, command: list[str]) -> int:
    from rocmtui.cli.run_commands import print_lines
    from rocmtui.config import TrainConfig
    from rocmtui.gpu.tail_source import TailSource
    from rocmtui.launch.script import ScriptLauncher
    from rocmtui.run.samples import SampleTail
    from rocmtui.ui.look.themes import check_theme
    from rocmtui.ui.train_app import TrainApp, run_train_app

    check_theme(args.theme)
    launcher = ScriptLauncher(run_dir, name, command)
    # One GPU poller per run: the supervisor records the samples in the folder; the UI reads them, as watch does.
    sampler = TailSource(SampleTail(run_dir).poll, history_len=3600)
    app = TrainApp(
        TrainConfig(),
        launcher,
        sampler,
        detachable=True,
        theme=args.theme,
        run_dir=run_dir,
        notify=notify_wanted(args.no_notify),
        script=name,
    )
    code, lines = run_train_app(app)
    returncode = launcher.returncode
    if returncode is not None and not app.detached and app.signal_code is None:
        code = returncode
    print_lines(lines, failed=code not in (0, 129))
    return code
