"""The command line's grammar: every subcommand, flag, help text and example."""

from __future__ import annotations

import argparse
import re
import shutil
import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from rocmtui.base.text import plain
from rocmtui.cli import argtypes
from rocmtui.cli.lazy_command import deferred
from rocmtui.cli.telemetry_flags import add_telemetry_flags
from rocmtui.config import MODELS, MonitorConfig
from rocmtui.train.recipes import FAST_MEASURED, RECIPES

EXIT_USAGE = 2


class _VersionAction(argparse.Action):
    """``--version``, reading the installed version only when asked (argparse's own wants it up front)."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, **_: object) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help="show the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        import rocmtui

        print(f"rocmtui {rocmtui.__version__}")  # on stdout, as argparse's own version action
        parser.exit()


HELP_WIDTH = 80
"""Columns a help text is wrapped to at most (argparse's own default is the whole terminal's width)."""


class _WrappedRaw(argparse.RawDescriptionHelpFormatter):
    """Descriptions and examples laid out as written, each line too long for the width wrapped: an example's
    description continues under itself, prose under its own indent."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        return "\n".join(wrap_line(indent + line, width) for line in text.splitlines()) + (
            "\n" if text.endswith("\n") else ""
        )


EXAMPLE = re.compile(r"^(\s+\S.*?\s{2,})(\S.*)$")
"""An example line: its command, two or more blanks, then what it does."""


def wrap_line(line: str, width: int) -> str:
    """``line`` as is when it fits in ``width``, else wrapped under its description's (or its own) indent."""
    if len(line) <= width:
        return line
    example = EXAMPLE.match(line)
    if example and len(example.group(1)) < width * 0.7:
        hang = " " * len(example.group(1))
        return _fill(example.group(2), width, example.group(1), hang)
    lead = line[: len(line) - len(line.lstrip())]
    command = line.lstrip().startswith("rocmtui ")  # a command alone: its continuation indented further
    return _fill(line.strip(), width, lead, lead + "    " if command else lead)


def _fill(text: str, width: int, first: str, rest: str) -> str:
    """``text`` wrapped at blanks only (an option such as ``--max-steps`` is never split)."""
    return textwrap.fill(
        text, width, initial_indent=first, subsequent_indent=rest, break_on_hyphens=False, break_long_words=False
    )


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line on stderr and exit code 2, and whose help is wrapped at
    ``HELP_WIDTH`` columns (or the terminal's, when narrower)."""

    def _get_formatter(self) -> argparse.HelpFormatter:
        width = min(HELP_WIDTH, shutil.get_terminal_size().columns)
        given = self.formatter_class
        raw = isinstance(given, type) and issubclass(given, argparse.RawDescriptionHelpFormatter)
        formatter: type[argparse.HelpFormatter] = _WrappedRaw if raw else argparse.HelpFormatter
        return formatter(prog=self.prog, width=width - 2)  # argparse keeps 2 columns free, as here

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {plain(message)} (see '{self.prog} --help')\n")


TRAIN_EXAMPLES = f"""\
examples:
  rocmtui train cifar                          the ROCm guide's workload, live (offline: the bundled sample)
  rocmtui train cifar --recipe fast            fastnet: {FAST_MEASURED.summary} (with TTA)
  rocmtui train cifar --recipe fast --epochs 10   a recipe, one option changed
  rocmtui train cifar --headless > train.log   one line per epoch, for logs and CI
  rocmtui train cifar --resume runs/20261130-101500-cifar10-simplecnn
  rocmtui train mnist --data-dir ~/data --download
"""

MONITOR_EXAMPLES = """\
examples:
  rocmtui monitor                       live GPU panel (q quits, +/- change the interval)
  rocmtui monitor --once                one table, then exit
  rocmtui monitor --json --count 10     ten JSON lines, one per sample, for scripts
  rocmtui monitor --backend sysfs       read the amdgpu files directly, without ROCm SMI
  rocmtui monitor --hosts n1:9400,n2:5000   the GPUs of many machines
  rocmtui monitor --hostfile hosts --once   one table: every host's GPUs
  rocmtui monitor --prometheus prom:9090    every GPU a Prometheus knows
"""

BENCH_EXAMPLES = """\
examples:
  rocmtui bench                 the guide's loop against rocmtui's engine, 5 epochs each
  rocmtui bench --quick         one short epoch each, for a first look
  rocmtui bench --json          one JSON object, to share or compare
  rocmtui bench --anchor a.json --anchor b.json   other programs' times (JSONs any script writes) beside them
  rocmtui bench --recipe none   leave out the fast recipe's run (on a GPU: its time to 94%)
"""

DOCTOR_EXAMPLES = """\
examples:
  rocmtui doctor           PASS / WARN / FAIL for torch, GPUs, drivers and telemetry
  rocmtui doctor --json    the same checks as JSON
"""


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The command line. Whole by default (``--help``, the tests); given the arguments about to be parsed, when
    they start with a command's name, only that command's parsers are built (argparse parses no other), so a
    start such as ``rocmtui monitor``'s pays neither for the other commands' flags nor for their modules."""
    parser = _Parser(
        prog="rocmtui",
        description="Train PyTorch models live in the terminal and watch the GPU (AMD ROCm, NVIDIA, CPU).",
        epilog="Run 'rocmtui COMMAND --help' for a command's flags and examples.",
    )
    parser.add_argument("--version", action=_VersionAction)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    named = argv[0] if argv else None
    known = any(named in names for names, _ in PARSERS)
    for names, add in PARSERS:
        if not known or named in names:
            add(sub)
    return parser


_RAW = argparse.RawDescriptionHelpFormatter


def _add_train_parser(sub: argparse._SubParsersAction[_Parser]) -> None:
    from rocmtui.cli.train_options import add_recipe_option, add_train_options, resume_note

    train = sub.add_parser(
        "train",
        help="train a model live, with loss curves and the GPU panel",
        epilog=TRAIN_EXAMPLES,
        formatter_class=_RAW,
    )
    train.description = "Train a model on a dataset in a live terminal UI (or --headless).\n\n" + textwrap.fill(
        resume_note(), width=88
    )
    add_train_options(train)
    add_recipe_option(train)
    train.add_argument(
        "--headless", action="store_true", help="no UI: one line per epoch (automatic when stdout is not a terminal)"
    )
    train.add_argument("--exit-on-finish", action="store_true", help="close the UI when training ends")
    train.add_argument(
        "--force", action="store_true", help="allow --nproc above the CPU cores (each rank is a process of its own)"
    )
    train.add_argument(
        "--stop-on-hangup",
        action="store_true",
        help="stop the run (with a checkpoint) when the terminal goes away or the UI gets SIGTERM, not train on",
    )
    train.add_argument(
        "--detach", action="store_true", help="with --headless: train on when the terminal goes away (SIGHUP)"
    )
    train.add_argument("--theme", default=MonitorConfig().theme, help="Textual theme (default: %(default)s)")
    from rocmtui.cli.notify_option import add_notify_flag  # the monitor's start loads no other command's module

    add_notify_flag(train)
    add_telemetry_flags(train, run=True)


def _add_monitor_parser(sub: argparse._SubParsersAction[_Parser]) -> None:
    monitor = sub.add_parser(
        "monitor", help="the GPU panel alone, as a standing monitor", epilog=MONITOR_EXAMPLES, formatter_class=_RAW
    )
    monitor.description = "Watch GPU utilization, memory, temperature, power and processes (and the host's CPU/RAM)."
    output = monitor.add_mutually_exclusive_group()
    output.add_argument("--once", action="store_true", help="print one table and exit (no UI, no torch)")
    output.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object per sample (no UI, no torch; automatic when stdout is not a terminal)",
    )
    monitor.add_argument(
        "--count",
        type=argtypes.positive_int,
        default=None,
        help="with --json: stop after N samples (default: run until Ctrl-C)",
    )
    monitor.add_argument("--theme", default=MonitorConfig().theme, help="Textual theme (default: %(default)s)")
    monitor.add_argument(
        "--record", metavar="FILE", default=None, help="also append every sample to FILE as JSON lines (for --replay)"
    )
    monitor.add_argument(
        "--replay",
        metavar="FILE",
        default=None,
        help="show a recording (--record or --json output) instead of this machine's GPUs; it loops",
    )
    monitor.add_argument(
        "--speed",
        type=argtypes.positive_float,
        default=None,
        help="with --replay: play X times as fast as recorded (default: 1)",
    )
    monitor.add_argument(
        "--readonly", action="store_true", help="no kill keys: the process table can be looked at, never signalled"
    )
    add_telemetry_flags(monitor)
    _add_cluster_flags(monitor)


def _add_cluster_flags(monitor: argparse.ArgumentParser) -> None:
    """The cluster view's sources: exporters scraped directly, or a Prometheus server (docs/cluster.md)."""
    cluster = monitor.add_argument_group(
        "cluster",
        "watch the GPUs of many machines through their Prometheus exporters (dcgm-exporter, AMD "
        "device-metrics-exporter, rocmtui export); --interval defaults to 2 s here",
    )
    cluster.add_argument(
        "--hosts", metavar="HOST:PORT[,...]", default=None, help="exporters to scrape (/metrics), comma-separated"
    )
    cluster.add_argument(
        "--hostfile", metavar="FILE", default=None, help="exporters to scrape: one HOST:PORT a line, # comments"
    )
    cluster.add_argument(
        "--prometheus", metavar="URL", default=None, help="ask this Prometheus server for every GPU it knows"
    )
    cluster.add_argument(
        "--token-file", metavar="FILE", default=None, help="send the bearer token in FILE with every request"
    )


def _add_bench_parser(sub: argparse._SubParsersAction[_Parser]) -> None:
    bench = sub.add_parser(
        "bench",
        help="the ROCm guide's training loop against rocmtui's engine",
        epilog=BENCH_EXAMPLES,
        formatter_class=_RAW,
    )
    bench.description = (
        "Run the reference CIFAR-10 workload twice in one process: the guide's DataLoader loop and "
        "rocmtui's GPU-resident engine, then print one shareable line each and the speedup."
    )
    bench.add_argument(
        "--epochs", type=argtypes.positive_int, default=5, help="epochs for each run (default: %(default)s)"
    )
    bench.add_argument(
        "--model",
        type=argtypes.choice(MODELS, "model"),
        default="simplecnn",
        help="model for both runs (default: %(default)s)",
    )
    bench.add_argument("--quick", action="store_true", help="a short run (1 epoch, capped steps) for a first look")
    bench.add_argument("--json", action="store_true", help="print one JSON object instead of text lines")
    bench.add_argument(
        "--data-dir", type=argtypes.existing_dir, default=None, help="dataset folder (torchvision layout)"
    )
    bench.add_argument("--device", type=argtypes.device, default="auto", help="auto, cpu, cuda or cuda:N")
    bench.add_argument(
        "--fast", action="store_true", help="use rocmtui's fastest settings for its run (CUDA graph on a GPU)"
    )
    bench.add_argument(
        "--recipe",
        type=argtypes.choice((*RECIPES, "none"), "recipe"),
        default=None,
        help="then run this recipe and report its time to 94%% (default: fast on a GPU, none on the CPU)",
    )
    bench.add_argument(
        "--anchor",
        type=Path,
        action="append",
        default=[],
        metavar="FILE",
        help='print another program\'s figures beside the recipe\'s: a JSON {"name": ..., "times_s": [...], '
        '"accuracies": [...]} written by any script; give it once for each program',
    )


def _add_doctor_parser(sub: argparse._SubParsersAction[_Parser]) -> None:
    doctor = sub.add_parser(
        "doctor",
        help="check torch, GPUs, drivers and telemetry; say how to fix what fails",
        epilog=DOCTOR_EXAMPLES,
        formatter_class=_RAW,
    )
    doctor.description = "Check this machine for training and monitoring; exit 0 when nothing FAILs."
    doctor.add_argument("--json", action="store_true", help="print the checks as JSON")


PARSERS: tuple[tuple[tuple[str, ...], Callable[[Any], None]], ...] = (
    (("train",), _add_train_parser),
    (("monitor",), _add_monitor_parser),
    (("bench",), _add_bench_parser),
    (("doctor",), _add_doctor_parser),
    (("watch", "runs", "stop"), deferred("rocmtui.cli.run_commands", "add_run_parsers")),
    (("run",), deferred("rocmtui.cli.script_command", "add_script_parser")),
    (("demo", "export", "serve"), deferred("rocmtui.cli.web_commands", "add_web_parsers")),
)
"""Each command's names, with what adds their parsers, in the order ``--help`` lists them."""
