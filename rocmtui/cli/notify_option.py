"""``--no-notify``: whether a run's end rings the terminal and sends a desktop notification (``train``, ``run``
and ``watch``); the environment and the settings file are read by ``rocmtui.ui.state.settings.notify_wanted``."""

from __future__ import annotations

import argparse

from rocmtui.ui.state.settings import NOTIFY_ENV


def add_notify_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--no-notify",
        action="store_true",
        help=f"no bell or desktop notification when the run ends or fails (also: {NOTIFY_ENV}=0, or "
        '"notify": false in the settings file)',
    )
