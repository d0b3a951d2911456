"""FAKE ``pyrsmi.rocml`` for tests: no AMD SMI library exists on the test machine.

Keeps pyrsmi 1.1.0's real function names, signatures and conventions: getters return -1
on error (the name and UUID getters ""), ``smi_initialize()`` raises ROCMLError_LibraryNotFound or
RuntimeError, an out-of-range device index gives -1 (pyrsmi catches its own ValueError),
and ``smi_get_device_compute_process()`` raises AttributeError as it does over
libamd_smi.so, which lacks the rsmi_compute_process_info_get symbol it calls.
"""

from __future__ import annotations

import sys
import types
from dataclasses import dataclass, field

import pytest


class ROCMLError_LibraryNotFound(Exception):  # pyrsmi's own class name
    pass


class ROCMLError_DriverNotLoaded(Exception):  # pyrsmi's own class name
    pass


@dataclass
class FakeDevice:
    """What one GPU reports; -1 means "the library call failed" exactly as pyrsmi returns it."""

    name: str = "AMD Instinct MI300X"
    utilization: int = 87
    vram_used: int = 3 * 2**30
    vram_total: int = 192 * 2**30
    gtt_used: int = 2**27
    gtt_total: int = 64 * 2**30
    memory_busy: int = 23
    power_w: float = 550.0
    fan_rpm: int = -1  # MI300X has no fan: pyrsmi returns -1
    uuid: str = ""
    """``smi_get_device_uuid``'s answer; "" is its error value."""
    pci_id: int = -1
    """``smi_get_device_pci_id``'s 64-bit BDFID: domain << 32 | bus << 8 | device << 3 | function; -1 on error."""


@dataclass
class FakeRocml:
    devices: list[FakeDevice] = field(default_factory=list)
    init_error: Exception | None = None
    compute_pids: list[int] | None = None
    """None: the call raises AttributeError, as real pyrsmi 1.1 over libamd_smi.so does."""
    calls: list[str] = field(default_factory=list)
    initialized: bool = False

    def module(self) -> types.ModuleType:
        """A module object with pyrsmi.rocml's functions bound to this state."""
        mod = types.ModuleType("pyrsmi.rocml", "FAKE pyrsmi.rocml")
        mod.ROCMLError_LibraryNotFound = ROCMLError_LibraryNotFound  # type: ignore[attr-defined]
        mod.ROCMLError_DriverNotLoaded = ROCMLError_DriverNotLoaded  # type: ignore[attr-defined]
        for name in dir(self):
            if name.startswith("smi_"):
                setattr(mod, name, getattr(self, name))
        return mod

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Make ``from pyrsmi import rocml`` return this fake."""
        package = types.ModuleType("pyrsmi", "FAKE pyrsmi package")
        rocml = self.module()
        package.rocml = rocml  # type: ignore[attr-defined]
        monkeypatch.setitem(sys.modules, "pyrsmi", package)
        monkeypatch.setitem(sys.modules, "pyrsmi.rocml", rocml)

    def _dev(self, dev: int) -> FakeDevice | None:
        self.calls.append(f"dev{dev}")
        return self.devices[dev] if 0 <= dev < len(self.devices) and self.initialized else None

    def smi_initialize(self) -> None:
        if self.init_error is not None:
            raise self.init_error
        self.initialized = True

    def smi_shutdown(self) -> None:
        self.initialized = False
        self.calls.append("shutdown")

    def smi_get_device_count(self) -> int:
        return len(self.devices)

    def smi_get_device_name(self, dev: int) -> str:
        d = self._dev(dev)
        return d.name if d else ""

    def smi_get_device_utilization(self, dev: int) -> int:
        d = self._dev(dev)
        return d.utilization if d else -1

    def smi_get_device_memory_used(self, dev: int, type: str = "VRAM") -> int:  # pyrsmi's name
        d = self._dev(dev)
        if d is None or type not in ("VRAM", "VIS_VRAM", "GTT"):
            return -1
        return d.gtt_used if type == "GTT" else d.vram_used

    def smi_get_device_memory_total(self, dev: int, type: str = "VRAM") -> int:  # pyrsmi's name
        d = self._dev(dev)
        if d is None or type not in ("VRAM", "VIS_VRAM", "GTT"):
            return -1
        return d.gtt_total if type == "GTT" else d.vram_total

    def smi_get_device_memory_busy(self, dev: int) -> int:
        d = self._dev(dev)
        return d.memory_busy if d else -1

    def smi_get_device_average_power(self, dev: int) -> float:
        d = self._dev(dev)
        return d.power_w if d else -1

    def smi_get_device_fan_rpms(self, dev: int, index: int = 0) -> int:
        d = self._dev(dev)
        return d.fan_rpm if d else -1

    def smi_get_device_uuid(self, dev: int, format: str = "roc") -> str:  # pyrsmi's names
        d = self._dev(dev)
        return d.uuid if d else ""

    def smi_get_device_pci_id(self, dev: int) -> int:
        d = self._dev(dev)
        return d.pci_id if d else -1

    def smi_get_device_compute_process(self) -> list[int]:
        self.calls.append("compute_process")
        if self.compute_pids is None:
            raise AttributeError("libamd_smi.so: undefined symbol: rsmi_compute_process_info_get")
        return list(self.compute_pids)
