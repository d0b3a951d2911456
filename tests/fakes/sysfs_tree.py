"""FAKE amdgpu sysfs tree builder: writes the driver's real file names and formats under a tmp root.

Formats follow the amdgpu kernel documentation: one decimal integer per file, a trailing
newline; bytes for mem_info_*, percent for *_busy_percent, millidegrees for temp*_input,
microwatts for power1_*, RPM for fan1_input, Hz for freq*_input. ``device/driver`` is a
symlink whose target's name is the driver, as in /sys.

Also imported by ``scripts/bench_telemetry.py --make-tree`` (``build_card``).
"""

from __future__ import annotations

from pathlib import Path

DEFAULT_FILES: dict[str, str] = {
    "vendor": "0x1002",
    "device": "0x744c",
    "product_name": "AMD Radeon RX 7900 XTX",
    "gpu_busy_percent": "87",
    "mem_busy_percent": "23",
    "mem_info_vram_used": str(3 * 2**30),
    "mem_info_vram_total": str(24 * 2**30),
    "mem_info_gtt_used": str(2**27),
    "mem_info_gtt_total": str(16 * 2**30),
}
DEFAULT_HWMON: dict[str, str] = {
    "name": "amdgpu",
    "temp1_input": "45000",
    "temp1_label": "edge",
    "temp2_input": "52000",
    "temp2_label": "junction",
    "temp3_input": "60000",
    "temp3_label": "mem",
    "power1_average": "215000000",
    "power1_cap": "300000000",
    "fan1_input": "1200",
    "freq1_input": "2100000000",
    "freq2_input": "1250000000",
}


def build_card(
    root: Path,
    number: int,
    *,
    files: dict[str, str | None] | None = None,
    hwmon: dict[str, str | None] | None = None,
    driver: str | None = "amdgpu",
    hwmon_name: str = "hwmon3",
) -> Path:
    """Create ``<root>/class/drm/card<number>/device`` with DEFAULT_* overridden by ``files``/``hwmon``.

    A value of None leaves that file out; ``driver=None`` leaves out the driver link.
    Returns the device folder.
    """
    pci = root / "devices" / "pci0000:00" / f"0000:{number:02x}:00.0"
    pci.mkdir(parents=True, exist_ok=True)
    _write_all(pci, {**DEFAULT_FILES, **(files or {})})
    if driver is not None:
        drivers = root / "bus" / "pci" / "drivers" / driver
        drivers.mkdir(parents=True, exist_ok=True)
        (pci / "driver").symlink_to(drivers)
    _write_all(pci / "hwmon" / hwmon_name, {**DEFAULT_HWMON, **(hwmon or {})})
    card = root / "class" / "drm" / f"card{number}"
    card.mkdir(parents=True, exist_ok=True)
    (card / "device").symlink_to(pci)
    connector = root / "class" / "drm" / f"card{number}-DP-1"
    connector.mkdir(exist_ok=True)
    (connector / "device").symlink_to(pci)  # connectors point at the same device; must be skipped
    return pci


def _write_all(folder: Path, contents: dict[str, str | None]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, value in contents.items():
        if value is not None:
            (folder / name).write_text(value + "\n")
