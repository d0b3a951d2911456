"""The AMD backends over REAL captures (tests/data/amd, see SOURCES.md): the sysfs reader over amdgpu sysfs
trees from LACT's snapshots, and the pyrsmi backend over FAKE pyrsmi/amdsmi modules that answer what real
cards printed in ``rocm-smi --json`` (Telegraf's test data).

Each expectation is taken from the captured file it comes from, so the test states the reader's rule (units,
which file wins) and the card's quirk, not a number typed in twice.
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from fakes.fake_amdsmi import FakeAmdSmi
from fakes.fake_pyrsmi import FakeRocml
from fakes.rocm_smi_capture import BUSY_KEYS, fake_device, fake_temps, load_cards, number

from rocmtui.config import MonitorConfig
from rocmtui.gpu import gpu_metrics, rocm, sysfs
from rocmtui.gpu.sample import GpuSample

CAPTURES = Path(__file__).parent.parent / "data" / "amd"


def _device(card: str) -> Path:
    (card_dir,) = (CAPTURES / card / "class" / "drm").iterdir()
    return card_dir / "device"


def _hwmon(card: str) -> Path:
    (hwmon,) = (_device(card) / "hwmon").iterdir()
    return hwmon


def _int(path: Path) -> int:
    return int(path.read_bytes().split(b"\0", 1)[0])


def _sample(card: str) -> GpuSample:
    backend = sysfs.open_backend(MonitorConfig(sysfs_root=CAPTURES / card))
    try:
        assert backend.device_count() == 1
        return backend.sample(0)
    finally:
        backend.close()


def test_rdna3_7900xtx_reads_edge_junction_and_mem_with_the_junction_limits() -> None:
    s, hwmon = _sample("rx7900xtx"), _hwmon("rx7900xtx")
    assert s.error is None
    assert [label for label, _ in s.temperatures_c] == ["edge", "junction", "mem"]
    assert dict(s.temperatures_c)["mem"] == _int(hwmon / "temp3_input") / 1000
    assert s.temperature_c == _int(hwmon / "temp2_input") / 1000  # the headline is the junction
    assert s.temp_crit_c == _int(hwmon / "temp2_crit") / 1000  # the junction's own limit, not the edge's
    assert s.temp_emergency_c == _int(hwmon / "temp2_emergency") / 1000
    assert _int(hwmon / "temp2_crit_hyst") == -273150  # the sentinel is there and is not taken as a limit
    assert not (hwmon / "power1_input").exists()
    assert s.power_w == pytest.approx(_int(hwmon / "power1_average") / 1e6)  # RDNA: power1_average only
    assert s.power_cap_w == pytest.approx(_int(hwmon / "power1_cap") / 1e6)
    assert s.utilization_pct == _int(_device("rx7900xtx") / "gpu_busy_percent")
    assert s.name == "AMD GPU"  # a partial capture: no product_name and no PCI device id
    assert s.memory_total_bytes is None  # nor mem_info_*: absent, not zero


def test_rdna3_7800xt_gpu_metrics_v1_3_says_nothing_holds_the_clocks() -> None:
    s = _sample("rx7800xt")
    assert (_device("rx7800xt") / "gpu_metrics").read_bytes()[2:4] == b"\x01\x03"  # format 1, content 3
    assert s.throttle_reasons == ()  # an idle desktop card: the mask is read and empty, not unknown


def test_polaris_rx580_has_only_an_edge_sensor_and_its_pcie_bw_is_read() -> None:
    device, hwmon = _device("rx580"), _hwmon("rx580")
    s = _sample("rx580")
    assert [label for label, _ in s.temperatures_c] == ["edge"]  # no junction or mem on Polaris
    assert s.temp_crit_c == _int(hwmon / "temp1_crit") / 1000
    assert s.temp_emergency_c is None  # Polaris has no temp1_emergency
    assert s.name == "AMD GPU (0x67df)"  # product_name is empty on this card: the PCI id names it
    assert s.fan_rpm == _int(hwmon / "fan1_input")
    assert (s.memory_used_bytes, s.gtt_used_bytes) == (
        _int(device / "mem_info_vram_used"),
        _int(device / "mem_info_gtt_used"),
    )
    assert s.throttle_reasons is None  # no gpu_metrics on Polaris


def test_vega56_pcie_bw_capture_gives_bytes_per_second_on_the_reader_thread() -> None:
    backend = sysfs.open_backend(MonitorConfig(sysfs_root=CAPTURES / "vega56"))
    try:
        backend.sample(0)
        assert backend._pcie.round_done.wait(10.0)
        s = backend.sample(0)
    finally:
        backend.close()
    received, sent, payload = (int(x) for x in (_device("vega56") / "pcie_bw").read_text().split())
    assert (s.pcie_rx_bytes_per_s, s.pcie_tx_bytes_per_s) == (received * payload, sent * payload)
    assert [label for label, _ in s.temperatures_c] == ["edge", "junction", "mem"]  # Vega has HBM sensors


def test_rx5500xt_reports_its_memory_temperature_as_zero_which_is_left_out() -> None:
    hwmon = _hwmon("rx5500xt")
    assert (hwmon / "temp3_label").read_text().strip() == "mem" and _int(hwmon / "temp3_input") == 0
    s = _sample("rx5500xt")
    assert [label for label, _ in s.temperatures_c] == ["edge", "junction"]


def test_phoenix_apu_power_input_and_average_no_cap_no_junction_and_gtt() -> None:
    device, hwmon = _device("phoenix"), _hwmon("phoenix")
    s = _sample("phoenix")
    assert (hwmon / "power1_input").exists() and (hwmon / "power1_average").exists()
    assert s.power_w == pytest.approx(_int(hwmon / "power1_average") / 1e6)  # the average is preferred
    assert s.power_cap_w is None  # APUs have no power1_cap
    assert [label for label, _ in s.temperatures_c] == ["edge"]
    assert (s.temp_crit_c, s.temp_emergency_c) == (None, None)
    assert s.gtt_total_bytes == _int(device / "mem_info_gtt_total")
    assert s.gtt_total_bytes is not None and s.memory_total_bytes is not None
    assert s.gtt_total_bytes > s.memory_total_bytes  # the carve-out is the smaller pool on an APU
    assert s.uuid is None  # unique_id is empty on this APU
    assert s.throttle_reasons is None  # gpu_metrics v2.1 has only the ASIC-dependent mask
    assert s.fan_rpm is None


def test_van_gogh_reads_the_slow_ppt_as_its_power() -> None:
    hwmon = _hwmon("vangogh")
    assert (hwmon / "power1_label").read_text().strip() == "slowPPT"
    s = _sample("vangogh")
    assert s.power_w == pytest.approx(_int(hwmon / "power1_average") / 1e6)
    assert s.power_cap_w == pytest.approx(_int(hwmon / "power1_cap") / 1e6)
    assert s.sclk_mhz == pytest.approx(_int(hwmon / "freq1_input") / 1e6)
    assert not (hwmon / "freq2_input").exists()  # no freq2 on this APU: the memory clock is pp_dpm_mclk's level
    assert "687Mhz *" in (_device("vangogh") / "pp_dpm_mclk").read_text()
    assert s.mclk_mhz == 687.0


def test_a_nul_padded_capture_still_names_its_hwmon() -> None:
    name = _hwmon("rx7900xtx") / "name"
    assert b"\0" in name.read_bytes()
    assert _sample("rx7900xtx").temperatures_c  # found through the padded "amdgpu\n\0\0..."


@pytest.mark.parametrize("capture", ["rx6700xt_rocm612.json", "mi100_rocm602.json", "vega-10-XT.json"])
def test_the_rocm_backend_shows_what_real_cards_reported_to_rocm_smi(
    capture: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    cards = load_cards(CAPTURES / "rocm-smi" / capture)
    FakeRocml(devices=[fake_device(card) for card in cards]).install(monkeypatch)
    FakeAmdSmi(temps=[fake_temps(card) for card in cards]).install(monkeypatch)
    backend = rocm.open_backend(MonitorConfig(backend="rocm", sysfs_root=tmp_path))
    try:
        samples = [backend.sample(i) for i in range(backend.device_count())]
    finally:
        backend.close()
    assert len(samples) == len(cards)
    for s, card in zip(samples, cards, strict=True):
        assert s.error is None
        assert s.memory_total_bytes == number(card, "VRAM Total Memory (B)")
        assert s.memory_used_bytes == number(card, "VRAM Total Used Memory (B)")
        assert s.gtt_used_bytes == number(card, "GTT Total Used Memory (B)")
        assert s.utilization_pct == number(card, "GPU use (%)")
        assert s.power_w == number(card, "Average Graphics Package Power (W)")
        assert s.memory_busy_pct == number(card, *BUSY_KEYS)  # "N/A" on MI100 -> None
        assert s.fan_rpm == number(card, "Fan RPM")  # MI100 and the RX 6700 XT report none
        assert dict(s.temperatures_c) == {
            label: value
            for label, value in zip(("edge", "junction", "mem"), fake_temps(card).values(), strict=True)
            if value is not None
        }
        assert s.temperature_c == number(card, "Temperature (Sensor junction) (C)")


GPU_METRICS_CARDS = ("phoenix", "rx6900xt", "rx7600s", "rx7800xt", "rx9070", "strixpoint")
"""Every capture with a gpu_metrics file: v2.1 (Phoenix), v1.3 (RDNA2 to RDNA4 dGPUs), v3.0 (Strix Point)."""


@pytest.mark.parametrize("card", GPU_METRICS_CARDS)
def test_gpu_metrics_is_dispatched_on_its_header_whatever_the_file_length(card: str) -> None:
    data = (_device(card) / "gpu_metrics").read_bytes()
    size, fmt, content = struct.unpack_from("<HBB", data, 0)
    assert size <= len(data)  # the RX 6900 XT's capture is 4096 bytes for a 120-byte v1.3 table
    reasons = _sample(card).throttle_reasons
    if (fmt, content) in gpu_metrics.INDEP_OFFSET:
        assert reasons is not None  # v1.3: the ASIC-independent mask is read
    else:
        assert reasons is None  # v2.1, v3.0: no such mask at a fixed place, so no guess
