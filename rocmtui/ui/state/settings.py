"""The monitor's settings that outlive a session (interval, timebase, graphs, theme, process sort; and whether a
run's end notifies), kept as
JSON in the user's config folder (platformdirs). No Textual here.

A missing file gives the defaults; a damaged one gives the defaults and a one-line note (never a crash). It is
read through the safe open (``base.files``): a FIFO never blocks the monitor, a device or a huge file is refused.
Writes go to a temporary file that replaces the old one, so a crash mid-write leaves the old settings.
"""

from __future__ import annotations

import math
import os
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

from rocmtui.base.files import UnsafeFileError, read_small
from rocmtui.base.text import plain
from rocmtui.codec import CodecError, decode_json, encode_json

FILE_NAME = "monitor.json"
MAX_SETTINGS_BYTES = 64 << 10
"""Far more than the settings take: a larger file is not read."""


@dataclass(frozen=True)
class MonitorSettings:
    """What the monitor remembers; each field is changed by a key in the app."""

    interval_s: float = 1.0
    """Seconds between samples (+/-)."""
    timebase_s: float = 60.0
    """History graphs' span (t), when ``timebase_fixed``."""
    timebase_fixed: bool = False
    """The user chose the span; otherwise it grows with the history (1 min, 10 min, 1 h, 24 h)."""
    graph: str = "util"
    """``util`` (utilisation and VRAM) or ``power`` (power and temperature) (g)."""
    theme: str = "textual-dark"
    """Textual theme (c)."""
    sort_by: str = "GPU mem"
    """Process table column (s, a header click)."""
    sort_reverse: bool = True
    """Largest first (r)."""
    notify: bool = True
    """A bell and a desktop notification when a run ends or fails (``train``, ``run``, ``watch``); no key
    changes it: set it in the file, or give ``--no-notify``."""


def default_path() -> Path:
    """``monitor.json`` in the user's config folder (``~/.config/rocmtui`` on Linux)."""
    import platformdirs  # a dependency of textual; imported only when the UI runs

    return Path(platformdirs.user_config_dir("rocmtui")) / FILE_NAME


def load(path: Path) -> tuple[MonitorSettings, str | None]:
    """The saved settings and None, or the defaults and why the file could not be used."""
    try:
        data = read_small(path, MAX_SETTINGS_BYTES, follow_links=True)  # a dotfiles link is the user's own
    except FileNotFoundError:
        return MonitorSettings(), None
    except OSError as err:
        return MonitorSettings(), f"settings not read from {plain(path)}: {err.strerror or err}"
    except UnsafeFileError as err:  # a FIFO, a device (a link to /dev/zero), a file of megabytes: never waited on
        return MonitorSettings(), f"settings not read: {plain(err)}"
    try:
        settings = decode_json(data, MonitorSettings, what="settings")
    except CodecError as err:
        return MonitorSettings(), f"settings in {path} ignored: {err}"
    return checked(settings, path)


def checked(settings: MonitorSettings, path: Path) -> tuple[MonitorSettings, str | None]:
    """``settings`` with each value the monitor cannot use (an unknown theme, an interval out of range) back at
    its default, and one line naming the file and those fields; the other values are kept."""
    bad = [name for name, usable in _usable(settings).items() if not usable]
    if not bad:
        return settings, None
    defaults = MonitorSettings()
    fixed = replace(settings, **{name: getattr(defaults, name) for name in bad})
    shown = ", ".join(f"{name}={plain(getattr(settings, name), limit=40)!r}" for name in bad)
    return fixed, f"settings in {plain(path)}: {shown} not usable, the default used instead"


def _usable(settings: MonitorSettings) -> dict[str, bool]:
    from rocmtui.config import MonitorConfig
    from rocmtui.gpu.history import TIMEBASES_S
    from rocmtui.ui.state.process_rows import SORTS

    interval = settings.interval_s
    return {
        "interval_s": math.isfinite(interval)
        and MonitorConfig.MIN_INTERVAL_S <= interval <= MonitorConfig.MAX_INTERVAL_S,
        "timebase_s": settings.timebase_s in TIMEBASES_S,
        "graph": settings.graph in ("util", "power"),
        "theme": _known_theme(settings.theme),
        "sort_by": settings.sort_by in SORTS,
    }


def _known_theme(theme: str) -> bool:
    from rocmtui.errors import UsageError
    from rocmtui.ui.look.themes import check_theme

    try:
        check_theme(theme)
    except UsageError:
        return False
    return True


def save(path: Path, settings: MonitorSettings) -> str | None:
    """Write ``settings``; None, or one line saying why it could not."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".monitor-", suffix=".json", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(encode_json(settings) + b"\n")
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as err:
        return f"settings not saved to {path}: {err.strerror or err}"
    return None
