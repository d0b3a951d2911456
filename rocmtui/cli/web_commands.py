"""``rocmtui serve``: the app in a browser through textual-serve; the parsers of serve, demo and export.

Each browser tab gets its own process (textual-serve starts the command per connection), running
``rocmtui.serve.tab_process``. It listens on 127.0.0.1 unless ``--host`` says otherwise, and then warns. The page and
its WebSocket need the token printed at start, the WebSocket a same-origin page (``rocmtui.serve.guarded_server``).
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import Any

from rocmtui.base.errors import UsageError
from rocmtui.cli import argtypes
from rocmtui.cli.demo_command import add_demo_options, add_demo_parser
from rocmtui.cli.export_command import add_export_parser
from rocmtui.cli.listen import LOCALHOST, warn_if_exposed
from rocmtui.cli.run_commands import RUNS_DIR_HELP
from rocmtui.run.layout import default_runs_dir

DEFAULT_PORT = 8000
DEFAULT_MAX_SESSIONS = 4

SERVE_EXAMPLES = """\
examples:
  rocmtui serve demo                     the recorded H200 run in a browser: http://127.0.0.1:8000
  rocmtui serve watch runs/20261201-101500-cifar10-fastnet
  rocmtui serve monitor --port 8080
  rocmtui serve --host 0.0.0.0 demo --loop   every address of this machine (whoever has the token gets the app)
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
        "own app. Listens on 127.0.0.1 unless --host says otherwise. The page needs the token in the URL printed at "
        "start; the WebSocket also needs a page of the same origin (or one given with --allow-origin)."
    )
    add_serve_options(serve, None)
    what = serve.add_subparsers(dest="app", metavar="APP", required=True, parser_class=type(serve))
    monitor = what.add_parser("monitor", help="the GPU monitor (each tab samples the GPUs)")
    watch = what.add_parser("watch", help="follow a run folder")
    watch.add_argument("run", metavar="RUN", nargs="?", default=None, help="the run folder (default: the newest)")
    watch.add_argument("--runs-dir", type=Path, default=default_runs_dir(), help=RUNS_DIR_HELP)
    demo = what.add_parser("demo", help="the recorded H200 run, paced")
    add_demo_options(demo)
    for app in (monitor, watch, demo):  # serve's options after the app's name too: serve monitor --port 8080
        add_serve_options(app, argparse.SUPPRESS)
    train = what.add_parser("train", help="refused: serve watch instead", add_help=False)
    train.add_argument("rest", nargs=argparse.REMAINDER)


def add_listen_options(parser: argparse.ArgumentParser, port: int, unset: str | None = None) -> None:
    """``--host`` and ``--port``; ``unset=argparse.SUPPRESS`` on an app's parser: given there, they win."""
    host, port_default = (unset, unset) if unset else (LOCALHOST, port)
    parser.add_argument("--host", default=host, help=f"address to listen on (default: {LOCALHOST})")
    parser.add_argument(
        "--port", type=argtypes.non_negative_int, default=port_default, help=f"TCP port (default: {port})"
    )


def add_serve_options(parser: argparse.ArgumentParser, unset: str | None) -> None:
    """serve's own options, on ``serve`` and again on each app's parser (where they default to unset)."""
    add_listen_options(parser, DEFAULT_PORT, unset)
    parser.add_argument("--public-url", default=unset, help="the address browsers use (default: http://HOST:PORT)")
    parser.add_argument(
        "--allow-origin",
        action="append",
        default=unset,
        metavar="ORIGIN",
        help="another origin whose pages may open sessions, e.g. https://proxy.example:443 (repeatable)",
    )
    parser.add_argument(
        "--max-sessions",
        type=argtypes.positive_int,
        default=unset or DEFAULT_MAX_SESSIONS,
        help=f"browser tabs served at once, each an app process of its own (default: {DEFAULT_MAX_SESSIONS})",
    )


def served_command(args: argparse.Namespace) -> str:
    """The shell command each tab runs; UsageError (one line) for what cannot be served."""
    if args.app == "train":
        raise UsageError(
            "serving train would start one training per browser tab: start it with 'rocmtui train ...' "
            "(q, then detach, leaves it training) and serve it with 'rocmtui serve watch'"
        )
    words = [sys.executable, "-m", "rocmtui.serve.tab_process", args.app]
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
        from rocmtui.serve.guarded_server import GuardedServer
    except ImportError:
        raise UsageError("serve needs textual-serve: pip install 'rocmtui[web]'") from None
    warn_if_exposed("serve", args.host, args.port, who="anyone who can reach this port and holds the token")
    server = GuardedServer(
        command,
        host=args.host,
        port=args.port,
        title=f"rocmtui {args.app}",
        public_url=args.public_url,
        max_sessions=args.max_sessions,
        allow_origins=tuple(args.allow_origin or ()),
    )
    server.serve()
    return 0
