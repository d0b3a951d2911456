"""FAKE ``amdsmi`` package for tests: no AMD SMI library exists on the test machine.

Keeps the real names: ``amdsmi_init(flag)``, ``amdsmi_shut_down()``,
``amdsmi_get_processor_handles()``, ``amdsmi_get_temp_metric(processor_handle, sensor_type,
metric)``, ``amdsmi_get_gpu_process_list(processor_handle)`` (a list of dicts as
in amdsmi 6.1+/7.x: name, pid, mem, engine_usage, memory_usage {gtt_mem, cpu_mem, vram_mem},
cu_occupancy), the enums AmdSmiInitFlags / AmdSmiTemperatureType (EDGE, HOTSPOT, VRAM, ...) /
AmdSmiTemperatureMetric (CURRENT, ...), and AmdSmiException / AmdSmiLibraryException raised
for an unsupported sensor. ``install_broken`` reproduces an import that fails with a
non-ImportError, as the real package does when libamd_smi.so cannot be loaded.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import types
from dataclasses import dataclass, field
from enum import IntEnum

import pytest


class AmdSmiException(Exception):
    pass


class AmdSmiLibraryException(AmdSmiException):
    def __init__(self, err_code: int) -> None:
        super().__init__(f"Error code:\n\t{err_code} | AMDSMI_STATUS_NOT_SUPPORTED")
        self.err_code = err_code


class AmdSmiInitFlags(IntEnum):
    INIT_ALL_PROCESSORS = 0xFFFFFFFF
    INIT_AMD_CPUS = 1 << 0
    INIT_AMD_GPUS = 1 << 1


class AmdSmiTemperatureType(IntEnum):
    EDGE = 0
    HOTSPOT = 1
    JUNCTION = 1
    VRAM = 2
    HBM_0 = 3


class AmdSmiTemperatureMetric(IntEnum):
    CURRENT = 0
    MAX = 1
    MIN = 2
    CRITICAL = 4


@dataclass
class FakeAmdSmi:
    """``temps[i]`` maps a sensor type to the value returned (or None: AMDSMI_STATUS_NOT_SUPPORTED)."""

    temps: list[dict[AmdSmiTemperatureType, object]] = field(default_factory=list)
    processes: list[list[tuple[int, int]]] | None = None
    """Per GPU: (pid, VRAM bytes). None: the call raises AMDSMI_STATUS_NO_PERM."""
    init_error: Exception | None = None
    shut_down: bool = False

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        mod = types.ModuleType("amdsmi", "FAKE amdsmi")
        for name, value in {
            "AmdSmiException": AmdSmiException,
            "AmdSmiLibraryException": AmdSmiLibraryException,
            "AmdSmiInitFlags": AmdSmiInitFlags,
            "AmdSmiTemperatureType": AmdSmiTemperatureType,
            "AmdSmiTemperatureMetric": AmdSmiTemperatureMetric,
            "amdsmi_init": self.amdsmi_init,
            "amdsmi_shut_down": self.amdsmi_shut_down,
            "amdsmi_get_processor_handles": self.amdsmi_get_processor_handles,
            "amdsmi_get_temp_metric": self.amdsmi_get_temp_metric,
            "amdsmi_get_gpu_process_list": self.amdsmi_get_gpu_process_list,
        }.items():
            setattr(mod, name, value)
        monkeypatch.setitem(sys.modules, "amdsmi", mod)

    def amdsmi_init(self, flag: AmdSmiInitFlags = AmdSmiInitFlags.INIT_AMD_GPUS) -> None:
        if self.init_error is not None:
            raise self.init_error

    def amdsmi_shut_down(self) -> None:
        self.shut_down = True

    def amdsmi_get_processor_handles(self) -> list[object]:
        return [f"handle{i}" for i in range(len(self.temps))]

    def amdsmi_get_temp_metric(
        self, processor_handle: object, sensor_type: AmdSmiTemperatureType, metric: AmdSmiTemperatureMetric
    ) -> object:
        index = int(str(processor_handle).removeprefix("handle"))
        value = self.temps[index].get(sensor_type)
        if value is None or metric != AmdSmiTemperatureMetric.CURRENT:
            raise AmdSmiLibraryException(2)
        return value

    def amdsmi_get_gpu_process_list(self, processor_handle: object) -> list[dict[str, object]]:
        if self.processes is None:
            raise AmdSmiLibraryException(10)
        index = int(str(processor_handle).removeprefix("handle"))
        return [
            {
                "name": "python3",
                "pid": pid,
                "mem": vram,
                "engine_usage": {"gfx": 0, "enc": 0},
                "memory_usage": {"gtt_mem": 0, "cpu_mem": 0, "vram_mem": vram},
                "cu_occupancy": "N/A",
            }
            for pid, vram in self.processes[index]
        ]


class _BrokenLoader(importlib.abc.Loader, importlib.abc.MetaPathFinder):
    def __init__(self, error: BaseException) -> None:
        self.error = error

    def find_spec(self, name: str, path: object = None, target: object = None) -> importlib.machinery.ModuleSpec | None:
        return importlib.machinery.ModuleSpec(name, self) if name == "amdsmi" else None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> None:
        raise self.error

    def exec_module(self, module: types.ModuleType) -> None:
        raise self.error


def install_broken(monkeypatch: pytest.MonkeyPatch, error: BaseException) -> None:
    """Make ``import amdsmi`` raise ``error`` (e.g. OSError: libamd_smi.so: cannot open shared object file)."""
    monkeypatch.delitem(sys.modules, "amdsmi", raising=False)
    monkeypatch.setattr(sys, "meta_path", [_BrokenLoader(error), *sys.meta_path])


def install_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make ``import amdsmi`` raise ImportError (the package is not installed)."""
    monkeypatch.setitem(sys.modules, "amdsmi", None)
