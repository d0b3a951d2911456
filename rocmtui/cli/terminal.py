"""Whether stdout is a terminal that can draw the UI: a pipe, a file or ``TERM=dumb`` get plain lines instead."""

from __future__ import annotations

import os
import sys


def can_draw() -> bool:
    """stdout is a terminal with cursor addressing (``TERM=dumb`` has none: an Emacs shell, some CI logs)."""
    return sys.stdout.isatty() and os.environ.get("TERM", "") != "dumb"
