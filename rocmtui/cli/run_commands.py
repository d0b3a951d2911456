"""``rocmtui watch``, ``rocmtui runs`` and ``rocmtui stop``: the run folder from outside the training.

None of them loads torch; ``runs`` and ``stop`` load no UI either.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rocmtui.base.errors import UsageError
from rocmtui.base.text import plain
from rocmtui.base.units import fmt_acc
from rocmtui.cli.notify_option import add_notify_flag
from rocmtui.cli.rank_rules import add_rank_rules, rank_rules
from rocmtui.cli.terminal import can_draw
from rocmtui.config import MonitorConfig, TrainConfig
from rocmtui.run.layout import default_runs_dir

if TYPE_CHECKING:
    from rocmtui.run.series_csv import Row

STOP_GRACE_S = 120.0
"""How long ``rocmtui stop`` waits for a run to stop at a step before it signals its process."""
KILL_AFTER_TERM_S = 10.0
"""How long a run's process has after SIGTERM (a checkpoint, then the end) before SIGKILL."""


def grace_seconds(text: str) -> float:
    """``--grace``: seconds, 0 or more, finite."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number; give seconds, 0 or more") from None
    if not 0 <= value < 1e9:
        raise argparse.ArgumentTypeError(f"{text!r} is out of range; give seconds, 0 or more")
    return value


RUNS_DIR_HELP = "where runs are (default: $ROCMTUI_RUNS_DIR, else ./runs)"
CELL_LIMIT = 200
"""Characters of one cell of the runs table (a name or a path longer than that is cut)."""

WATCH_EXAMPLES = """\
examples:
  rocmtui watch                 pick one of the runs under ./runs (the only one: opened at once)
  rocmtui watch runs/20261201-101500-cifar10-simplecnn
  rocmtui watch RUN1 RUN2 RUN3  compare: the curves of each run overlaid; r: the next run's epochs
  rocmtui watch --runs-dir ~/exp
"""


RUNS_EXAMPLES = """\
examples:
  rocmtui runs                              the table (on a terminal): / filter, s sort, space and enter compare
  rocmtui runs --filter 'state=finished lr>1e-3 name~mlp'
  rocmtui runs --filter 'tags=baseline' --json
  rocmtui runs RUN --csv                    every series of RUN as CSV
"""


def add_run_parsers(sub: Any) -> None:
    """The three subcommands, added to the CLI's subparsers."""
    raw = argparse.RawDescriptionHelpFormatter
    watch = sub.add_parser(
        "watch", help="follow a live run, or open a finished one", epilog=WATCH_EXAMPLES, formatter_class=raw
    )
    watch.description = (
        "Show a run's whole history (every epoch, the curves from step 0, the GPU samples) and follow it live. "
        "q leaves the run training; p, s and a confirmed stop reach a run you own."
    )
    watch.add_argument(
        "run",
        metavar="RUN",
        nargs="*",
        default=[],
        help="the run folder (default: the newest live run, else the newest run); several: compare them, "
        "the first is the one followed (progress, GPU, keys); a folder of only ranks: another node's of the job",
    )
    watch.add_argument("--runs-dir", type=Path, default=default_runs_dir(), help=RUNS_DIR_HELP)
    watch.add_argument("--theme", default=MonitorConfig().theme, help="Textual theme (default: %(default)s)")
    add_notify_flag(watch)
    add_rank_rules(watch)

    runs = sub.add_parser(
        "runs", help="the runs under --runs-dir: a table to sort, filter, compare, tag and delete",
        epilog=RUNS_EXAMPLES, formatter_class=raw,
    )  # fmt: skip
    runs.description = (
        "On a terminal, a table of the runs to sort, filter, open compared, tag and delete; piped or with --json, "
        "a listing: state, what trains, epochs, best test accuracy, time, GPU and folder."
    )
    runs.add_argument("--runs-dir", type=Path, default=default_runs_dir(), help=RUNS_DIR_HELP)
    runs.add_argument("--json", action="store_true", help="one JSON array")
    runs.add_argument(
        "--filter", metavar="EXPR", default=None,
        help="only the runs EXPR holds for: terms KEY=VALUE (= != > >= < <= ~ !~) joined by spaces, all of which "
        "must hold; keys: state, name, kind, tags, note, a setting (lr) or a series (best.test_acc, loss)",
    )  # fmt: skip
    runs.add_argument("--plain", action="store_true", help="the plain listing even on a terminal")
    runs.add_argument(
        "run", metavar="RUN", nargs="*", default=[],
        help="with --csv, --card or --ranks: the run (default: the newest); with --ranks, also the folders of the "
        "job's other nodes where each node keeps its own",
    )  # fmt: skip
    runs.add_argument(
        "--csv", metavar="FILE", nargs="?", const="-", default=None,
        help="every series of RUN as CSV (step, time_s, name, value) to FILE, or to stdout",
    )  # fmt: skip
    runs.add_argument(
        "--ranks", action="store_true",
        help="every rank of RUN (a run of several ranks or nodes): node, host, step, step time, heartbeat, and the "
        "straggler or stalled rank named; with --json, one array",
    )  # fmt: skip
    add_rank_rules(runs)
    runs.add_argument(
        "--card", metavar="FILE", nargs="?", const="", default=None,
        help="a run card of RUN (one SVG image: curves, best result, recipe, GPU) to FILE "
        "(default: ./RUN-card.svg)",
    )  # fmt: skip

    stop = sub.add_parser("stop", help="stop a live run with a checkpoint, and wait until it has")
    stop.description = "Ask a live run to stop at its next step; it saves a checkpoint first, as q does."
    _run_argument(stop, "the run folder (default: the newest live run)")
    stop.add_argument("--no-wait", action="store_true", help="return once asked, without waiting")
    stop.add_argument(
        "--grace", type=grace_seconds, default=STOP_GRACE_S, metavar="SECONDS",
        help=f"how long the run has to stop at a step before its process is sent SIGTERM, then SIGKILL "
        f"{KILL_AFTER_TERM_S:g} s later if it still holds the folder (default: %(default)g)",
    )  # fmt: skip


def _run_argument(parser: argparse.ArgumentParser, help_text: str) -> None:
    parser.add_argument("run", metavar="RUN", nargs="?", default=None, help=help_text)
    parser.add_argument("--runs-dir", type=Path, default=default_runs_dir(), help=RUNS_DIR_HELP)


def run_watch(args: argparse.Namespace) -> int:
    from rocmtui.gpu.tail_source import TailSource
    from rocmtui.run.follow import follow
    from rocmtui.run.format import saved_config
    from rocmtui.run.listing import my_runs, run_info
    from rocmtui.run.samples import SampleTail
    from rocmtui.run.tensorboard_log import follow_log
    from rocmtui.ui.state.compare import run_labels
    from rocmtui.ui.state.settings import notify_watched
    from rocmtui.ui.train_app import TrainApp, run_train_app

    runs = [] if args.run else my_runs(args.runs_dir)
    several = len(runs) > 1  # no run named and several of the user's own there: the user picks one
    logs: dict[Path, str] = {}
    """TensorBoard runs among those watched, and their names."""
    specs, nodes = _node_folders(args.run, args.runs_dir)
    named: list[str | None] = list(specs) or [None]
    run_dirs = [] if several else _watched(named, args.runs_dir, logs)
    if nodes:
        _job_folders([str(run_dirs[0]), *map(str, nodes)], args.runs_dir)  # one job's, or refused in one line
    if not can_draw():
        raise UsageError("watch draws in a terminal; for scripts use 'rocmtui runs --json'")
    if several:
        from rocmtui.ui.run_picker import pick_run

        chosen = pick_run(runs, args.runs_dir)
        if chosen is None:
            return 0
        run_dirs = [chosen]
    run_dir = run_dirs[0]
    samples = TailSource(SampleTail(run_dir).poll, history_len=3600)
    samples.catch_up()  # the GPU history is there for the first frame

    def source(config: TrainConfig, emit: Any, control: Any) -> object:
        from rocmtui.launch.script import OutputTail

        if run_dir in logs:
            follow_log(run_dir, emit, control, name=logs[run_dir])
            return None
        output = OutputTail(run_dir, emit)  # a script's output.log, what it printed before and since
        try:
            return follow(run_dir, emit, control)
        finally:
            output.stop()

    def other(path: Path) -> Any:
        if path in logs:
            return lambda emit, control: follow_log(path, emit, control, name=logs[path])
        return lambda emit, control: follow(path, emit, control)

    infos = [run_info(path) for path in run_dirs]
    names = [
        logs.get(path) or (info.name if info.kind == "script" else "")  # a script's track(name=...)
        for path, info in zip(run_dirs, infos, strict=True)
    ]
    labels = run_labels(run_dirs, names=names)
    compare = [(name, other(path)) for name, path in zip(labels[1:], run_dirs[1:], strict=True)]
    app = TrainApp(
        saved_config(run_dir),
        source,
        samples,
        detachable=True,
        theme=args.theme,
        compare=compare,
        label=labels[0],
        run_dir=run_dir,
        notify=notify_watched(args.no_notify, run_dir),
        script=(names[0] or run_dir.name) if infos[0].kind == "script" else None,
    )
    app.train_screen.rank_table.rules = rank_rules(args)
    app.train_screen.rank_table.more_folders = nodes
    code, lines = run_train_app(app)
    print_lines(lines, failed=code not in (0, 129))
    return code


def _node_folders(specs: list[str], runs_dir: Path) -> tuple[list[str], list[Path]]:
    """The runs named, and apart the folders that hold only ranks: the other nodes' of a job whose nodes keep
    their own folders (watched as one job with the run named beside them)."""
    from rocmtui.run.layout import is_run_dir
    from rocmtui.run.rank_streams import is_rank_folder

    nodes = [Path(spec) for spec in specs if is_rank_folder(Path(spec)) and not is_run_dir(Path(spec))]
    runs = [spec for spec in specs if Path(spec) not in nodes]
    if nodes and len(runs) > 1:
        raise UsageError("watch one job with its nodes' folders, or compare runs, not both")
    return runs, nodes


def _watched(specs: list[str | None], runs_dir: Path, logs: dict[Path, str]) -> list[Path]:
    """The folders to watch: each run named (or the newest), and every run of a TensorBoard log folder named (its
    runs' names added to ``logs``)."""
    from rocmtui.run.layout import is_run_dir
    from rocmtui.run.listing import find_run
    from rocmtui.run.tensorboard_log import run_name, tensorboard_runs

    folders: list[Path] = []
    for spec in specs:
        given = Path(spec).expanduser() if spec is not None else None
        found = tensorboard_runs(given) if given is not None and not is_run_dir(given) else []
        for path in found:
            logs[path] = run_name(path, given) if given is not None else path.name
        folders += found or [find_run(spec, runs_dir)]
    return folders


def print_lines(lines: list[str], *, failed: bool) -> None:
    """What stays on the terminal after a UI closes: stderr when it is an error."""
    out = sys.stderr if failed else sys.stdout
    for line in lines:
        print(plain(line), file=out)  # run names, paths and failure messages come from outside


def run_runs(args: argparse.Namespace) -> int:
    from rocmtui.run.listing import find_run, list_runs

    if args.csv is not None and args.card is not None:
        raise UsageError("--csv and --card write one thing each: give one of them")
    if args.ranks:
        return _print_ranks(_job_folders(args.run, args.runs_dir), args)
    if len(args.run) > 1:
        raise UsageError("one run at a time; several folders are one job's nodes, for --ranks")
    args.run = args.run[0] if args.run else None
    log = _tensorboard_log(args.run)
    if log is not None:
        return _tensorboard_runs(log, args)
    if args.csv is not None:
        return _write_csv(find_run(args.run, args.runs_dir), args.csv)
    if args.card is not None:
        return _write_card(find_run(args.run, args.runs_dir), args.card)
    if args.run is not None:
        raise UsageError("a run is named with --csv, --card or --ranks only; 'rocmtui runs' alone lists them all")
    if not args.json and not args.plain and can_draw():
        return _runs_table(args)
    runs = list_runs(args.runs_dir) if args.filter is None else _filtered(args.runs_dir, args.filter)
    _print_listing(runs, as_json=args.json, where=args.runs_dir, filtered=args.filter is not None)
    return 0


def _job_folders(specs: list[str], runs_dir: Path) -> list[Path]:
    """The run named (or the newest) and the folders of the same job's other nodes: any folder with ranks in it,
    refused in one line when its ranks are of another job."""
    from rocmtui.run.listing import find_run
    from rocmtui.run.rank_streams import is_rank_folder, job_of

    if not specs:
        return [find_run(None, runs_dir)]
    folders = [Path(spec) if is_rank_folder(Path(spec)) else find_run(spec, runs_dir) for spec in specs]
    jobs = {folder: job_of(folder) for folder in folders}
    if len(folders) > 1 and (None in jobs.values() or len(set(jobs.values())) > 1):
        named = ", ".join(f"{plain(folder)}: {plain(job) if job else 'no job id'}" for folder, job in jobs.items())
        raise UsageError(f"the folders are not one job's ({named})")
    return folders


def _print_ranks(folders: list[Path], args: argparse.Namespace) -> int:
    """``runs RUN --ranks``: the job's summary line, then its ranks grouped by node (or one JSON array)."""
    from rocmtui.run.format import STATUS
    from rocmtui.run.rank_health import rank_rows, table_lines
    from rocmtui.run.rank_streams import read_ranks
    from rocmtui.run.status import effective, read_status

    run_dir = next((folder for folder in folders if (folder / STATUS).is_file()), folders[0])
    views = list(read_ranks(*folders).values())
    status = read_status(run_dir)
    live = status is not None and effective(run_dir, status).live
    rules = rank_rules(args)
    rows = rank_rows(views, time.time(), rules, live=live)
    if args.json:
        from rocmtui.codec import encode_json

        print(encode_json(rows, indent=1).decode())
        return 0
    if not rows:
        print(f"{plain(run_dir)}: no ranks (a run of one process writes none)")
        return 0
    device = {v.rank: v.started.device if v.started else "" for v in views}
    for kind, line in table_lines(views, rows, rules.window, lambda v: device[v.rank], heads=True):
        print(line if kind in ("summary", "node") else "  " + line)
    return 0


def _print_listing(runs: list[Any], *, as_json: bool, where: Path, filtered: bool = False) -> None:
    """The plain listing (a header, then a line a run, its columns aligned, the folder last), or one JSON array."""
    from rocmtui.run.listing import listing_cells

    if as_json:
        from rocmtui.codec import encode_json

        print(encode_json([info.to_dict() for info in runs], indent=1).decode())
        return
    if not runs:
        print(f"no runs under {plain(where)}" + (" match the filter" if filtered else ""))
        return

    rows: list[tuple[str, ...]] = [("STATE", "STARTED", "WHAT", "PROGRESS", "RESULT", "TIME", "DEVICE", "FOLDER")]
    rows += [listing_cells(info, CELL_LIMIT) for info in runs]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False)) + "  " + row[-1])


def _filtered(runs_dir: Path, text: str) -> list[Any]:
    """The listings of the runs the filter holds for; each run's series read from its stream only when the filter
    names a key that is neither a field of the listing nor a setting."""
    from rocmtui.run.run_filter import parse_filter
    from rocmtui.run.run_table import fold_metrics, load_rows, names_series, select

    run_filter = parse_filter(text)
    rows = load_rows(runs_dir)
    if names_series(run_filter.keys, rows):
        rows = [fold_metrics(row) for row in rows]
    return [row.info for row in select(rows, run_filter)]


def _runs_table(args: argparse.Namespace) -> int:
    """The table on the terminal; the runs chosen there open compared in ``watch``."""
    from rocmtui.run.run_table import load_rows

    return _show_table(load_rows(args.runs_dir), args.runs_dir, args)


def _show_table(rows: list[Any], where: Path, args: argparse.Namespace) -> int:
    """The table of ``rows``; the runs chosen there open compared in ``watch``."""
    from rocmtui.run.run_filter import parse_filter
    from rocmtui.ui.runs_table import show_runs_table

    chosen = show_runs_table(rows, where, parse_filter(args.filter or ""))
    if not chosen:
        return 0
    watch = argparse.Namespace(
        run=[str(path) for path in chosen], runs_dir=args.runs_dir, theme=MonitorConfig().theme, no_notify=False
    )
    return run_watch(watch)


def run_stop(args: argparse.Namespace) -> int:
    from rocmtui.run.control import send_command
    from rocmtui.run.listing import find_run, run_info

    run_dir = find_run(args.run, args.runs_dir, live_only=True)
    send_command(run_dir, "stop")
    if args.no_wait:
        print(f"rocmtui: asked {plain(run_dir)} to stop")
        return 0
    asked_at = time.time()
    print(f"rocmtui: asked {plain(run_dir)} to stop at its next step; waiting for it to end", flush=True)
    elsewhere = _writer_elsewhere(run_dir)
    if elsewhere is not None:  # another node of a job: its lock and processes are not this host's to see
        if not _ended(run_dir, args.grace):
            raise UsageError(
                f"{plain(run_dir)} did not stop within {args.grace:g} s; its writer runs on {plain(elsewhere)}: "
                "stop it there (rocmtui stop, or SIGTERM to its process)"
            )
    elif not _released(run_dir, args.grace):
        _signal_writer(run_dir, signal.SIGTERM, f"did not stop within {args.grace:g} s")
        if not _released(run_dir, KILL_AFTER_TERM_S):
            _signal_writer(run_dir, signal.SIGKILL, f"still held {KILL_AFTER_TERM_S:g} s after SIGTERM")
            if not _released(run_dir, KILL_AFTER_TERM_S):
                raise UsageError(f"{plain(run_dir)} is still held after SIGKILL")
            print(f"rocmtui: {plain(run_dir)} killed; what it wrote up to its last step stays readable")
            return 1
    info = run_info(run_dir)
    where = f"epoch {info.epoch}/{info.epochs}" if info.epochs else f"step {info.step:,}" if info.step else "its start"
    best = "" if info.best_acc is None else f", best test accuracy {fmt_acc(info.best_acc)}"
    folder = plain(run_dir)
    saved = f"checkpoint saved in {folder}" if _saved_since(run_dir, asked_at) else f"no checkpoint written; {folder}"
    print(f"rocmtui: {plain(info.state)} at {where}{best}; {saved}")
    return 0 if info.state in ("stopped", "finished") else 1


def _writer_elsewhere(run_dir: Path) -> str | None:
    """The host the run's writer is on, when it is not this one (the folder is shared between nodes)."""
    import socket

    from rocmtui.run.status import read_status

    status = read_status(run_dir)
    return status.host if status is not None and status.host != socket.gethostname() else None


def _ended(run_dir: Path, within_s: float) -> bool:
    """Whether the run's status leaves the live states within ``within_s`` seconds (a writer on another host)."""
    from rocmtui.run.status import read_status

    deadline = time.monotonic() + within_s
    while (status := read_status(run_dir)) is not None and status.live:
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.2)
    return True


def _released(run_dir: Path, within_s: float) -> bool:
    """Whether the folder's lock is free within ``within_s`` seconds (polled: the writer is another process)."""
    from rocmtui.run.lock import is_locked

    deadline = time.monotonic() + within_s
    while is_locked(run_dir):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.1)
    return True


def _signal_writer(run_dir: Path, signum: signal.Signals, why: str) -> None:
    """Send ``signum`` to the processes that hold the folder's lock (the kernel's list, never a pid read from
    the folder); one line on stderr saying so."""
    from rocmtui.run.lock import lock_holders

    holders = lock_holders(run_dir)
    if not holders:
        return  # let go in the meantime
    print(f"rocmtui: {plain(run_dir)} {why}: sending {signum.name} to process {', '.join(map(str, sorted(holders)))}",
          file=sys.stderr, flush=True)  # fmt: skip
    for pid in holders:
        try:
            os.kill(pid, signum)
        except ProcessLookupError:
            continue
        except PermissionError:
            raise UsageError(f"{plain(run_dir)} is written by process {pid} of another user: not yours to end") from (
                None
            )


def _tensorboard_log(spec: str | None) -> Path | None:
    """``spec`` when it names a TensorBoard log folder (event files in it or under it) rather than a run folder."""
    from rocmtui.run.layout import is_run_dir
    from rocmtui.run.tensorboard_log import is_tensorboard_log

    if spec is None:
        return None
    path = Path(spec).expanduser()
    return path if not is_run_dir(path) and is_tensorboard_log(path) else None


def _tensorboard_runs(logdir: Path, args: argparse.Namespace) -> int:
    """``runs LOGDIR``: its TensorBoard runs listed; with ``--csv``, the scalars of its one run (or of the run
    named by a folder under it)."""
    from rocmtui.run.tensorboard_log import csv_rows, listing, tensorboard_runs

    found = tensorboard_runs(logdir)
    if args.card is not None:
        raise UsageError("a run card is drawn from a rocmtui run; a TensorBoard log has --csv")
    if args.csv is not None:
        if len(found) != 1:
            names = ", ".join(plain(path.relative_to(logdir)) for path in found[:5])
            raise UsageError(
                f"{plain(logdir)} holds {len(found)} TensorBoard runs ({names}{', ...' if len(found) > 5 else ''}); "
                "give one of their folders"
            )
        return _write_rows(found[0], csv_rows(found[0]), args.csv)
    infos = [listing(path, logdir) for path in found]
    if not args.json and not args.plain and can_draw():
        from rocmtui.run.format import read_notes
        from rocmtui.run.run_table import RunRow

        rows = [RunRow(path, info, {}, read_notes(path)) for path, info in zip(found, infos, strict=True)]
        return _show_table(rows, logdir, args)
    _print_listing(infos, as_json=args.json, where=logdir)
    return 0


def _write_csv(run_dir: Path, where: str) -> int:
    """Every series of the run as CSV, to ``where`` (``-``: stdout), written whole or not at all."""
    from rocmtui.run.series_csv import rows
    from rocmtui.run.stream import read_events

    return _write_rows(run_dir, rows(read_events(run_dir)), where)


def _write_rows(run_dir: Path, series: Iterable[Row], where: str) -> int:
    """CSV rows to ``where`` (``-``: stdout), written whole or not at all."""
    import io

    from rocmtui.run.series_csv import write_rows

    text = io.StringIO()
    count = write_rows(text, series, terminal=where == "-")
    if where == "-":
        sys.stdout.write(text.getvalue())
        return 0
    path = Path(where)
    _write_whole(path, text.getvalue().encode())
    print(f"rocmtui: {count:,} values of {plain(run_dir)} in {plain(path)}")
    return 0


def _write_card(run_dir: Path, where: str) -> int:
    """The run's card as one SVG file (default ``./<run folder>-card.svg``), written whole or not at all."""
    from rocmtui.export.card_data import read_card
    from rocmtui.export.card_svg import card_svg

    svg = card_svg(read_card(run_dir))
    path = Path(where) if where else Path(f"{run_dir.resolve().name}-card.svg")
    _write_whole(path, svg.encode())
    print(f"rocmtui: run card of {plain(run_dir)} in {plain(path)}")
    return 0


def _write_whole(path: Path, data: bytes) -> None:
    """``data`` into ``path``, whole or not at all; a one-line error when it cannot be written."""
    import stat

    from rocmtui.base.files import atomic_write, file_kind

    try:
        mode = os.stat(path).st_mode
    except OSError:
        mode = None  # not there yet (or not reachable: the write below says why)
    if mode is not None and not stat.S_ISREG(mode):  # a rename would put a file in place of a FIFO or a device
        raise UsageError(f"cannot write {plain(path)}: not a regular file ({file_kind(mode)})")
    try:
        atomic_write(path, data)
    except ValueError:  # a path without a file name: "", ".", "/"
        raise UsageError(f"cannot write {plain(path)}: give a file name") from None
    except OSError as err:
        raise UsageError(f"cannot write {plain(path)}: {err.strerror or err}") from None


def _saved_since(run_dir: Path, since: float) -> bool:
    """Whether the run wrote a checkpoint after ``since``: what a stop claims is what the folder shows."""
    for path in run_dir.glob("checkpoint*"):
        with contextlib.suppress(OSError):
            if path.is_file() and not path.is_symlink() and path.stat().st_mtime >= since - 1.0:
                return True
    return False
