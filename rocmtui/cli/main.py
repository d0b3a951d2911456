"""Command line: builds configs from the parsed arguments and starts the app or a headless path.

torch and textual are imported lazily, inside the subcommand that needs them, so that
``rocmtui monitor --once`` and ``rocmtui --help`` stay fast and torch-free.
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rocmtui.base import startup_gc
from rocmtui.base.errors import DataError, UsageError, first_line
from rocmtui.base.ranges import cpu_cores
from rocmtui.base.text import plain
from rocmtui.cli.lazy_command import deferred
from rocmtui.cli.parser import build_parser
from rocmtui.cli.telemetry_flags import interval_given
from rocmtui.cli.terminal import can_draw
from rocmtui.config import MonitorConfig, TrainConfig

if TYPE_CHECKING:
    from rocmtui.launch.trainer import LaunchedTrainer

__all__ = ["build_parser", "main", "monitor_config", "train_config"]

START_STOP_GRACE_S = 10.0
"""How long a trainer asked to stop during the UI's start has before it is killed."""


def monitor_config(args: argparse.Namespace) -> MonitorConfig:
    """The sampler's settings; a run not given ``--interval`` samples at 4 Hz for its first minutes."""
    fast_start = args.command == "train" and args.interval is None
    return MonitorConfig(
        interval_s=interval_given(args),
        history_len=args.history,
        backend=args.backend,
        theme=args.theme,
        fast_start_s=MonitorConfig.RUN_FAST_START_S if fast_start else 0.0,
    )


def train_config(args: argparse.Namespace) -> TrainConfig:
    """The run's settings: the options given, TrainConfig's defaults for the rest (see ``train_options``)."""
    from rocmtui.cli.train_options import config_from_args

    return config_from_args(args)


def check_nproc(nproc: int, force: bool, cores: int | None = None) -> None:
    """``--nproc`` at most the CPU cores (each rank is a process with its loader, about 0.5 GB on the CPU)
    unless ``--force``; above the visible GPUs it is refused once torch has counted them (``resolve_device``)."""
    if cores is None:
        cores = cpu_cores()
    if nproc > cores and not force:
        raise UsageError(f"--nproc {nproc}: this machine has {cores} CPU cores; give at most {cores} (or --force)")


def prepare_data_dir(config: TrainConfig) -> None:
    """A ``--data-dir`` that does not exist: made with ``--download`` (that is where the data goes), refused
    without it."""
    folder = config.data_dir
    if folder is None or folder.is_dir():
        return
    if not config.download:
        raise UsageError(f"data folder '{folder}' does not exist; make it, or add --download to fetch into it")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise UsageError(f"data folder '{folder}' cannot be made: {err.strerror or err}") from None


def _run_train(args: argparse.Namespace) -> int:
    from rocmtui.cli.job_options import with_job_defaults  # train's alone: the monitor's start loads less

    config = with_job_defaults(train_config(args))
    check_nproc(config.nproc, args.force)
    prepare_data_dir(config)
    refuse_live_resume(config)
    if args.headless or not can_draw():
        # torch, imported with the collector paused; the run's plan resolves the data (one line when it cannot)
        from rocmtui.launch.headless import run_headless

        startup_gc.resume()
        return run_headless(config, detach=args.detach, telemetry=monitor_config(args))
    from rocmtui.cli.run_commands import print_lines
    from rocmtui.launch.trainer import LaunchedTrainer
    from rocmtui.run.samples import LateSampleTail
    from rocmtui.ui.look.themes import check_theme  # without Textual: the trainer starts before the UI imports it
    from rocmtui.ui.signals import stop_on_signals
    from rocmtui.ui.state.settings import notify_wanted

    check_theme(args.theme)  # one line, before the trainer starts and the terminal is taken
    telemetry = monitor_config(args)
    samples = LateSampleTail()  # the trainer samples the GPU into its folder; the UI reads it there
    trainer = LaunchedTrainer(telemetry=telemetry, on_folder=samples.attach)
    early: list[int] = []  # SIGTERM or SIGHUP before the app takes them over: the trainer must not train on alone
    with stop_on_signals(early.append):
        trainer.start(config)  # first: its imports, CUDA start-up and data loading overlap the rest of this start
        _check_data(config, trainer)

        from rocmtui.gpu.tail_source import TailSource
        from rocmtui.ui.train_app import TrainApp, run_train_app

        app = TrainApp(
            config,
            trainer,
            TailSource(samples.poll, interval_s=min(telemetry.interval_s, 0.5), history_len=telemetry.history_len),
            exit_on_finish=args.exit_on_finish,
            detachable=True,
            stop_on_hangup=args.stop_on_hangup,
            theme=args.theme,
            notify=notify_wanted(args.no_notify),
        )
        if early:
            return _stop_started(trainer, early[0])
        code, lines = run_train_app(app)
    print_lines(lines, failed=code not in (0, 129))
    return code


def _stop_started(trainer: LaunchedTrainer, signum: int) -> int:
    """A signal during the start: the trainer is asked to stop (SIGTERM: with a checkpoint once it holds its
    folder), killed if it does not within a few seconds; the exit code says which signal."""
    process = trainer.process
    if process is not None and process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=START_STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            trainer.kill()
    print(f"rocmtui train: stopped by signal {signum} while starting", file=sys.stderr)
    return 128 + signum


def _check_data(config: TrainConfig, started: LaunchedTrainer) -> None:
    """The run's data, checked without loading it (numpy only, imported while the ``started`` trainer
    imports torch): a DataError is the one line the user sees, and ends that trainer (it has no folder yet)."""
    from rocmtui.train import data

    try:
        data.resolve_source(config)
    except DataError:
        started.kill()
        raise


def refuse_live_resume(config: TrainConfig) -> None:
    """A resume that would continue a run folder another process still writes: one line, before any UI."""
    from rocmtui.run.lock import RunBusyError, is_locked

    path = config.resume
    if path is None:
        return
    folder = path if path.is_dir() else path.parent
    if (path.is_dir() or path.name == "checkpoint-last.pt") and is_locked(folder):
        raise RunBusyError(
            f"{folder} is still training in another process; watch it with 'rocmtui watch {folder}' "
            f"or stop it with 'rocmtui stop {folder}'"
        )


def _run_monitor(args: argparse.Namespace) -> int:
    if args.count is not None and not args.json:
        raise UsageError("--count goes with --json")
    if args.hosts is not None or args.hostfile is not None or args.prometheus is not None:
        from rocmtui.cli.cluster_command import run_cluster

        return run_cluster(args)
    if args.token_file is not None:
        raise UsageError("--token-file goes with --hosts, --hostfile or --prometheus")
    config = monitor_config(args)
    if args.speed is not None and args.replay is None:
        raise UsageError("--speed goes with --replay")
    if args.record is not None and args.replay is not None:
        raise UsageError("--record and --replay do not go together")
    ui = not (args.once or args.json or not can_draw())  # piped or redirected: lines for scripts
    if not ui and (args.record is not None or args.replay is not None):
        raise UsageError("--record and --replay go with the live UI (for scripts: --json > FILE)")
    if not ui:
        from rocmtui.gpu import headless_output

        startup_gc.resume()
        return headless_output.print_once(config) if args.once else headless_output.stream_json(config, args.count)
    return _run_monitor_ui(args, config)


def _run_monitor_ui(args: argparse.Namespace, config: MonitorConfig) -> int:
    """The live monitor (or a replay in it), recording if asked."""
    from rocmtui.gpu.detect import DetectingSampler
    from rocmtui.gpu.recorder import Recorder
    from rocmtui.gpu.replay import load_replay
    from rocmtui.gpu.sample import HOST_PROCESS_ROWS
    from rocmtui.ui.app import run_monitor_app
    from rocmtui.ui.look.themes import check_theme
    from rocmtui.ui.state import settings as saved

    settings_path = saved.default_path()
    settings, problem = saved.load(settings_path)
    if problem is not None:
        print(f"rocmtui monitor: {plain(problem)}", file=sys.stderr)
    if args.interval is None:  # not given: the interval kept from the last session
        config = dataclasses.replace(config, interval_s=settings.interval_s)
    if args.theme == MonitorConfig.theme and settings.theme != config.theme:
        config = dataclasses.replace(config, theme=settings.theme)
    settings = dataclasses.replace(settings, interval_s=config.interval_s, theme=config.theme)
    check_theme(config.theme)  # one line, before a file is opened or the terminal taken
    try:
        # live: the backend is detected on the sampler's thread, once the first frame is on screen
        source = (
            load_replay(Path(args.replay), args.speed or 1.0)
            if args.replay
            else DetectingSampler(config, host_processes=HOST_PROCESS_ROWS)
        )
        recorder = Recorder(Path(args.record)) if args.record else None
    except (OSError, ValueError) as err:  # a missing or unreadable file, a bad line (CodecError names it)
        raise UsageError(
            first_line(err) if isinstance(err, ValueError) else f"{err.filename}: {err.strerror}"
        ) from None
    if recorder is not None:
        source.subscribe(recorder)
    try:
        # a replay's pace is the recording's: nothing it changes is kept
        kept = None if args.replay else settings_path
        code = run_monitor_app(
            config, source, settings=settings, settings_path=kept, readonly=args.readonly, recording=bool(args.replay)
        )
    finally:
        if recorder is not None:
            recorder.close()
    if recorder is not None and recorder.error is not None:  # a full disk: said, and not a success
        print(f"rocmtui monitor: error: {plain(recorder.error)} ({recorder.written} samples written)", file=sys.stderr)
        return code or 1
    return code


def _run_bench(args: argparse.Namespace) -> int:
    from rocmtui.bench.runner import BenchOptions, run_bench

    return run_bench(
        BenchOptions(
            epochs=args.epochs,
            model=args.model,
            quick=args.quick,
            json=args.json,
            data_dir=args.data_dir,
            device=args.device,
            fast=args.fast,
            recipe=args.recipe,
            anchors=tuple(args.anchor),
        )
    )


def _run_doctor(args: argparse.Namespace) -> int:
    from rocmtui.doctor.report import run_doctor

    return run_doctor(as_json=args.json)


COMMANDS = {
    "train": _run_train,
    "monitor": _run_monitor,
    "bench": _run_bench,
    "doctor": _run_doctor,
    "watch": deferred("rocmtui.cli.run_commands", "run_watch"),
    "runs": deferred("rocmtui.cli.run_commands", "run_runs"),
    "stop": deferred("rocmtui.cli.run_commands", "run_stop"),
    "run": deferred("rocmtui.cli.script_command", "run_script"),
    "serve": deferred("rocmtui.cli.web_commands", "run_serve"),
    "export": deferred("rocmtui.cli.export_command", "run_export"),
    "demo": deferred("rocmtui.cli.demo_command", "run_demo"),
}
"""What runs each command; the commands not defined here are imported only when run."""


def escape_what_cannot_be_encoded() -> None:
    """A path or name the terminal's encoding cannot show (``PYTHONIOENCODING=ascii``, a C locale) is printed
    escaped (``r\\xfcn``), not fatal: the run it names is fine."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper) and stream.errors == "strict":
            stream.reconfigure(errors="backslashreplace")


TORCH_PACKAGES = frozenset({"torch", "torchvision"})


def torch_failed_to_load(err: BaseException) -> bool:
    """Whether ``err`` is torch (or torchvision) failing to import: not installed, a missing or broken shared
    library, a version clash. Seen by its name, or by a frame of its package's import in the traceback."""
    if isinstance(err, ImportError) and (err.name or "").partition(".")[0] in TORCH_PACKAGES:
        return True
    tb = err.__traceback__
    while tb is not None:
        frame = tb.tb_frame
        if frame.f_code.co_name == "<module>" and str(frame.f_globals.get("__name__", "")).partition(".")[0] in (
            TORCH_PACKAGES
        ):
            return True
        tb = tb.tb_next
    return False


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the process exit code."""
    argv = sys.argv[1:] if argv is None else list(argv)
    escape_what_cannot_be_encoded()
    if not argv:  # no command: the commands, as --help lists them
        build_parser().print_help()
        return 0
    args = build_parser(argv).parse_args(argv)
    if args.command not in {"monitor", "train"}:  # those two resume it once their start is over
        startup_gc.resume()
    try:
        return COMMANDS[args.command](args)
    except UsageError as err:
        print(f"rocmtui {args.command}: error: {plain(err)}", file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        print(f"rocmtui {args.command}: interrupted", file=sys.stderr)
        return 130
    except Exception as err:
        if not torch_failed_to_load(err):
            raise
        print(
            f"rocmtui {args.command}: error: torch cannot be loaded ({plain(first_line(err, with_type=True))}); "
            "'rocmtui doctor' checks the install",
            file=sys.stderr,
        )
        return 1
