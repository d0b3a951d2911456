"""Command line: parses arguments, builds configs, starts the app or a headless path.

torch and textual are imported lazily, inside the subcommand that needs them, so that
``rocmtui monitor --once`` and ``rocmtui --help`` stay fast and torch-free.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NoReturn

from rocmtui import __version__
from rocmtui.config import (
    AMP_MODES,
    BACKENDS,
    DATASETS,
    MODELS,
    OPTIMIZERS,
    SCHEDULES,
    MonitorConfig,
    TrainConfig,
)
from rocmtui.errors import UsageError

EXIT_USAGE = 2


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line on stderr and exit code 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number; give a positive integer") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be a positive integer (1 or more)")
    return value


def _non_negative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be 0 or more")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number; give a positive number such as 1e-3") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be a positive finite number, such as 1e-3")
    return value


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number between 0 and 1") from None
    if not 0.0 <= value < 1.0:
        raise argparse.ArgumentTypeError(f"{text!r} must be at least 0 and below 1")
    return value


def _non_negative_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be a finite number, 0 or more")
    return value


def _interval(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not MonitorConfig.MIN_INTERVAL_S <= value <= MonitorConfig.MAX_INTERVAL_S:
        raise argparse.ArgumentTypeError(
            f"{text!r} is out of range: give {MonitorConfig.MIN_INTERVAL_S:g} to "
            f"{MonitorConfig.MAX_INTERVAL_S:g} seconds"
        )
    return value


def _existing_dir(text: str) -> Path:
    path = Path(text).expanduser()
    if not path.is_dir():
        raise argparse.ArgumentTypeError(f"data folder {text!r} does not exist or is not a folder")
    return path


def _existing_path(text: str) -> Path:
    path = Path(text).expanduser()
    if not path.exists():
        raise argparse.ArgumentTypeError(f"{text!r} does not exist; give a run folder or a checkpoint-*.pt file")
    return path


def _device(text: str) -> str:
    value = text.strip().lower()
    if value in ("auto", "cpu", "cuda") or (value.startswith("cuda:") and value[5:].isdigit()):
        return value
    raise argparse.ArgumentTypeError(f"{text!r} is not a device; use auto, cpu, cuda or cuda:N (ROCm uses cuda too)")


def _choice(options: Sequence[str], what: str) -> Callable[[str], str]:
    """A type function that names the allowed values in its one-line error."""

    def parse(text: str) -> str:
        value = text.strip().lower()
        if value not in options:
            raise argparse.ArgumentTypeError(f"unknown {what} {text!r}; choose from {', '.join(options)}")
        return value

    parse.__name__ = what
    return parse


TRAIN_EXAMPLES = """\
examples:
  rocmtui train cifar                          the ROCm guide's workload, live (offline: the bundled sample)
  rocmtui train cifar --model fastnet --epochs 10 --batch-size 512 --optimizer sgd --lr 0.2 \\
      --schedule onecycle --label-smoothing 0.2 --augment --amp bf16
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
"""

BENCH_EXAMPLES = """\
examples:
  rocmtui bench                 the guide's loop against rocmtui's engine, 5 epochs each
  rocmtui bench --quick         one short epoch each, for a first look
  rocmtui bench --json          one JSON object, to share or compare
"""

DOCTOR_EXAMPLES = """\
examples:
  rocmtui doctor           PASS / WARN / FAIL for torch, GPUs, drivers and telemetry
  rocmtui doctor --json    the same checks as JSON
"""


def build_parser() -> argparse.ArgumentParser:
    """The whole command line; also used by the tests."""
    parser = _Parser(
        prog="rocmtui",
        description="Train PyTorch models live in the terminal and watch the GPU (AMD ROCm, NVIDIA, CPU).",
        epilog="Run 'rocmtui COMMAND --help' for a command's flags and examples.",
    )
    parser.add_argument("--version", action="version", version=f"rocmtui {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    _add_train_parser(sub)
    _add_monitor_parser(sub)
    _add_bench_parser(sub)
    _add_doctor_parser(sub)
    return parser


_Sub = argparse._SubParsersAction  # the type argparse gives add_subparsers()
_RAW = argparse.RawDescriptionHelpFormatter


def _add_train_parser(sub: _Sub) -> None:
    train = sub.add_parser(
        "train",
        help="train a model live, with loss curves and the GPU panel",
        epilog=TRAIN_EXAMPLES,
        formatter_class=_RAW,
    )
    train.description = "Train a model on a dataset in a live terminal UI (or --headless)."
    train.add_argument(
        "dataset",
        metavar="DATASET",
        type=_choice(tuple(DATASETS), "dataset"),
        help=f"dataset to train on: {', '.join(DATASETS)}",
    )
    defaults = TrainConfig()
    train.add_argument(
        "--model",
        type=_choice(MODELS, "model"),
        default=defaults.model,
        help=f"model: {', '.join(MODELS)} (default: %(default)s, the ROCm guide's CNN)",
    )
    train.add_argument(
        "--epochs",
        type=_positive_int,
        default=defaults.epochs,
        help="epochs to train, a positive integer (default: %(default)s)",
    )
    train.add_argument(
        "--batch-size",
        type=_positive_int,
        default=defaults.batch_size,
        help="images per step, a positive integer (default: %(default)s)",
    )
    train.add_argument(
        "--lr",
        type=_positive_float,
        default=defaults.lr,
        help="peak learning rate, a positive number (default: %(default)s)",
    )
    train.add_argument(
        "--optimizer",
        type=_choice(OPTIMIZERS, "optimizer"),
        default=defaults.optimizer,
        help=f"optimizer: {', '.join(OPTIMIZERS)} (sgd is Nesterov, momentum 0.9; default: %(default)s)",
    )
    train.add_argument(
        "--schedule",
        type=_choice(SCHEDULES, "schedule"),
        default=defaults.schedule,
        help=f"learning-rate schedule: {', '.join(SCHEDULES)} (default: %(default)s)",
    )
    train.add_argument(
        "--weight-decay",
        type=_non_negative_float,
        default=defaults.weight_decay,
        help="weight decay, 0 or more (default: %(default)s)",
    )
    train.add_argument(
        "--label-smoothing",
        type=_fraction,
        default=defaults.label_smoothing,
        help="cross-entropy label smoothing, 0 to below 1 (default: %(default)s)",
    )
    train.add_argument("--augment", action="store_true", help="random crop and horizontal flip, computed on the GPU")
    train.add_argument(
        "--amp",
        type=_choice(AMP_MODES, "amp mode"),
        default=defaults.amp,
        help="mixed precision: off, bf16 or fp16 (fp16 adds a gradient scaler; default: %(default)s)",
    )
    train.add_argument("--channels-last", action="store_true", help="use the channels_last memory format")
    train.add_argument("--compile", action="store_true", help="compile the model with torch.compile")
    train.add_argument(
        "--cuda-graph", action="store_true", help="capture the training step in a CUDA/HIP graph (GPU only; fastest)"
    )
    train.add_argument(
        "--seed", type=_non_negative_int, default=defaults.seed, help="random seed, 0 or more (default: %(default)s)"
    )
    train.add_argument(
        "--data-dir",
        type=_existing_dir,
        default=None,
        help="an existing folder with the dataset in torchvision's layout (default: the cache, "
        "then the bundled sample)",
    )
    train.add_argument(
        "--download", action="store_true", help="let torchvision download the dataset into --data-dir or the cache"
    )
    train.add_argument(
        "--runs-dir", type=Path, default=defaults.runs_dir, help="where run folders are written (default: %(default)s)"
    )
    train.add_argument(
        "--resume",
        metavar="RUN_OR_CHECKPOINT",
        type=_existing_path,
        default=None,
        help="continue a run from its folder or a checkpoint file",
    )
    train.add_argument(
        "--device",
        type=_device,
        default=defaults.device,
        help="auto, cpu, cuda or cuda:N; ROCm builds of PyTorch use cuda too (default: %(default)s)",
    )
    train.add_argument(
        "--headless", action="store_true", help="no UI: one line per epoch (automatic when stdout is not a terminal)"
    )
    train.add_argument("--exit-on-finish", action="store_true", help="close the UI when training ends")
    train.add_argument("--theme", default=MonitorConfig().theme, help="Textual theme (default: %(default)s)")
    _add_telemetry_flags(train)


def _add_monitor_parser(sub: _Sub) -> None:
    monitor = sub.add_parser(
        "monitor", help="the GPU panel alone, as a standing monitor", epilog=MONITOR_EXAMPLES, formatter_class=_RAW
    )
    monitor.description = "Watch GPU utilization, memory, temperature, power and processes (and the host's CPU/RAM)."
    output = monitor.add_mutually_exclusive_group()
    output.add_argument("--once", action="store_true", help="print one table and exit (no UI, no torch)")
    output.add_argument("--json", action="store_true", help="print one JSON object per sample (no UI, no torch)")
    monitor.add_argument(
        "--count",
        type=_positive_int,
        default=None,
        help="with --json: stop after N samples (default: run until Ctrl-C)",
    )
    monitor.add_argument("--theme", default=MonitorConfig().theme, help="Textual theme (default: %(default)s)")
    _add_telemetry_flags(monitor)


def _add_bench_parser(sub: _Sub) -> None:
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
    bench.add_argument("--epochs", type=_positive_int, default=5, help="epochs for each run (default: %(default)s)")
    bench.add_argument(
        "--model", type=_choice(MODELS, "model"), default="simplecnn", help="model for both runs (default: %(default)s)"
    )
    bench.add_argument("--quick", action="store_true", help="a short run (1 epoch, capped steps) for a first look")
    bench.add_argument("--json", action="store_true", help="print one JSON object instead of text lines")
    bench.add_argument("--data-dir", type=_existing_dir, default=None, help="dataset folder (torchvision layout)")
    bench.add_argument("--device", type=_device, default="auto", help="auto, cpu, cuda or cuda:N")
    bench.add_argument(
        "--fast", action="store_true", help="use rocmtui's fastest settings for its run (CUDA graph on a GPU)"
    )


def _add_doctor_parser(sub: _Sub) -> None:
    doctor = sub.add_parser(
        "doctor",
        help="check torch, GPUs, drivers and telemetry; say how to fix what fails",
        epilog=DOCTOR_EXAMPLES,
        formatter_class=_RAW,
    )
    doctor.description = "Check this machine for training and monitoring; exit 0 when nothing FAILs."
    doctor.add_argument("--json", action="store_true", help="print the checks as JSON")


def _add_telemetry_flags(parser: argparse.ArgumentParser) -> None:
    defaults = MonitorConfig()
    parser.add_argument(
        "--backend",
        type=_choice(BACKENDS, "backend"),
        default=defaults.backend,
        help=f"telemetry backend: {', '.join(BACKENDS)} (default: %(default)s)",
    )
    parser.add_argument(
        "--interval",
        type=_interval,
        default=defaults.interval_s,
        help="seconds between GPU samples, 0.1 to 60 (default: %(default)s)",
    )
    parser.add_argument(
        "--history",
        type=_positive_int,
        default=defaults.history_len,
        help="samples of history kept per GPU (default: %(default)s)",
    )


def monitor_config(args: argparse.Namespace) -> MonitorConfig:
    return MonitorConfig(interval_s=args.interval, history_len=args.history, backend=args.backend, theme=args.theme)


def train_config(args: argparse.Namespace) -> TrainConfig:
    return TrainConfig(
        dataset=DATASETS[args.dataset],
        model=args.model,
        epochs=args.epochs,
        batch_size=args.batch_size,
        lr=args.lr,
        optimizer=args.optimizer,
        schedule=args.schedule,
        weight_decay=args.weight_decay,
        label_smoothing=args.label_smoothing,
        augment=args.augment,
        amp=args.amp,
        channels_last=args.channels_last,
        compile=args.compile,
        cuda_graph=args.cuda_graph,
        seed=args.seed,
        data_dir=args.data_dir,
        download=args.download,
        runs_dir=args.runs_dir,
        resume=args.resume,
        device=args.device,
    )


def _run_train(args: argparse.Namespace) -> int:
    from rocmtui.train import data  # torch is imported here, not at start-up

    config = train_config(args)
    data.resolve_source(config)  # fail fast with a one-line DataError before any UI starts
    if args.headless or not sys.stdout.isatty():
        from rocmtui.train.headless import run_headless

        return run_headless(config)
    from rocmtui.gpu.detect import open_sampler
    from rocmtui.train.loop import train
    from rocmtui.ui.app import run_train_app

    return run_train_app(
        config, train, open_sampler(monitor_config(args)), exit_on_finish=args.exit_on_finish, theme=args.theme
    )


def _run_monitor(args: argparse.Namespace) -> int:
    config = monitor_config(args)
    if args.count is not None and not args.json:
        raise UsageError("--count goes with --json")
    if args.once or args.json:
        from rocmtui.gpu import report

        return report.print_once(config) if args.once else report.stream_json(config, args.count)
    from rocmtui.gpu.detect import open_sampler
    from rocmtui.ui.app import run_monitor_app

    return run_monitor_app(config, open_sampler(config))


def _run_bench(args: argparse.Namespace) -> int:
    from rocmtui.train.bench import BenchOptions, run_bench

    return run_bench(
        BenchOptions(
            epochs=args.epochs,
            model=args.model,
            quick=args.quick,
            json=args.json,
            data_dir=args.data_dir,
            device=args.device,
            fast=args.fast,
        )
    )


def _run_doctor(args: argparse.Namespace) -> int:
    from rocmtui.doctor import run_doctor

    return run_doctor(as_json=args.json)


COMMANDS = {"train": _run_train, "monitor": _run_monitor, "bench": _run_bench, "doctor": _run_doctor}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the process exit code."""
    args = build_parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except UsageError as err:
        print(f"rocmtui {args.command}: error: {err}", file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        print(f"rocmtui {args.command}: interrupted", file=sys.stderr)
        return 130
