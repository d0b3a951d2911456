"""Feeds the FAKE pyrsmi and amdsmi modules with what REAL cards reported in a ``rocm-smi --json`` capture.

``rocm-smi`` prints the same quantities that pyrsmi's getters and amdsmi's temperature call return: bytes
of VRAM and GTT, GPU use and memory activity in %, average package power in W, fan RPM, and the edge,
junction and memory temperatures in C. Every value in the capture is a string, "N/A" when the card cannot
say, and key names differ between ROCm versions ("Card Series" / "Card series", memory activity under two
names); those become pyrsmi's -1 (or amdsmi's NOT_SUPPORTED) here.
"""

from __future__ import annotations

import json
from pathlib import Path

from fakes.fake_amdsmi import AmdSmiTemperatureType
from fakes.fake_pyrsmi import FakeDevice

NAME_KEYS = ("Device Name", "Card Series", "Card series")
BUSY_KEYS = ("GPU Memory Read/Write Activity (%)", "GPU memory use (%)")
TEMP_KEYS = {
    AmdSmiTemperatureType.EDGE: "Temperature (Sensor edge) (C)",
    AmdSmiTemperatureType.HOTSPOT: "Temperature (Sensor junction) (C)",
    AmdSmiTemperatureType.VRAM: "Temperature (Sensor memory) (C)",
}


def load_cards(path: Path) -> list[dict[str, str]]:
    """The ``card*`` entries of a capture, in card order."""
    data = json.loads(path.read_text())
    cards = sorted((k for k in data if k.startswith("card")), key=lambda k: int(k[4:]))
    return [data[k] for k in cards]


def number(card: dict[str, str], *keys: str) -> float | None:
    """The first of ``keys`` that the card reports as a number; None for "N/A" or absent."""
    for key in keys:
        try:
            return float(card[key])
        except (KeyError, ValueError):
            continue
    return None


def _pyrsmi(value: float | None) -> int:
    return -1 if value is None else int(value)


def fake_device(card: dict[str, str]) -> FakeDevice:
    """pyrsmi's answers for this card, as the capture shows them."""
    name = next((card[k] for k in NAME_KEYS if card.get(k, "").strip() and not card[k].startswith("0x")), "")
    power = number(card, "Average Graphics Package Power (W)", "Current Socket Graphics Package Power (W)")
    return FakeDevice(
        name=name,
        utilization=_pyrsmi(number(card, "GPU use (%)")),
        vram_used=_pyrsmi(number(card, "VRAM Total Used Memory (B)")),
        vram_total=_pyrsmi(number(card, "VRAM Total Memory (B)")),
        gtt_used=_pyrsmi(number(card, "GTT Total Used Memory (B)")),
        gtt_total=_pyrsmi(number(card, "GTT Total Memory (B)")),
        memory_busy=_pyrsmi(number(card, *BUSY_KEYS)),
        power_w=-1 if power is None else power,
        fan_rpm=_pyrsmi(number(card, "Fan RPM")),
    )


def fake_temps(card: dict[str, str]) -> dict[AmdSmiTemperatureType, object]:
    """amdsmi's temperature answers for this card (None: NOT_SUPPORTED)."""
    return {kind: number(card, key) for kind, key in TEMP_KEYS.items()}
