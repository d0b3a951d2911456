"""Backend detection order, forced backends and their reasons; NVML with the real (absent) library."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pynvml
import pytest
from fakes.fake_pyrsmi import FakeDevice, FakeRocml, ROCMLError_LibraryNotFound
from fakes.sysfs_tree import build_card
from gpu_backends import ScriptedBackend

from rocmtui.config import MonitorConfig
from rocmtui.gpu import detect, nvml
from rocmtui.gpu.backend import BackendUnavailable
from rocmtui.gpu.sample import BackendStatus


def _unavailable(reason: str):
    def opener(_config: MonitorConfig):
        raise BackendUnavailable(reason)

    return opener


def _opener(backend: ScriptedBackend):
    return lambda _config: backend


def test_auto_takes_the_first_backend_with_a_device(monkeypatch) -> None:
    empty, sysfs_backend = ScriptedBackend(count=0, name="rocm"), ScriptedBackend(count=1, name="sysfs")
    nvml_backend = ScriptedBackend(count=1, name="nvml")
    monkeypatch.setitem(detect.OPENERS, "rocm", _opener(empty))
    monkeypatch.setitem(detect.OPENERS, "sysfs", _opener(sysfs_backend))
    monkeypatch.setitem(detect.OPENERS, "nvml", _opener(nvml_backend))
    backend, statuses = detect.detect(MonitorConfig())
    assert backend is sysfs_backend
    assert statuses == (BackendStatus("rocm", False, "no devices"), BackendStatus("sysfs", True, "1 GPU"))
    assert empty.closed  # a backend with no devices is released
    assert not nvml_backend.calls


def test_auto_with_nothing_gives_host_only_and_every_reason(monkeypatch) -> None:
    for name in detect.AUTO_ORDER:
        monkeypatch.setitem(detect.OPENERS, name, _unavailable(f"{name} is missing"))
    backend, statuses = detect.detect(MonitorConfig())
    assert backend is None
    assert [(s.name, s.available, s.reason) for s in statuses] == [
        ("rocm", False, "rocm is missing"),
        ("sysfs", False, "sysfs is missing"),
        ("nvml", False, "nvml is missing"),
    ]


def test_forced_backend_is_the_only_one_tried(monkeypatch) -> None:
    rocm_backend = ScriptedBackend(count=1, name="rocm")
    monkeypatch.setitem(detect.OPENERS, "rocm", _opener(rocm_backend))
    monkeypatch.setitem(detect.OPENERS, "nvml", _unavailable("NVML cannot initialise: no driver"))
    backend, statuses = detect.detect(MonitorConfig(backend="nvml"))
    assert backend is None
    assert statuses == (BackendStatus("nvml", False, "NVML cannot initialise: no driver"),)
    sampler = detect.open_sampler(MonitorConfig(backend="nvml"))
    assert sampler.sample_now().statuses == statuses  # the panel shows the host plus the reason
    sampler.stop()


def test_host_backend_tries_nothing() -> None:
    assert detect.detect(MonitorConfig(backend="host")) == (None, ())


def test_unexpected_errors_become_reasons(monkeypatch) -> None:
    def explode(_config: MonitorConfig):
        raise KeyError("libdrm")

    class BadCount(ScriptedBackend):
        def device_count(self) -> int:
            raise OSError("EIO")

    monkeypatch.setitem(detect.OPENERS, "rocm", explode)
    monkeypatch.setitem(detect.OPENERS, "sysfs", _opener(BadCount()))
    monkeypatch.setitem(detect.OPENERS, "nvml", _unavailable("no"))
    _, statuses = detect.detect(MonitorConfig())
    assert statuses[0].reason == "failed to open: KeyError: 'libdrm'"
    assert statuses[1].reason == "cannot count devices: OSError: EIO"


def test_opening_that_hangs_is_a_reason_not_a_hang(monkeypatch) -> None:
    import threading

    release = threading.Event()
    monkeypatch.setattr(detect, "OPEN_TIMEOUT_S", 0.1)
    monkeypatch.setitem(detect.OPENERS, "rocm", lambda _c: release.wait())
    try:
        backend, statuses = detect.detect(MonitorConfig(backend="rocm"))
    finally:
        release.set()
    assert backend is None
    assert statuses[0].reason is not None and "timed out after 0.1 s" in statuses[0].reason


def test_real_modules_auto_falls_through_to_sysfs_tree(monkeypatch, tmp_path: Path) -> None:
    FakeRocml(init_error=ROCMLError_LibraryNotFound("AMD SMI library (libamd_smi.so) not found.")).install(monkeypatch)
    build_card(tmp_path, 0)
    sampler = detect.open_sampler(MonitorConfig(sysfs_root=tmp_path, interval_s=0.5, history_len=7))
    s = sampler.sample_now()
    assert s.backend == "sysfs"
    assert s.gpus[0].name == "AMD Radeon RX 7900 XTX"
    assert s.statuses[0] == BackendStatus("rocm", False, sampler.statuses[0].reason)
    assert "libamd_smi.so" in (s.statuses[0].reason or "")
    assert sampler.interval_s == 0.5
    assert not sampler.running  # open_sampler does not start the thread
    sampler.stop()


def test_rocm_with_a_working_library_wins_auto(monkeypatch, tmp_path: Path) -> None:
    FakeRocml(devices=[FakeDevice()]).install(monkeypatch)
    backend, statuses = detect.detect(MonitorConfig(sysfs_root=tmp_path))
    assert backend is not None and backend.name == "rocm"
    assert statuses == (BackendStatus("rocm", True, "1 GPU"),)
    backend.close()


def test_nvml_without_the_library_is_unavailable_with_nvml_s_reason() -> None:
    """The real nvidia-ml-py: nvmlInit raises NVMLError_LibraryNotFound on this GPU-less machine."""
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError_LibraryNotFound:
        pass
    else:
        pynvml.nvmlShutdown()
        pytest.skip("NVML is present here")
    with pytest.raises(BackendUnavailable, match="NVMLError_LibraryNotFound"):
        nvml.open_backend(MonitorConfig())
    _, statuses = detect.detect(MonitorConfig(backend="nvml"))
    assert statuses[0].available is False and "NVML Shared Library Not Found" in (statuses[0].reason or "")


def test_nvml_backend_uses_only_names_that_exist_in_nvidia_ml_py() -> None:
    source = Path(nvml.__file__).read_text()
    names = set(re.findall(r"\b(nvml[A-Z]\w+|NVML_[A-Z_]+|NVMLError)\b", source))
    used = {
        "nvmlDeviceGetPowerUsage",
        "nvmlDeviceGetEnforcedPowerLimit",
        "nvmlDeviceGetComputeRunningProcesses",
        "nvmlDeviceGetProcessUtilization",
    }
    assert used <= names
    missing = sorted(n for n in names if not hasattr(pynvml, n))
    assert missing == []


def test_a_backend_opened_after_the_timeout_is_closed(monkeypatch) -> None:
    import threading

    release = threading.Event()
    late = ScriptedBackend()
    closed = threading.Event()
    late.close = closed.set  # type: ignore[method-assign]  # observe the close from the abandoned thread

    def slow_open(_config: MonitorConfig) -> ScriptedBackend:
        release.wait()
        return late

    monkeypatch.setattr(detect, "OPEN_TIMEOUT_S", 0.1)
    monkeypatch.setitem(detect.OPENERS, "rocm", slow_open)
    backend, statuses = detect.detect(MonitorConfig(backend="rocm"))
    assert backend is None and "timed out" in (statuses[0].reason or "")
    release.set()  # the open now finishes on its abandoned thread, with nobody to use the backend
    assert closed.wait(10)


def _detected(backend: ScriptedBackend, entered: threading.Event | None = None, release: threading.Event | None = None):
    statuses = (BackendStatus("rocm", False, "no"), BackendStatus(backend.name, True, "1 GPU"))

    def detector(_config: MonitorConfig) -> detect.Detected:
        if entered is not None and release is not None:
            entered.set()
            release.wait()
        return backend, statuses

    return detector


def test_detecting_sampler_detects_on_its_own_thread_at_the_first_tick() -> None:
    backend = ScriptedBackend(count=1, name="nvml")
    detected_on: list[str] = []
    found = _detected(backend)

    def detector(config: MonitorConfig) -> detect.Detected:
        detected_on.append(threading.current_thread().name)
        return found(config)

    source = detect.DetectingSampler(MonitorConfig(interval_s=0.1), detector=detector)
    assert detected_on == [] and source.sampler is None and source.history() == ()  # nothing at construction
    first = threading.Event()
    source.subscribe(lambda _sample_set: first.set())
    source.start()
    assert first.wait(10)
    source.stop()
    assert detected_on == ["rocmtui-sampler"]
    (sample_set, *_) = source.history()
    assert sample_set.backend == "nvml" and [g.utilization_pct for g in sample_set.gpus] == [0.0]
    assert [s.name for s in sample_set.statuses] == ["rocm", "nvml"]
    assert backend.closed


def test_detecting_sampler_stops_without_waiting_for_a_wedged_detection() -> None:
    backend = ScriptedBackend(count=1)
    entered, release = threading.Event(), threading.Event()
    source = detect.DetectingSampler(MonitorConfig(), detector=_detected(backend, entered, release))
    published: list[object] = []
    source.subscribe(published.append)
    source.start()
    assert entered.wait(10)
    stopping = threading.Thread(target=source.stop)
    stopping.start()
    stopping.join(10)
    assert not stopping.is_alive()  # stop() returned while detection was still blocked
    assert not backend.closed
    release.set()
    assert source._thread is not None
    source._thread.join(10)
    assert backend.closed and published == [] and source.sampler is None  # opened late: closed, never read
