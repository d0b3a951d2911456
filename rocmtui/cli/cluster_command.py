"""``rocmtui monitor --hosts / --hostfile / --prometheus``: the cluster view, its ``--once`` and ``--json``."""

from __future__ import annotations

import argparse
import gc
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from rocmtui.base import startup_gc
from rocmtui.base.errors import UsageError
from rocmtui.cli.terminal import can_draw
from rocmtui.gpu.cluster.cluster_source import DEFAULT_INTERVAL_S, ClusterSource, RoundReader

if TYPE_CHECKING:
    from rocmtui.gpu.cluster.scrape import Target

LOCAL_ONLY = ("--record", "--replay", "--speed", "--readonly")
YOUNG_GC_OBJECTS = 20_000
"""The cyclic collector's first threshold in the cluster view (Python's: 700). A round of 256 changed pages makes
about 100,000 objects, nearly all freed at once by their counts; at 700 the collector ran about 45 young passes,
4 older ones and every few rounds a full one (over the 30 rounds of history) a round: about 29 ms of CPU a round
of 2 s, against about 11 ms at 20,000 (256 hosts of 8 GPUs, every value new each round, on the 2-core CPU box)."""


def run_cluster(args: argparse.Namespace) -> int:
    """Check the options, build the reader, then one table, JSON lines or the screen."""
    _refuse_local_options(args)
    gc.set_threshold(YOUNG_GC_OBJECTS, *gc.get_threshold()[1:])
    reader = build_reader(args)
    interval = DEFAULT_INTERVAL_S if args.interval is None else float(args.interval)
    source = ClusterSource(reader, interval_s=interval)
    if args.once or args.json or not can_draw():
        startup_gc.resume()
        try:
            return print_once(source) if args.once else stream_json(source, args.count)
        finally:
            source.stop()
    from rocmtui.ui.cluster_app import run_cluster_app
    from rocmtui.ui.look.themes import check_theme

    check_theme(args.theme)
    return run_cluster_app(source, theme=args.theme)


def _refuse_local_options(args: argparse.Namespace) -> None:
    given = {"--record": args.record, "--replay": args.replay, "--speed": args.speed, "--readonly": args.readonly}
    for flag in LOCAL_ONLY:
        if given[flag]:
            raise UsageError(f"{flag} goes with this machine's monitor, not with --hosts, --hostfile or --prometheus")
    if args.prometheus is not None and (args.hosts is not None or args.hostfile is not None):
        raise UsageError("--prometheus asks one server for every GPU: give it alone, without --hosts or --hostfile")


def build_reader(args: argparse.Namespace) -> RoundReader:
    """A Scraper over the hosts given, or a PrometheusReader; UsageError (one line) for bad input."""
    from rocmtui.gpu.cluster.exposition import require_parser
    from rocmtui.gpu.cluster.fetch import read_token

    token = read_token(args.token_file) if args.token_file is not None else None
    if args.prometheus is not None:
        from rocmtui.gpu.cluster.prom_query import PrometheusReader

        return PrometheusReader(_prometheus_url(args.prometheus), token=token)
    require_parser()  # one line now, not a failure per host later
    from rocmtui.gpu.cluster.scrape import Scraper

    return Scraper(_targets(args), token=token)


def _prometheus_url(text: str) -> str:
    from rocmtui.gpu.cluster.targets import TargetError, parse_target

    try:
        target = parse_target(text)
    except TargetError as err:
        raise UsageError(f"--prometheus {err}") from None
    del target  # checked only: the URL is the server's root (or the path prefix it is served under)
    return (text if "://" in text else f"http://{text}").rstrip("/")


def _targets(args: argparse.Namespace) -> list[Target]:
    from rocmtui.gpu.cluster.targets import TargetError, hostfile_lines, parse_targets

    texts: list[str] = []
    if args.hosts is not None:
        texts.extend(args.hosts.split(","))
    if args.hostfile is not None:
        try:
            texts.extend(hostfile_lines(Path(args.hostfile)))
        except FileNotFoundError:
            raise UsageError(f"--hostfile {args.hostfile}: no such file") from None
        except OSError as err:
            raise UsageError(f"--hostfile {args.hostfile}: {err.strerror or err}") from None
        except UsageError as err:  # a FIFO, a device, a folder, too large: the line names the option too
            raise UsageError(f"--hostfile {err}") from None
    try:
        targets = parse_targets(texts)
    except TargetError as err:
        raise UsageError(f"{'--hosts' if args.hosts is not None else '--hostfile'}: {err}") from None
    if not targets:
        raise UsageError("no host to watch: give --hosts HOST:PORT or a --hostfile with one HOST:PORT a line")
    return targets


def print_once(source: ClusterSource, out: TextIO | None = None) -> int:
    """One round as text."""
    from rocmtui.gpu.cluster.cluster_summary import format_round

    (out or sys.stdout).write(format_round(source.round_now()))
    return 0


def stream_json(source: ClusterSource, count: int | None, out: TextIO | None = None) -> int:
    """One JSON object per round, every host in it, ``count`` times or until Ctrl-C (exit 130)."""
    from rocmtui.gpu.cluster.reading import dumps
    from rocmtui.gpu.headless_output import write_lines

    return write_lines(lambda: dumps(source.round_now()), lambda: source.interval_s, count, out)
