"""The field-by-field rule doctor and the harness use to compare rocmtui with AMD's ROCm SMI library."""

from __future__ import annotations

from rocmtui.gpu.rsmi_compare import FieldPair, compare, disagreements
from rocmtui.gpu.rsmi_lib import RsmiReading, bus_id
from rocmtui.gpu.sample import GpuSample


def _reading(**fields: object) -> RsmiReading:
    base: dict[str, object] = dict.fromkeys(RsmiReading.__dataclass_fields__)
    base.update(index=0, temperatures_millic={})
    base.update(fields)
    return RsmiReading(**base)  # type: ignore[arg-type]


def test_absent_from_both_agrees_absent_from_one_differs() -> None:
    assert FieldPair("power_w", None, None, 1e-3).agrees
    assert not FieldPair("power_w", 12.0, None, 1e-3).agrees
    assert FieldPair("temp_edge_c", 45.0, 45.999, 1.0).agrees  # the library's millidegrees, to 1 degree
    assert not FieldPair("temp_edge_c", 45.0, 47.0, 1.0).agrees


def test_units_are_converted_and_the_clocks_are_left_out_of_the_disagreements() -> None:
    sample = GpuSample(0, "card", 0.0, power_w=41.045, sclk_mhz=798.08, fan_pct=100.0 * 35 / 255)
    reading = _reading(power_average_uw=41_045_000, sclk_hz=900_000_000, fan_pwm=35)
    pairs = {p.field: p for p in compare(sample, reading)}
    assert pairs["power_w"].agrees and pairs["fan_pwm"].agrees
    assert not pairs["sclk_mhz"].agrees
    assert disagreements(list(pairs.values())) == []
    assert [p.field for p in disagreements(list(pairs.values()), include_clocks=True)] == ["sclk_mhz"]


def test_bdfid_is_written_as_a_pci_address() -> None:
    assert bus_id(0xC1 << 8) == "0000:c1:00.0"
    assert bus_id(1 << 32 | 0x03 << 8 | 2 << 3 | 1) == "0001:03:02.1"
