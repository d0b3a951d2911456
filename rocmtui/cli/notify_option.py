"""``--no-notify``, ``ROCMTUI_NOTIFY=0`` and the saved ``notify`` setting: whether a run's end rings the terminal
and sends a desktop notification (``train``, ``run`` and ``watch``)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

NOTIFY_ENV = "ROCMTUI_NOTIFY"
OFF = ("0", "off", "no", "false")


def add_notify_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--no-notify",
        action="store_true",
        help=f"no bell or desktop notification when the run ends or fails (also: {NOTIFY_ENV}=0, or "
        '"notify": false in the settings file)',
    )


def notify_wanted(args: argparse.Namespace) -> bool:
    """Off when the flag, the environment or the settings file says so; on otherwise."""
    if getattr(args, "no_notify", False) or os.environ.get(NOTIFY_ENV, "").strip().lower() in OFF:
        return False
    from rocmtui.ui.state import settings as saved

    return saved.load(saved.default_path())[0].notify  # an unreadable file: the defaults (on)


def notify_watched(args: argparse.Namespace, run_dir: Path) -> bool:
    """A viewer's ``notify_wanted``: only for a run that is live, so that it can end while watched (one that had
    ended before has nothing to tell)."""
    from rocmtui.run.listing import run_info

    return run_info(run_dir).live and notify_wanted(args)
