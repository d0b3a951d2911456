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
from dataclasses import dataclass, replace
from pathlib import Path

from rocmtui.base.files import UnsafeFileError, atomic_write, read_small
from rocmtui.base.private_dir import UnsafeFolderError, folder_problem, private_dir
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
    """The saved settings and None, or the defaults and why the file could not be used (a folder another user
    owns or can write is not read: ``private_dir``)."""
    data, problem = _saved_bytes(path)
    if data is None:
        return MonitorSettings(), problem
    try:
        settings = decode_json(data, MonitorSettings, what="settings")
    except CodecError as err:
        return MonitorSettings(), f"settings in {path} ignored: {err}"
    return checked(settings, path)


def _saved_bytes(path: Path) -> tuple[bytes | None, str | None]:
    """The settings file's bytes; or None and why it is not read (None as well when there is no file)."""
    if not path.parent.is_dir():
        return None, None
    problem = folder_problem(Path(os.path.realpath(path.parent)))
    if problem:
        return None, f"settings not read: {plain(problem)}"
    try:
        return read_small(path, MAX_SETTINGS_BYTES, follow_links=True), None  # a dotfiles link is the user's own
    except FileNotFoundError:
        return None, None
    except OSError as err:
        return None, f"settings not read from {plain(path)}: {err.strerror or err}"
    except UnsafeFileError as err:  # a FIFO, a device (a link to /dev/zero), a file of megabytes: never waited on
        return None, f"settings not read: {plain(err)}"


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
    from rocmtui.base.errors import UsageError
    from rocmtui.ui.look.themes import check_theme

    try:
        check_theme(theme)
    except UsageError:
        return False
    return True


def save(path: Path, settings: MonitorSettings) -> str | None:
    """Write ``settings``; None, or one line saying why it could not."""
    try:
        private_dir(path.parent)
        atomic_write(path, encode_json(settings) + b"\n")
    except UnsafeFolderError as err:
        return f"settings not saved: {plain(str(err))}"
    except OSError as err:
        return f"settings not saved to {path}: {err.strerror or err}"
    return None


NOTIFY_ENV = "ROCMTUI_NOTIFY"
NOTIFY_OFF = ("0", "off", "no", "false")


def notify_wanted(refused: bool) -> bool:
    """Whether a run's end rings the terminal and sends a desktop notification: off when ``--no-notify`` was
    given (``refused``), ``ROCMTUI_NOTIFY=0`` is set or the settings file says ``"notify": false``."""
    if refused or os.environ.get(NOTIFY_ENV, "").strip().lower() in NOTIFY_OFF:
        return False
    return load(default_path())[0].notify  # an unreadable file: the defaults (on)


def notify_watched(refused: bool, run_dir: Path) -> bool:
    """A viewer's ``notify_wanted``: only for a run that is live, so that it can end while watched (one that had
    ended before has nothing to tell)."""
    from rocmtui.run.listing import run_info

    return run_info(run_dir).live and notify_wanted(refused)
