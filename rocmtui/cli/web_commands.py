"""``rocmtui serve``: the app in a browser through textual-serve; the parsers of serve, demo and export.

Each browser tab gets its own process (textual-serve starts the command per connection), running
``rocmtui.cli.served``. It listens on 127.0.0.1 unless ``--host`` says otherwise, and then warns: there is
no authentication, and whoever reaches the port gets the app and its keys.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import Any

from rocmtui.cli import argtypes
from rocmtui.cli.demo_command import add_demo_options, add_demo_parser
from rocmtui.cli.export_command import add_export_parser
from rocmtui.cli.run_commands import RUNS_DIR_HELP
from rocmtui.errors import UsageError
from rocmtui.run.layout import default_runs_dir

LOCALHOST = "127.0.0.1"
DEFAULT_PORT = 8000

SERVE_EXAMPLES = """\
examples:
  rocmtui serve demo                     the recorded H200 run in a browser: http://127.0.0.1:8000
  rocmtui serve watch runs/20261201-101500-cifar10-fastnet
  rocmtui serve monitor --port 8080
  rocmtui serve --host 0.0.0.0 demo --loop   every address of this machine, WITHOUT authentication
"""


def add_web_parsers(sub: Any) -> None:
    """``serve``, ``demo`` and ``export``, added to the CLI's subparsers."""
    add_demo_parser(sub)
    add_export_parser(sub)
    serve = sub.add_parser(
        "serve",
        help="show monitor, watch or demo in a web browser (one app per tab)",
        epilog=SERVE_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    serve.description = (
        "Serve the app over HTTP through textual-serve (pip install 'rocmtui[web]'); each browser tab gets its "
        "own app. Listens on 127.0.0.1 unless --host says otherwise; there is no authentication."
    )
    add_listen_options(serve, DEFAULT_PORT)
    serve.add_argument("--public-url", default=None, help="the address browsers use (default: http://HOST:PORT)")
    what = serve.add_subparsers(dest="app", metavar="APP", required=True, parser_class=type(serve))
    what.add_parser("monitor", help="the GPU monitor (each tab samples the GPUs)")
    watch = what.add_parser("watch", help="follow a run folder")
    watch.add_argument("run", metavar="RUN", nargs="?", default=None, help="the run folder (default: the newest)")
    watch.add_argument("--runs-dir", type=Path, default=default_runs_dir(), help=RUNS_DIR_HELP)
    add_demo_options(what.add_parser("demo", help="the recorded H200 run, paced"))
    train = what.add_parser("train", help="refused: serve watch instead", add_help=False)
    train.add_argument("rest", nargs=argparse.REMAINDER)


def add_listen_options(parser: argparse.ArgumentParser, port: int) -> None:
    parser.add_argument("--host", default=LOCALHOST, help="address to listen on (default: %(default)s)")
    parser.add_argument("--port", type=argtypes.non_negative_int, default=port, help="TCP port (default: %(default)s)")


def warn_if_exposed(command: str, host: str, port: int) -> None:
    """One warning line on stderr when listening beyond the loopback address."""
    if host not in (LOCALHOST, "localhost", "::1"):
        print(
            f"rocmtui {command}: warning: listening on {host}:{port} with no authentication: "
            "anyone who can reach this port can use it",
            file=sys.stderr,
        )


def served_command(args: argparse.Namespace) -> str:
    """The shell command each tab runs; UsageError (one line) for what cannot be served."""
    if args.app == "train":
        raise UsageError(
            "serving train would start one training per browser tab: start it with 'rocmtui train ...' "
            "(q, then detach, leaves it training) and serve it with 'rocmtui serve watch'"
        )
    words = [sys.executable, "-m", "rocmtui.cli.served", args.app]
    if args.app == "watch":
        from rocmtui.run.listing import find_run

        words.append(str(find_run(args.run, args.runs_dir).resolve()))
    elif args.app == "demo":
        words += ["--speed", repr(args.speed)] + (["--loop"] if args.loop else [])
    return shlex.join(words)


def run_serve(args: argparse.Namespace) -> int:
    command = served_command(args)
    if args.port == 0:
        raise UsageError("serve needs a fixed --port (the page tells the browser where to connect)")
    try:
        from textual_serve.server import Server
    except ImportError:
        raise UsageError("serve needs textual-serve: pip install 'rocmtui[web]'") from None
    warn_if_exposed("serve", args.host, args.port)
    title = f"rocmtui {args.app}"
    Server(command, host=args.host, port=args.port, title=title, public_url=args.public_url).serve()
    return 0
