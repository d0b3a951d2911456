"""Every captured card read by AMD's ROCm SMI library and by rocmtui, field by field (REAL captures, REAL library).

Each capture in tests/data/amd is laid out as a sysfs tree (``amd_sysfs_layout``), bind-mounted over /sys in a
private mount namespace (``unshare -m``, root only) and read there by Debian's ``librocm_smi64`` (5.2.3) through
ctypes (``rocmtui.gpu.rsmi_lib``). rocmtui's sysfs backend reads the same tree. Every field must agree within
its unit's rounding (``rocmtui.gpu.rsmi_compare``), or be named below with the reason. A card the library
cannot read at all is named in LIBRARY_FAILS with the upstream report; if a newer library reads it, the test
fails and the table must be updated.

rocmtui's third reader, the ROCm backend, needs pyrsmi over AMD SMI (``libamd_smi.so``, ROCm 6+), which
Debian does not ship: ``test_rocm_backend_cannot_load_over_the_older_library`` states that.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fakes.amd_sysfs_layout import (
    FALLBACK_SLOT,
    UNSHARE,
    captured_card,
    lay_out,
    namespace_unavailable_reason,
    pci_slot,
)

from rocmtui.config import MonitorConfig
from rocmtui.gpu import amdgpu_files, rocm, rsmi_compare, sysfs
from rocmtui.gpu.backend import BackendUnavailable
from rocmtui.gpu.rsmi_lib import RsmiReading

CAPTURES = Path(__file__).parent.parent / "data" / "amd"
CARDS = sorted(p.name for p in CAPTURES.iterdir() if (p / "class" / "drm").is_dir())
PROBE = Path(__file__).parent / "rsmi_probe.py"

LIBRARY_FAILS = {
    "r7-240": (
        "rsmi_init failed",
        "no in0_label (SI/CIK): 5.2.3 looks the missing label up in its voltage map before checking the read "
        "and throws map::at (ROCm/rocm_smi_lib#82; fixed by f44d1ea, rocm-5.6.0)",
    ),
    "r9-280": ("rsmi_init failed", "no in0_label, as the R7 240 (ROCm/rocm_smi_lib#82)"),
}
"""Cards the library cannot read: (what it does, why)."""

CLOCK_ABORT = (
    "pp_dpm_sclk's RDNA4 deep-sleep line 'S: 500Mhz' is not '<n>: <freq><unit>': reading the clocks, the "
    "library asserts in get_multiplier_from_str and aborts the process (ROCm/rocm_smi_lib#182, #231); the "
    "other fields are read again without the clocks"
)
CLOCK_ABORTS = ("rx9070", "rx9070xt")

DPM_VS_HWMON = "the library's clock is the DPM level marked current in pp_dpm_*, rocmtui's the hwmon freq*_input"
KNOWN_DIFFERENCES = {
    "rx5500xt": {
        "temp_mem_c": "the memory sensor reads exactly 0: the library reports 0 °C, rocmtui N/A (no reading)",
        "sclk_mhz": DPM_VS_HWMON,
    },
    "rx5700xt": {"sclk_mhz": "pp_dpm_sclk marks no level current: the library says nothing, hwmon says 10 MHz"},
    "rx580": {"sclk_mhz": DPM_VS_HWMON},
    "rx6600": {"sclk_mhz": DPM_VS_HWMON},
    "rx7800xt": {"sclk_mhz": DPM_VS_HWMON},
    "vega56": {"sclk_mhz": DPM_VS_HWMON},
    "rx9070": {"sclk_mhz": CLOCK_ABORT, "mclk_mhz": CLOCK_ABORT},
    "rx9070xt": {"sclk_mhz": CLOCK_ABORT, "mclk_mhz": CLOCK_ABORT},
}
"""card -> field -> why rocmtui and the library differ there. Every other field agrees."""


@pytest.fixture(scope="module")
def laid_out(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("amd-sysfs")
    return {card: lay_out(CAPTURES / card, root / card).root for card in CARDS}


@pytest.fixture(scope="module")
def library(laid_out: dict[str, Path]) -> dict[str, Any]:
    """The library's answer for every card, read in one namespace (one process per card)."""
    reason = namespace_unavailable_reason()
    if reason is not None:
        pytest.skip(reason)
    pairs = [f"{card}={tree}" for card, tree in laid_out.items()]
    command = [*UNSHARE, sys.executable, str(PROBE), *pairs]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env, check=False)
    assert done.returncode == 0, done.stderr
    cards: dict[str, Any] = json.loads(done.stdout)["cards"]
    return cards


def _rocmtui_sample(tree: Path) -> Any:
    backend = sysfs.open_backend(MonitorConfig(sysfs_root=tree))
    try:
        assert backend.device_count() == 1
        return backend.sample(0)
    finally:
        backend.close()


def test_at_least_ten_lact_cards_are_compared() -> None:
    assert len(CARDS) >= 10
    assert len([c for c in CARDS if c not in LIBRARY_FAILS]) >= 10


@pytest.mark.parametrize("card", [c for c in CARDS if c not in LIBRARY_FAILS])
def test_rocmtui_agrees_with_the_library(card: str, library: dict[str, Any], laid_out: dict[str, Path]) -> None:
    answer = library[card]
    assert "devices" in answer, answer
    assert ("SIGABRT" in answer.get("crash", "")) == (card in CLOCK_ABORTS)
    (device,) = answer["devices"]
    reading = RsmiReading(**device)
    sample = _rocmtui_sample(laid_out[card])
    assert sample.error is None
    assert reading.pci_bus_id == (pci_slot(captured_card(CAPTURES / card) / "device") or FALLBACK_SLOT)
    pairs = rsmi_compare.compare(sample, reading)
    differing = {p.field: p.describe() for p in pairs if not p.agrees}
    expected = KNOWN_DIFFERENCES.get(card, {})
    assert set(differing) == set(expected), differing
    assert len(pairs) == 15  # busy, memory busy, VRAM and GTT used/total, 3 temps, power, cap, 2 clocks, RPM, PWM


@pytest.mark.parametrize(
    "card", [c for c, why in KNOWN_DIFFERENCES.items() if "sclk_mhz" in why and c not in CLOCK_ABORTS]
)
def test_the_clocks_differ_because_they_come_from_different_files(
    card: str, library: dict[str, Any], laid_out: dict[str, Path]
) -> None:
    """The library's shader clock is pp_dpm_sclk's starred level; rocmtui's is hwmon's freq1_input."""
    (device,) = library[card]["devices"]
    device_dir = laid_out[card] / "class" / "drm" / "card0" / "device"
    starred = amdgpu_files.read_dpm_current_mhz(device_dir / "pp_dpm_sclk")
    assert (None if device["sclk_hz"] is None else device["sclk_hz"] / 1e6) == starred
    hwmon = amdgpu_files.find_hwmon(device_dir)
    assert hwmon is not None
    freq1 = amdgpu_files.read_int(hwmon / "freq1_input")
    assert freq1 is not None
    assert _rocmtui_sample(laid_out[card]).sclk_mhz == pytest.approx(freq1 / 1e6)


@pytest.mark.parametrize("card", sorted(LIBRARY_FAILS))
def test_cards_the_library_cannot_read_fail_as_reported_upstream(
    card: str, library: dict[str, Any], laid_out: dict[str, Path]
) -> None:
    what, _why = LIBRARY_FAILS[card]
    answer = library[card]
    assert "devices" not in answer
    assert what in (answer.get("error") or answer.get("crash") or "")
    assert _rocmtui_sample(laid_out[card]).error is None  # rocmtui reads the same tree


def test_apu_memory_is_a_small_carve_out_beside_a_large_gtt(library: dict[str, Any]) -> None:
    """Strix Point: 490 of 512 MiB of carve-out "VRAM" in use, 3.7 GiB in GTT; both readers say so."""
    (device,) = library["strixpoint"]["devices"]
    assert device["vram_total_bytes"] == 512 * 2**20
    assert device["vram_used_bytes"] / device["vram_total_bytes"] > 0.9
    assert device["gtt_used_bytes"] > 7 * device["vram_used_bytes"]
    assert device["power_cap_uw"] is None  # APUs have no power1_cap


def test_apu_memory_clock_comes_from_pp_dpm_mclk(laid_out: dict[str, Path]) -> None:
    """APUs have no hwmon freq2_input; rocmtui then takes pp_dpm_mclk's current level, as the library does."""
    for card in ("phoenix", "vangogh"):
        device_dir = laid_out[card] / "class" / "drm" / "card0" / "device"
        hwmon = amdgpu_files.find_hwmon(device_dir)
        assert hwmon is not None and not (hwmon / "freq2_input").exists()
        assert _rocmtui_sample(laid_out[card]).mclk_mhz == amdgpu_files.read_dpm_current_mhz(device_dir / "pp_dpm_mclk")


def test_rocm_backend_cannot_load_over_the_older_library() -> None:
    """pyrsmi 1.1 loads libamd_smi.so only; where just librocm_smi64 is installed it says so and rocmtui falls
    back to sysfs."""
    pytest.importorskip("pyrsmi")
    if any(Path(root, "lib", "libamd_smi.so").exists() for root in ("/opt/rocm", os.environ.get("ROCM_PATH", "/x"))):
        pytest.skip("libamd_smi.so is installed here: the rocm backend can load")
    with pytest.raises(BackendUnavailable, match="libamd_smi"):
        rocm.open_backend(MonitorConfig())


def test_sources_names_every_card() -> None:
    sources = (CAPTURES / "SOURCES.md").read_text()
    assert [card for card in CARDS if f"`{card}/`" not in sources] == []


CLI_LOOP = (
    'for pair in "$@"; do name=${pair%%=*}; tree=${pair#*=}; '
    'mount --bind "$tree" /sys && mount -t tmpfs rsmi-shm /dev/shm && '
    'printf "%s " "$name" && rocm-smi --json -t -P -u -f --showmeminfo vram gtt 2>/dev/null | tail -n 1; '
    "umount /dev/shm; umount /sys; done"
)
"""``rocm-smi --json`` (the tool over the same library) for each NAME=TREE, one ``NAME {json}`` line each."""
CLI_KEYS = {
    "GPU use (%)": "busy_pct",
    "Average Graphics Package Power (W)": "power_average_uw",
    "VRAM Total Memory (B)": "vram_total_bytes",
    "GTT Total Used Memory (B)": "gtt_used_bytes",
    "Fan RPM": "fan_rpm",
    "Temperature (Sensor edge) (C)": "edge",
}
"""rocm-smi 5.2.3's JSON key -> the ctypes reading it prints (all values are strings there)."""


@pytest.mark.slow
def test_the_rocm_smi_tool_prints_what_the_library_read(library: dict[str, Any], laid_out: dict[str, Path]) -> None:
    """The tool users run shows the same values as the ctypes reading (a Python start per card: slow tier)."""
    if shutil.which("rocm-smi") is None:
        pytest.skip("the rocm-smi tool is not installed")
    readable = [c for c in CARDS if c not in LIBRARY_FAILS]
    pairs = [f"{card}={laid_out[card]}" for card in readable]
    done = subprocess.run(
        [*UNSHARE, "sh", "-c", CLI_LOOP, "sh", *pairs], capture_output=True, text=True, timeout=300, check=False
    )
    printed = dict(line.split(" ", 1) for line in done.stdout.splitlines() if " {" in line)
    assert sorted(printed) == readable, done.stderr
    for card in readable:
        (cli,) = json.loads(printed[card]).values()
        (device,) = library[card]["devices"]
        for key, field in CLI_KEYS.items():
            value = device["temperatures_millic"].get(field) if field == "edge" else device[field]
            shown = cli.get(key, "N/A")
            if field == "fan_rpm" and not device["fan_pwm"]:
                # showCurrentFans prints no fan at PWM level 0, whatever the RPM (the RX 6600's 1395 included)
                assert key not in cli, (card, key, shown)
            elif value is None:
                assert shown == "N/A" or key not in cli, (card, key, shown)
            elif field == "power_average_uw":
                assert float(shown) == pytest.approx(value / 1e6), (card, key)
            elif field == "edge":
                assert float(shown) == value / 1000, (card, key)
            else:
                assert shown == str(value), (card, key)
