"""The extra readings (encoder/decoder, PCIe, ECC, throttle reasons) through NVML's FAKE module and amdgpu
FAKE sysfs trees, and old recordings that lack them."""

from __future__ import annotations

import json
import struct
from dataclasses import replace
from pathlib import Path

import pynvml
import pytest
from fakes.fake_nvml_readings import FakeGpu, fake_module
from fakes.sysfs_tree import build_card

from rocmtui.config import MonitorConfig
from rocmtui.gpu import gpu_metrics, sysfs, throttle
from rocmtui.gpu import sample_codec as codec
from rocmtui.gpu.nvml import NvmlBackend
from rocmtui.gpu.pcie_bw import PcieBandwidth, parse_pcie_bw

DATA = Path(__file__).parent.parent / "data"


def test_nvml_reads_encoder_decoder_pcie_ecc_and_throttle_in_sample_units() -> None:
    mask = pynvml.nvmlClocksEventReasonSwPowerCap | pynvml.nvmlClocksEventReasonHwThermalSlowdown
    gpu = FakeGpu(12, 3, 2048, 512, 7, 0, mask | pynvml.nvmlClocksEventReasonGpuIdle)
    s = NvmlBackend(fake_module([gpu]), 1).sample(0)
    assert (s.encoder_pct, s.decoder_pct) == (12.0, 3.0)
    assert (s.pcie_rx_bytes_per_s, s.pcie_tx_bytes_per_s) == (2048 * 1024.0, 512 * 1024.0)
    assert (s.ecc_corrected, s.ecc_uncorrected) == (7, 0)
    assert s.throttle_reasons == (throttle.THERMAL, throttle.POWER)  # idle is not a limit; most severe first


def test_nvml_unsupported_readings_are_none_and_one_failing_call_leaves_the_rest() -> None:
    s = NvmlBackend(fake_module([FakeGpu()]), 1).sample(0)
    assert (s.encoder_pct, s.decoder_pct, s.pcie_rx_bytes_per_s, s.ecc_corrected, s.throttle_reasons) == (
        None,
        None,
        None,
        None,
        None,
    )
    broken = FakeGpu(encoder_pct=5, decoder_pct=1, pcie_rx_kb_s=10, pcie_tx_kb_s=20, broken={"pcie", "ecc"})
    s = NvmlBackend(fake_module([broken]), 1).sample(0)
    assert s.error is None
    assert (s.pcie_rx_bytes_per_s, s.ecc_uncorrected) == (None, None)
    assert (s.encoder_pct, s.decoder_pct) == (5.0, 1.0)


def test_nvml_asks_a_not_supported_reading_once_and_a_failed_one_every_tick() -> None:
    gpu = FakeGpu(encoder_pct=None, decoder_pct=4, pcie_rx_kb_s=10, pcie_tx_kb_s=20, broken={"ecc"})
    backend = NvmlBackend(fake_module([gpu]), 1)
    for _ in range(3):
        s = backend.sample(0)
    assert (s.encoder_pct, s.decoder_pct, s.ecc_corrected) == (None, 4.0, None)
    assert gpu.asked["encoder"] == 1  # NOT_SUPPORTED: the card's answer for the session
    assert gpu.asked["decoder"] == 3
    assert gpu.asked["ecc"] == 6  # NVML_ERROR_UNKNOWN, twice a tick: tried again each tick
    other = FakeGpu(encoder_pct=7)
    both = NvmlBackend(fake_module([gpu, other]), 2)
    assert (both.sample(0).encoder_pct, both.sample(1).encoder_pct) == (None, 7.0)  # each device its own


def test_nvml_samples_pcie_throughput_every_few_seconds_and_repeats_it_between() -> None:
    gpu = FakeGpu(pcie_rx_kb_s=2, pcie_tx_kb_s=3)
    backend = NvmlBackend(fake_module([gpu]), 1, pcie_every_s=60.0)
    for _ in range(3):
        s = backend.sample(0)
    assert (s.pcie_rx_bytes_per_s, s.pcie_tx_bytes_per_s) == (2048.0, 3072.0)
    assert gpu.asked["pcie throughput"] == 2  # rx and tx once: 0.9 ms of CPU each on an H200
    gpu.pcie_rx_kb_s = 5
    every_tick = NvmlBackend(fake_module([gpu]), 1, pcie_every_s=0.0)
    assert [every_tick.sample(0).pcie_rx_bytes_per_s for _ in range(2)] == [5120.0, 5120.0]
    assert gpu.asked["pcie throughput"] == 6


def test_nvml_falls_back_to_the_throttle_reasons_call_of_older_nvidia_ml_py() -> None:
    gpu = FakeGpu(clocks_event_mask=pynvml.nvmlClocksThrottleReasonHwSlowdown)
    s = NvmlBackend(fake_module([gpu], event_reasons_call=False), 1).sample(0)
    assert s.throttle_reasons == (throttle.HW_SLOWDOWN,)
    assert NvmlBackend(fake_module([FakeGpu(clocks_event_mask=0)]), 1).sample(0).throttle_reasons == ()


def test_every_nvml_limit_bit_has_a_name_and_the_benign_ones_none() -> None:
    for bit, name in throttle.NVML_BITS.items():
        assert throttle.from_nvml(bit) == (name,)
    benign = (
        pynvml.nvmlClocksEventReasonGpuIdle
        | pynvml.nvmlClocksEventReasonApplicationsClocksSetting
        | pynvml.nvmlClocksEventReasonSyncBoost
        | pynvml.nvmlClocksEventReasonDisplayClockSetting
    )
    assert throttle.from_nvml(benign) == ()


def test_amd_independent_throttle_bits_decode_by_group() -> None:
    assert throttle.from_amd_indep(0) == ()
    assert throttle.from_amd_indep(1 << 4) == (throttle.POWER,)  # SPL
    assert throttle.from_amd_indep(1 << 36 | 1 << 17) == (throttle.THERMAL, throttle.CURRENT)  # hotspot, TDC_SOC
    assert throttle.from_amd_indep(1 << 45) == (throttle.HW_SLOWDOWN,)  # VRHOT1


def _metrics(fmt: int, content: int, size: int, offset: int, mask: int, *, pad_to: int = 0) -> bytes:
    data = bytearray(max(size, pad_to))
    struct.pack_into("<HBB", data, 0, size, fmt, content)
    struct.pack_into("<Q", data, offset, mask)
    return bytes(data)


def test_gpu_metrics_v1_3_and_v2_2_carry_the_mask_other_versions_none() -> None:
    # SYNTHETIC headers with the kernel's struct sizes (v1.3: 120 bytes, v2.2: 128)
    assert gpu_metrics.indep_throttle_status(_metrics(1, 3, 120, 112, 1 << 35)) == 1 << 35
    assert gpu_metrics.indep_throttle_status(_metrics(1, 3, 120, 112, 1, pad_to=4096)) == 1
    assert gpu_metrics.indep_throttle_status(_metrics(2, 2, 128, 120, 1 << 5)) == 1 << 5
    assert gpu_metrics.indep_throttle_status(_metrics(1, 3, 120, 112, gpu_metrics.NOT_AVAILABLE)) is None
    assert gpu_metrics.indep_throttle_status(_metrics(2, 1, 120, 112, 1)) is None
    assert gpu_metrics.indep_throttle_status(_metrics(1, 3, 100, 90, 1)[:100]) is None  # cut short
    assert gpu_metrics.indep_throttle_status(b"\x78") is None


def test_pcie_bw_is_packets_times_payload_and_garbage_is_none() -> None:
    assert parse_pcie_bw("11886 2528 256") == (11886 * 256.0, 2528 * 256.0)
    assert parse_pcie_bw("") is None
    assert parse_pcie_bw("1 2") is None
    assert parse_pcie_bw(None) is None


def test_the_sysfs_backend_reads_pcie_bw_on_its_own_thread(tmp_path: Path) -> None:
    build_card(tmp_path, 0, files={"pcie_bw": "85 4 256"})
    build_card(tmp_path, 1)
    backend = sysfs.open_backend(MonitorConfig(sysfs_root=tmp_path))
    try:
        first = backend.sample(0)  # starts the reader; its first round may not be done yet
        assert first.error is None
        assert backend._pcie.round_done.wait(10.0)
        s = backend.sample(0)
        assert (s.pcie_rx_bytes_per_s, s.pcie_tx_bytes_per_s) == (85 * 256.0, 4 * 256.0)
        assert backend.sample(1).pcie_rx_bytes_per_s is None  # no pcie_bw file on that card
    finally:
        backend.close()


def test_a_stale_pcie_reading_is_dropped(tmp_path: Path) -> None:
    device = build_card(tmp_path, 0, files={"pcie_bw": "10 10 128"})
    reader = PcieBandwidth([device], max_age_s=-1.0)  # every reading counts as too old
    reader.read_round()
    assert reader.latest(0) == (None, None)
    assert not PcieBandwidth([build_card(tmp_path, 1)]).wanted


def test_ras_umc_error_counts_and_gpu_metrics_throttle_on_a_sysfs_card(tmp_path: Path) -> None:
    device = build_card(tmp_path, 0)
    (device / "ras").mkdir()
    (device / "ras" / "umc_err_count").write_text("ue: 1\nce: 12\n")  # the kernel's amdgpu_ras format
    (device / "gpu_metrics").write_bytes(_metrics(1, 3, 120, 112, 1 << 0 | 1 << 34))
    s = sysfs.open_backend(MonitorConfig(sysfs_root=tmp_path)).sample(0)
    assert (s.ecc_corrected, s.ecc_uncorrected) == (12, 1)
    assert s.throttle_reasons == (throttle.THERMAL, throttle.POWER)


def test_a_card_without_ras_or_gpu_metrics_has_none(tmp_path: Path) -> None:
    build_card(tmp_path, 0)
    s = sysfs.open_backend(MonitorConfig(sysfs_root=tmp_path)).sample(0)
    assert (s.ecc_corrected, s.ecc_uncorrected, s.throttle_reasons, s.pcie_rx_bytes_per_s) == (None,) * 4


def test_recordings_without_the_new_fields_still_load_and_new_ones_round_trip() -> None:
    line = (DATA.parent / "ui" / "data" / "monitor-h200-nvml.jsonl").read_text().splitlines()[0]
    old = json.loads(line)
    assert "throttle_reasons" not in old["gpus"][0]
    sample_set = codec.loads(line)
    assert sample_set.gpus[0].throttle_reasons is None and sample_set.gpus[0].ecc_corrected is None
    gpu = NvmlBackend(fake_module([FakeGpu(4, 0, 1, 2, 0, 0, pynvml.nvmlClocksEventReasonSwPowerCap)]), 1).sample(0)
    again = codec.loads(codec.dumps(replace(sample_set, gpus=(gpu,))))
    assert again.gpus[0] == gpu


@pytest.mark.parametrize("bad", ['"power cap"', "[1]"])
def test_a_malformed_throttle_field_is_refused_at_load(bad: str) -> None:
    line = (DATA.parent / "ui" / "data" / "monitor-h200-nvml.jsonl").read_text().splitlines()[0]
    broken = line.replace('"name":', f'"throttle_reasons":{bad},"name":', 1)
    with pytest.raises(ValueError, match="throttle_reasons"):
        codec.loads(broken)
