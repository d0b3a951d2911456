"""The GPU card's extra readings (throttle, ECC, GTT, PCIe, codecs): where they go, when they are left out,
and how throttle reasons colour the readings they concern."""

from __future__ import annotations

from dataclasses import replace

from ui_helpers import synthetic_gpu_sets

from rocmtui.gpu import throttle
from rocmtui.gpu.sample import GpuSample
from rocmtui.ui.look.severity import ecc_level, power_level, temp_level, throttle_level
from rocmtui.ui.widgets.gpu_card import full_fields, full_lines

WIDTH = 76
"""The readout's width in a full card at 80 columns (border and padding taken off)."""


def _gpu(**changes: object) -> GpuSample:
    return replace(synthetic_gpu_sets(1, count=1)[0].gpus[0], **changes)  # type: ignore[arg-type]


def test_a_card_without_the_extra_readings_shows_no_placeholder_for_them() -> None:
    lines = full_lines(_gpu(), WIDTH)
    assert len(lines) == 5
    text = "\n".join(lines)
    for word in ("throttled", "ECC", "GTT", "PCIe", "enc", "N/A"):
        assert word not in text


def test_extra_readings_fill_the_clock_line_then_the_temperature_line_within_the_width() -> None:
    gpu = _gpu(
        throttle_reasons=(throttle.POWER,),
        ecc_corrected=0,
        ecc_uncorrected=0,
        gtt_used_bytes=2 * 1024**3,
        gtt_total_bytes=64 * 1024**3,
        pcie_rx_bytes_per_s=3.5 * 1024**3,
        pcie_tx_bytes_per_s=200 * 1024**2,
        encoder_pct=12.0,
        decoder_pct=0.0,
    )
    lines = full_lines(gpu, WIDTH)
    assert all(len(line) <= WIDTH for line in lines)
    assert lines[4] == "clock sclk 2100 mclk 1300 MHz  throttled: power cap  ECC 0  GTT 2.0/64.0 GiB"
    assert lines[3] == "temp  edge 40°C junc 50°C mem 45°C  PCIe rx 3.5 GiB/s tx 200.0 MiB/s"
    assert "enc" not in "\n".join(lines)  # last in importance, and no room left for it
    narrow = full_lines(gpu, 40)
    assert all(len(line) <= 40 for line in narrow)
    assert narrow[4] == "clock sclk 2100 mclk 1300 MHz  ECC 0"  # the throttle piece did not fit; ECC did


def test_the_most_important_reading_wins_the_room() -> None:
    gpu = _gpu(throttle_reasons=(throttle.THERMAL,), pcie_rx_bytes_per_s=1.0, pcie_tx_bytes_per_s=1.0)
    width = len("clock sclk 2100 mclk 1300 MHz  throttled: thermal") + 1
    lines = full_lines(gpu, width)
    assert lines[4].endswith("throttled: thermal")
    assert "PCIe" not in "\n".join(lines)  # no room left on either line


def test_the_throttle_reasons_take_a_shorter_form_before_they_are_left_out() -> None:
    gpu = _gpu(throttle_reasons=(throttle.POWER,))
    clock = "clock sclk 2100 mclk 1300 MHz"
    assert full_lines(gpu, len(clock) + len("  throttled: power cap"))[4] == clock + "  throttled: power cap"
    assert full_lines(gpu, len(clock) + len("  slow: power cap"))[4] == clock + "  slow: power cap"
    assert "power cap" not in "\n".join(full_lines(gpu, len(clock)))


def test_throttle_reasons_colour_the_readings_they_concern() -> None:
    cool = _gpu(temperatures_c=(("edge", 40.0),), temp_crit_c=100.0)
    assert temp_level(cool) == "calm"
    assert temp_level(replace(cool, throttle_reasons=(throttle.THERMAL,))) == "critical"
    light = _gpu(power_w=100.0, power_cap_w=750.0)
    assert power_level(light) == "calm"
    assert power_level(replace(light, throttle_reasons=(throttle.POWER,))) == "warning"
    assert power_level(replace(light, power_cap_w=None, throttle_reasons=(throttle.POWER,))) == "warning"
    assert throttle_level(replace(light, throttle_reasons=())) is None
    assert throttle_level(replace(light, throttle_reasons=(throttle.POWER,))) == "warning"
    assert throttle_level(replace(light, throttle_reasons=(throttle.HW_SLOWDOWN, throttle.POWER))) == "critical"


def test_the_throttle_piece_carries_its_level_and_ecc_errors_theirs() -> None:
    gpu = _gpu(throttle_reasons=(throttle.HW_SLOWDOWN,), ecc_corrected=3, ecc_uncorrected=1)
    clock_line = full_fields(gpu, WIDTH)[4]
    assert ("throttled: hw slowdown", "critical") in clock_line
    assert ("ECC 3 corr 1 uncorr", "critical") in clock_line
    assert ecc_level(replace(gpu, ecc_uncorrected=0)) == "warning"
    assert ecc_level(replace(gpu, ecc_corrected=0, ecc_uncorrected=0)) == "calm"
    assert ecc_level(replace(gpu, ecc_corrected=None, ecc_uncorrected=None)) is None
