"""``rocmtui export``: Prometheus metrics of this machine's GPUs and of the live runs under --runs-dir.

While a run on this machine is live under --runs-dir and records GPU samples, those samples are served
(its trainer already polls the GPU: no second poller); otherwise one sampler polls the GPUs at ``--interval``.
Either way a scrape reads the newest sample and causes no GPU read.
"""

from __future__ import annotations

import argparse
import sys
import threading
from pathlib import Path
from typing import Any

from rocmtui.base.errors import UsageError
from rocmtui.cli import argtypes
from rocmtui.cli.listen import warn_if_exposed
from rocmtui.cli.run_commands import RUNS_DIR_HELP
from rocmtui.cli.telemetry_flags import add_telemetry_flags, interval_given
from rocmtui.config import MonitorConfig
from rocmtui.run.layout import default_runs_dir

DEFAULT_PORT = 9400

EXPORT_EXAMPLES = """\
examples:
  rocmtui export                          http://127.0.0.1:9400/metrics, runs under ./runs
  rocmtui export --port 9500 --runs-dir ~/exp
  rocmtui export --host 0.0.0.0           for a Prometheus on another machine (no authentication)
"""


def add_export_parser(sub: Any) -> None:
    export = sub.add_parser(
        "export",
        help="Prometheus metrics of the GPUs and the live runs",
        epilog=EXPORT_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    export.description = (
        "Serve /metrics for Prometheus (pip install 'rocmtui[export]'): GPU utilization, memory, temperatures, "
        "power, clocks, host CPU and RAM, and each live run's state, loss, speed and accuracy. Listens on "
        "127.0.0.1 unless --host says otherwise; there is no authentication."
    )
    export.add_argument("--host", default="127.0.0.1", help="address to listen on (default: %(default)s)")
    export.add_argument(
        "--port", type=argtypes.non_negative_int, default=DEFAULT_PORT, help="TCP port (default: %(default)s)"
    )
    export.add_argument("--runs-dir", type=Path, default=default_runs_dir(), help=RUNS_DIR_HELP)
    add_telemetry_flags(export, history=False)


def run_export(args: argparse.Namespace, stop: threading.Event | None = None) -> int:
    """Serve until Ctrl-C (or ``stop``, for tests)."""
    try:
        from rocmtui.export.metrics_server import serve
    except ImportError:
        raise UsageError("export needs prometheus_client: pip install 'rocmtui[export]'") from None
    from rocmtui.export.gpu_source import ExportSamples
    from rocmtui.gpu.detect import open_sampler

    config = MonitorConfig(interval_s=interval_given(args), backend=args.backend)
    samples = ExportSamples(args.runs_dir, lambda: open_sampler(config))
    try:
        endpoint = serve(samples.latest, host=args.host, port=args.port, runs_dir=args.runs_dir)
    except OSError as err:
        raise UsageError(f"cannot listen on {args.host}:{args.port}: {err.strerror or err}") from None
    warn_if_exposed("export", args.host, endpoint.port)
    samples.start()
    print(f"rocmtui export: http://{args.host}:{endpoint.port}/metrics (Ctrl-C stops)", file=sys.stderr)
    try:
        (stop or threading.Event()).wait()
    except KeyboardInterrupt:
        pass
    finally:
        endpoint.close()
        samples.stop()
    return 0
