"""AMD's ROCm SMI library (``librocm_smi64``, the C library under ``rocm-smi``) read through ctypes.

Not a telemetry backend: a second opinion. ``rocmtui doctor`` and the tests read the same fields through
it and compare them with rocmtui's own readers. pyrsmi 1.1 loads ``libamd_smi.so`` (AMD SMI, ROCm 6+)
instead; distributions such as Debian ship only this older library (5.x), which answers for the same
sysfs files.

Units as the library gives them: percent, bytes, millidegrees, microwatts, Hz, RPM, 0..255 fan PWM. The
clocks are the DPM level marked current in ``pp_dpm_sclk`` / ``pp_dpm_mclk``, not the hwmon
``freq*_input`` that rocmtui shows. Every getter returns None where the library answers anything but
success (``RSMI_STATUS_NOT_SUPPORTED`` for a file the card lacks).
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from rocmtui.codec import encode_json

LIBRARY_NAMES = ("librocm_smi64.so.1", "librocm_smi64.so", "/opt/rocm/lib/librocm_smi64.so")
SUCCESS = 0
MAX_FREQUENCIES = 32
MEM_VRAM, MEM_GTT = 0, 2
"""``rsmi_memory_type_t``."""
TEMP_SENSORS = {"edge": 0, "junction": 1, "mem": 2}
"""rocmtui's label -> ``rsmi_temperature_type_t``."""
TEMP_CURRENT = 0
CLK_SYS, CLK_MEM = 0, 4
"""``rsmi_clk_type_t``: the shader clock and the memory clock."""


class RsmiUnavailable(Exception):
    """The library is not installed, or ``rsmi_init`` failed; ``str(err)`` says which in one line."""


class _Version(ctypes.Structure):
    _fields_ = [
        ("major", ctypes.c_uint32),
        ("minor", ctypes.c_uint32),
        ("patch", ctypes.c_uint32),
        ("build", ctypes.c_char_p),
    ]


class _Frequencies(ctypes.Structure):
    _fields_ = [
        ("num_supported", ctypes.c_uint32),
        ("current", ctypes.c_uint32),
        ("frequency", ctypes.c_uint64 * MAX_FREQUENCIES),
    ]


@dataclass(frozen=True)
class RsmiReading:
    """One device as the library reports it, in the library's own units; None where it says nothing."""

    index: int
    pci_bus_id: str | None
    busy_pct: int | None
    memory_busy_pct: int | None
    vram_used_bytes: int | None
    vram_total_bytes: int | None
    gtt_used_bytes: int | None
    gtt_total_bytes: int | None
    temperatures_millic: dict[str, int]
    power_average_uw: int | None
    power_cap_uw: int | None
    sclk_hz: int | None
    mclk_hz: int | None
    fan_rpm: int | None
    fan_pwm: int | None


def load_library(names: tuple[str, ...] = LIBRARY_NAMES) -> ctypes.CDLL:
    """The first of ``names`` that loads; RsmiUnavailable naming them when none does."""
    for name in names:
        try:
            return ctypes.CDLL(name)
        except OSError:
            continue
    raise RsmiUnavailable(f"librocm_smi64 not found (tried {', '.join(names)})")


def library_version(lib: ctypes.CDLL) -> str:
    """``rsmi_version_get`` as ``5.2.3`` (it needs no ``rsmi_init``)."""
    version = _Version()
    if lib.rsmi_version_get(ctypes.byref(version)) != SUCCESS:
        return "unknown"
    return f"{version.major}.{version.minor}.{version.patch}"


def loaded_path(maps: Path = Path("/proc/self/maps")) -> str | None:
    """Where the loaded library's file is (distributions build it with version 1.0.0: the path tells more)."""
    try:
        lines = maps.read_text().splitlines()
    except OSError:
        return None
    return next((line.split()[-1] for line in lines if "librocm_smi64" in line), None)


def bus_id(bdfid: int) -> str:
    """The library's 64-bit BDFID (domain << 32 | bus << 8 | device << 3 | function) as ``0000:03:00.0``."""
    return f"{bdfid >> 32 & 0xFFFFFFFF:04x}:{bdfid >> 8 & 0xFF:02x}:{bdfid >> 3 & 0x1F:02x}.{bdfid & 0x7:x}"


class RsmiSession:
    """``rsmi_init`` .. ``rsmi_shut_down`` around reads of every device the library found."""

    def __init__(self, lib: ctypes.CDLL) -> None:
        self._lib = lib
        status = lib.rsmi_init(ctypes.c_uint64(0))
        if status != SUCCESS:
            raise RsmiUnavailable(f"rsmi_init failed: {self._status_text(status)}")
        count = ctypes.c_uint32(0)
        if lib.rsmi_num_monitor_devices(ctypes.byref(count)) != SUCCESS:
            count.value = 0
        self.device_count = int(count.value)

    def __enter__(self) -> RsmiSession:
        return self

    def __exit__(self, *_exc: object) -> None:
        self._lib.rsmi_shut_down()

    def read(self, index: int, clocks: bool = True) -> RsmiReading:
        """Every field of device ``index``; the clocks left None when not ``clocks`` (parsing some cards'
        ``pp_dpm_*`` aborts the process: ROCm/rocm_smi_lib#182)."""
        u32, u64, i64 = ctypes.c_uint32, ctypes.c_uint64, ctypes.c_int64
        lib, dv = self._lib, ctypes.c_uint32(index)
        bdfid = self._get(u64, lambda p: lib.rsmi_dev_pci_id_get(dv, p))
        temps = {
            label: value for label, sensor in TEMP_SENSORS.items() if (value := self._temp(dv, sensor)) is not None
        }
        return RsmiReading(
            index=index,
            pci_bus_id=bus_id(bdfid) if bdfid is not None else None,
            busy_pct=self._get(u32, lambda p: lib.rsmi_dev_busy_percent_get(dv, p)),
            memory_busy_pct=self._get(u32, lambda p: lib.rsmi_dev_memory_busy_percent_get(dv, p)),
            vram_used_bytes=self._get(u64, lambda p: lib.rsmi_dev_memory_usage_get(dv, MEM_VRAM, p)),
            vram_total_bytes=self._get(u64, lambda p: lib.rsmi_dev_memory_total_get(dv, MEM_VRAM, p)),
            gtt_used_bytes=self._get(u64, lambda p: lib.rsmi_dev_memory_usage_get(dv, MEM_GTT, p)),
            gtt_total_bytes=self._get(u64, lambda p: lib.rsmi_dev_memory_total_get(dv, MEM_GTT, p)),
            temperatures_millic=temps,
            power_average_uw=self._get(u64, lambda p: lib.rsmi_dev_power_ave_get(dv, 0, p)),
            power_cap_uw=self._get(u64, lambda p: lib.rsmi_dev_power_cap_get(dv, 0, p)),
            sclk_hz=self._clock(dv, CLK_SYS) if clocks else None,
            mclk_hz=self._clock(dv, CLK_MEM) if clocks else None,
            fan_rpm=self._get(i64, lambda p: lib.rsmi_dev_fan_rpms_get(dv, 0, p)),
            fan_pwm=self._get(i64, lambda p: lib.rsmi_dev_fan_speed_get(dv, 0, p)),
        )

    def _get(self, kind: type[ctypes._SimpleCData[int]], call: Callable[[object], int]) -> int | None:
        value = kind(0)
        return int(value.value) if call(ctypes.byref(value)) == SUCCESS else None

    def _temp(self, dv: ctypes.c_uint32, sensor: int) -> int | None:
        """Millidegrees of one sensor (``rsmi_temperature_type_t``), None where the card has no such label."""
        return self._get(ctypes.c_int64, lambda p: self._lib.rsmi_dev_temp_metric_get(dv, sensor, TEMP_CURRENT, p))

    def _clock(self, dv: ctypes.c_uint32, clk_type: int) -> int | None:
        """The frequency of the level the driver marks current (``*``) in ``pp_dpm_*``."""
        freqs = _Frequencies()
        if self._lib.rsmi_dev_gpu_clk_freq_get(dv, clk_type, ctypes.byref(freqs)) != SUCCESS:
            return None
        if not freqs.current < min(freqs.num_supported, MAX_FREQUENCIES):
            return None
        return int(freqs.frequency[freqs.current])

    def _status_text(self, status: int) -> str:
        text = ctypes.c_char_p()
        if self._lib.rsmi_status_string(status, ctypes.byref(text)) != SUCCESS or not text.value:
            return f"status {status}"
        return text.value.decode(errors="replace").split(":")[0]


def read_all(lib: ctypes.CDLL, clocks: bool = True) -> list[RsmiReading]:
    """Every device the library finds, read once; RsmiUnavailable when it cannot initialise."""
    with RsmiSession(lib) as session:
        return [session.read(i, clocks) for i in range(session.device_count)]


NO_CLOCKS = "--no-clocks"


def main(args: list[str]) -> int:
    """Print the library's version, then its readings (or why it cannot read), as JSON lines.

    Run as a child process by ``rocmtui doctor`` and the tests: the library aborts the process on some
    cards' files (a failed assert), which must not take the caller with it; the version line is out by then.
    With ``--no-clocks`` the clocks, where that abort happens, are not read.
    """
    try:
        lib = load_library()
    except RsmiUnavailable as err:
        print(encode_json({"error": str(err)}).decode())
        return 1
    print(encode_json({"version": f"{library_version(lib)} ({loaded_path() or 'path unknown'})"}).decode(), flush=True)
    try:
        readings = read_all(lib, clocks=NO_CLOCKS not in args)
    except RsmiUnavailable as err:
        print(encode_json({"error": str(err)}).decode())
        return 1
    print(encode_json({"devices": [asdict(r) for r in readings]}).decode())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
