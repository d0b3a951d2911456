"""Human formatting of telemetry values ("12.3 GiB", "65°C", "N/A"): the one convention of every output.

Memory in binary units (GiB, MiB), temperatures in °C. ``monitor --once``, the UI, ``train --headless`` and
``bench`` all format through here, so the same reading reads the same everywhere.
"""

from __future__ import annotations

import math

NA = "N/A"

_BINARY_UNITS = ("B", "KiB", "MiB", "GiB", "TiB")
_MIB = 1024**2
_GIB = 1024**3


def fmt_bytes(value: int | float | None) -> str:
    """Bytes in binary units with one decimal: ``12.3 GiB``; None -> ``N/A``."""
    if value is None:
        return NA
    size = float(value)
    for unit in _BINARY_UNITS:
        if abs(size) < 1024.0 or unit == _BINARY_UNITS[-1]:
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024.0
    raise AssertionError("unreachable")  # the loop always returns at the last unit


def fmt_throughput(bytes_per_s: float | None) -> str:
    """A transfer rate in binary units: ``1.2 GiB/s``; None -> ``N/A``."""
    return NA if bytes_per_s is None else f"{fmt_bytes(bytes_per_s)}/s"


def fmt_used_total(used: int | float | None, total: int | float | None, sep: str = " / ") -> str:
    """``3.2 / 16.0 GiB``: both in the total's unit (GiB from 1 GiB up, else MiB); ``sep="/"`` for narrow cards.

    An unknown side is ``N/A`` (``N/A / 16.0 GiB``); both unknown is a single ``N/A``.
    """
    if used is None and total is None:
        return NA
    if used is None or not total:
        return f"{fmt_bytes(used)}{sep}{fmt_bytes(total)}"
    unit, div = ("GiB", _GIB) if total >= _GIB else ("MiB", _MIB)
    return f"{used / div:.1f}{sep}{total / div:.1f} {unit}"


def fmt_pct(value: float | None, digits: int = 0) -> str:
    """Percent: ``87%``; None -> ``N/A``."""
    return NA if value is None else f"{value:.{digits}f}%"


def fmt_temp(value: float | None) -> str:
    """Degrees Celsius: ``65°C``; None -> ``N/A``."""
    return NA if value is None else f"{value:.0f}°C"


def fmt_watts(value: float | None) -> str:
    """Watts: ``215 W``; None -> ``N/A``."""
    return NA if value is None else f"{value:.0f} W"


def fmt_power(power_w: float | None, cap_w: float | None) -> str:
    """Power against its cap: ``215 / 300 W``, or just ``215 W`` when the cap is unknown."""
    if cap_w is None:
        return fmt_watts(power_w)
    drawn = NA if power_w is None else f"{power_w:.0f}"
    return f"{drawn} / {cap_w:.0f} W"


def fmt_mhz(value: float | None) -> str:
    """Clock: ``2100 MHz``; None -> ``N/A``."""
    return NA if value is None else f"{value:.0f} MHz"


def fmt_fan(rpm: float | None, pct: float | None) -> str:
    """Fan as percent and/or RPM, whichever the backend gives."""
    parts = [f"{pct:.0f}%" if pct is not None else "", f"{rpm:.0f} RPM" if rpm is not None else ""]
    text = " ".join(p for p in parts if p)
    return text or NA


def fmt_temps(temps: tuple[tuple[str, float], ...]) -> str:
    """``edge 45°C, junction 52°C``; empty -> ``N/A``."""
    return ", ".join(f"{label} {fmt_temp(value)}" for label, value in temps) or NA


def fmt_gpu_index(index: int) -> str:
    """A process's GPU column: ``?`` for a negative index (``rocmtui.gpu.backend.UNKNOWN_GPU``: the backend
    cannot tell which GPU the process uses)."""
    return "?" if index < 0 else str(index)


def fmt_duration(seconds: float | None) -> str:
    """``1:02:03`` or ``2:03``; ``--:--`` when unknown."""
    if seconds is None or math.isnan(seconds) or seconds < 0:
        return "--:--"
    total = round(seconds)
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def fmt_span(seconds: float | None) -> str:
    """A measured span: ``0.41s`` or ``12.3s`` under a minute (fast epochs and runs), else as fmt_duration."""
    if seconds is None or math.isnan(seconds) or seconds < 0 or seconds >= 59.95:
        return fmt_duration(seconds)
    return f"{seconds:.2f}s" if seconds < 9.995 else f"{seconds:.1f}s"


def fmt_acc(value: float | None) -> str:
    """An accuracy in 0..1 as ``61.23%``; NA when there is none (no epoch has ended)."""
    return NA if value is None else f"{100.0 * value:.2f}%"
