"""Reading the amdgpu driver's sysfs files: finding cards, their names and their hwmon sensors.

Every reader returns None for a file that is missing, unreadable or holds garbage, so a
half-supported card or a card unplugged mid-read gives N/A fields, never an exception.
``pcie_bw`` is not read here: it blocks for a second (``pcie_bw.PcieBandwidth`` reads it on a thread).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

AMD_VENDOR_ID = "0x1002"
_CARD = re.compile(r"card(\d+)$")
_TEMP_LABELS = {"edge": "edge", "junction": "junction", "mem": "mem", "hotspot": "junction"}
_DPM_LEVEL = re.compile(r"^\s*(?:\w+:)?\s*(\d+(?:\.\d+)?)\s*mhz\b.*\*", re.IGNORECASE)
"""A ``pp_dpm_*`` line marked current: ``1: 400Mhz *``, ``S: 500MHz *``, or the bare ``   1066Mhz *`` the
driver inserts when the clock sits between levels."""
_TEMP_RANGE_C = (-50.0, 200.0)
"""Readings outside this range are sensor garbage (e.g. 0xFFFF), not temperatures."""


def read_text(path: Path) -> str | None:
    """The stripped contents of ``path`` up to any NUL padding, or None."""
    try:
        return path.read_text(encoding="ascii", errors="strict").split("\0", 1)[0].strip()
    except (OSError, UnicodeDecodeError):
        return None


def read_int(path: Path) -> int | None:
    """An integer file (decimal), or None when missing or not a number."""
    text = read_text(path)
    if text is None:
        return None
    try:
        return int(text)
    except ValueError:
        return None


def read_pct(path: Path) -> float | None:
    """A 0..100 percentage file, or None (out-of-range values included)."""
    value = read_int(path)
    return float(value) if value is not None and 0 <= value <= 100 else None


def find_cards(sysfs_root: Path) -> list[Path]:
    """``device`` folders of the amdgpu cards under ``<root>/class/drm``, by card number.

    Connector entries (``card0-DP-1``) and other vendors' cards are skipped.
    """
    drm = sysfs_root / "class" / "drm"
    try:
        entries = list(drm.iterdir())
    except OSError:
        return []
    cards: list[tuple[int, Path]] = []
    for entry in entries:
        match = _CARD.match(entry.name)
        if match and is_amdgpu(entry / "device"):
            cards.append((int(match.group(1)), entry / "device"))
    return [device for _, device in sorted(cards)]


def is_amdgpu(device: Path) -> bool:
    """True when the ``driver`` link names amdgpu or, lacking a link, the PCI vendor is AMD.

    The link decides when present: an AMD card on the legacy ``radeon`` driver has none of
    amdgpu's files.
    """
    link = device / "driver"
    if link.is_symlink():
        try:
            return link.resolve().name == "amdgpu"
        except OSError:
            return False  # a broken or looping link: not a card we can read
    return read_text(device / "vendor") == AMD_VENDOR_ID


def unique_id(device: Path) -> str | None:
    """The card's ``unique_id`` (a serial in hex, on GPUs whose firmware reports one), else None."""
    text = read_text(device / "unique_id")
    return text.lower() if text else None


def card_name(device: Path) -> str:
    """``product_name`` when the driver offers it, else ``AMD GPU (0x744c)`` from the PCI device id."""
    product = read_text(device / "product_name")
    if product:
        return product
    device_id = read_text(device / "device")
    return f"AMD GPU ({device_id})" if device_id else "AMD GPU"


def find_hwmon(device: Path) -> Path | None:
    """The ``hwmon*`` folder of ``device`` whose ``name`` is ``amdgpu``."""
    try:
        candidates = sorted((device / "hwmon").glob("hwmon*"))
    except OSError:
        return None
    for hwmon in candidates:
        if read_text(hwmon / "name") == "amdgpu":
            return hwmon
    return None


@dataclass(frozen=True)
class HwmonReading:
    """What an amdgpu hwmon folder reports, in the units of GpuSample."""

    temperatures_c: tuple[tuple[str, float], ...] = ()
    power_w: float | None = None
    power_cap_w: float | None = None
    fan_rpm: float | None = None
    fan_pct: float | None = None
    sclk_mhz: float | None = None
    mclk_mhz: float | None = None
    temp_crit_c: float | None = None
    temp_emergency_c: float | None = None


def read_hwmon(hwmon: Path | None) -> HwmonReading:
    """Temperatures, power (average or input), cap, fan and clocks; None for what is missing.

    The clocks are hwmon's ``freq1_input`` / ``freq2_input``; APUs have no ``freq2_input``, and their memory
    clock is then the current level of the device's ``pp_dpm_mclk``."""
    if hwmon is None:
        return HwmonReading()
    power = _scaled(hwmon / "power1_average", 1e-6)
    if power is None:  # newer cards expose only the instantaneous reading
        power = _scaled(hwmon / "power1_input", 1e-6)
    limits = read_temp_limits(hwmon)
    mclk = _scaled(hwmon / "freq2_input", 1e-6)
    if mclk is None:
        mclk = read_dpm_current_mhz(hwmon.parent.parent / "pp_dpm_mclk")
    return HwmonReading(
        temperatures_c=read_temperatures(hwmon),
        power_w=power,
        power_cap_w=_scaled(hwmon / "power1_cap", 1e-6),
        fan_rpm=_scaled(hwmon / "fan1_input", 1.0),
        fan_pct=read_fan_pct(hwmon),
        sclk_mhz=_scaled(hwmon / "freq1_input", 1e-6),
        mclk_mhz=mclk,
        temp_crit_c=limits[0],
        temp_emergency_c=limits[1],
    )


def read_dpm_current_mhz(path: Path) -> float | None:
    """The level ``pp_dpm_sclk`` / ``pp_dpm_mclk`` marks current (``*``), in MHz; the last when two are
    marked (as AMD's ROCm SMI library takes it); None when none is or the file is missing or empty."""
    current = None
    for line in (read_text(path) or "").splitlines():
        match = _DPM_LEVEL.match(line)
        if match:
            current = float(match.group(1))
    return current


def read_fan_pct(hwmon: Path) -> float | None:
    """``pwm1`` as a percentage of ``pwm1_max`` (255 where the card has no such file), as ``rocm-smi`` shows
    it. The driver's PWM duty, which need not match ``fan1_input``: an RX 6600 reports 1395 RPM at PWM 0."""
    pwm = read_int(hwmon / "pwm1")
    top = read_int(hwmon / "pwm1_max") or 255
    return None if pwm is None or not 0 <= pwm <= top else 100.0 * pwm / top


def read_temp_limits(hwmon: Path) -> tuple[float | None, float | None]:
    """(crit, emergency) in °C of the headline sensor (junction, else edge, else temp1), from
    ``temp*_crit`` and ``temp*_emergency``; None where the card has no such file or a sentinel value."""
    numbers: dict[str, str] = {}
    try:
        labels = list(hwmon.glob("temp*_label"))
    except OSError:
        return None, None
    for path in labels:
        label = (read_text(path) or "").lower()
        numbers[_TEMP_LABELS.get(label, label)] = path.name[4 : -len("_label")]
    number = numbers.get("junction") or numbers.get("edge") or "1"

    def limit(kind: str) -> float | None:
        value = read_int(hwmon / f"temp{number}_{kind}")
        celsius = None if value is None else value / 1000.0
        return celsius if celsius is not None and 0.0 < celsius <= _TEMP_RANGE_C[1] else None

    return limit("crit"), limit("emergency")


def read_temperatures(hwmon: Path) -> tuple[tuple[str, float], ...]:
    """``temp*_input`` (millidegrees) labelled by ``temp*_label``: edge, junction, mem."""
    temps: list[tuple[int, str, float]] = []
    try:
        inputs = list(hwmon.glob("temp*_input"))
    except OSError:
        return ()
    for path in inputs:
        number = path.name[4 : -len("_input")]
        value = read_int(path)
        if not number.isdigit() or value is None:
            continue
        celsius = value / 1000.0
        if value == 0 or not _TEMP_RANGE_C[0] <= celsius <= _TEMP_RANGE_C[1]:
            continue  # exactly 0 is a sensor with no reading (the RX 5500 XT's mem), not a frozen card
        raw_label = read_text(hwmon / f"temp{number}_label") or f"temp{number}"
        temps.append((int(number), _TEMP_LABELS.get(raw_label.lower(), raw_label.lower()), celsius))
    return tuple((label, value) for _, label, value in sorted(temps))


def read_ras_umc(device: Path) -> tuple[int | None, int | None]:
    """(corrected, uncorrected) memory errors from ``ras/umc_err_count`` (``ue: 0`` and ``ce: 0`` lines);
    (None, None) on cards without RAS (consumer cards have no ``ras`` folder)."""
    text = read_text(device / "ras" / "umc_err_count")
    counts: dict[str, int] = {}
    for line in (text or "").splitlines():
        key, _, value = line.partition(":")
        if value.strip().isdigit():
            counts[key.strip()] = int(value)
    return counts.get("ce"), counts.get("ue")


def _scaled(path: Path, factor: float) -> float | None:
    value = read_int(path)
    return None if value is None or value < 0 else value * factor


class CardSensors:
    """The hwmon sensors of one card, its hwmon folder found again when the driver renumbers it."""

    def __init__(self, device: Path) -> None:
        self.device = device
        self._hwmon = find_hwmon(device)

    def read(self) -> HwmonReading:
        """Current readings; empty when the card has no amdgpu hwmon (or is gone)."""
        if self._hwmon is None or not self._hwmon.is_dir():
            self._hwmon = find_hwmon(self.device)
        return read_hwmon(self._hwmon)
