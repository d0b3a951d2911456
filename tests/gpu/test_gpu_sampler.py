"""The Sampler: faults in a backend (raising, hanging) never stop it, and stop() is prompt."""

from __future__ import annotations

import logging
import threading
import time

import pytest
from gpu_backends import ScriptedBackend

from rocmtui.gpu import retry as retry_module
from rocmtui.gpu.call_runner import CallRunner, CallTimedOut, RunnerSaturated
from rocmtui.gpu.retry import Retry
from rocmtui.gpu.sample import SampleSet
from rocmtui.gpu.sampler import Sampler


@pytest.fixture
def backend():
    b = ScriptedBackend()
    yield b
    b.release.set()  # let any hung call finish so its thread ends


def test_reads_every_device_the_host_and_processes(backend) -> None:
    sampler = Sampler(backend, history_len=5)
    s = sampler.sample_now()
    assert [g.utilization_pct for g in s.gpus] == [0.0, 1.0]
    assert s.backend == "fake"
    assert s.host.ram_total_bytes and s.host.ram_total_bytes > 0
    assert [p.pid for p in s.processes] == [1000, 1001]
    assert sampler.latest is s
    sampler.stop()
    assert backend.closed


def test_host_only_sampler() -> None:
    sampler = Sampler(None)
    s = sampler.sample_now()
    assert s.gpus == () and s.backend == "host" and s.processes == ()
    sampler.stop()


def test_raising_device_gets_an_error_and_backs_off_while_others_update(backend) -> None:
    backend.failing[1] = RuntimeError("amdgpu: ring gfx timeout")
    sampler = Sampler(backend)
    first = sampler.sample_now()
    assert first.gpus[0].error is None
    assert first.gpus[1].error == "RuntimeError: amdgpu: ring gfx timeout (retrying in 1 s)"
    assert first.gpus[1].utilization_pct is None
    second = sampler.sample_now()  # within the 1 s backoff: device 1 is not asked again
    assert backend.calls.count(1) == 1
    assert backend.calls.count(0) == 2
    assert second.gpus[1].error == first.gpus[1].error
    sampler.stop()


def test_device_recovers_after_backoff(backend, monkeypatch) -> None:
    monkeypatch.setattr(retry_module, "BASE_DELAY_S", 0.0)  # retry at the very next tick
    backend.failing[0] = OSError("EIO")
    sampler = Sampler(backend)
    assert sampler.sample_now().gpus[0].error is not None
    del backend.failing[0]
    recovered = sampler.sample_now().gpus[0]
    assert recovered.error is None and recovered.name == "gpu0"
    sampler.stop()


def test_hanging_device_times_out_and_the_others_go_on(backend) -> None:
    backend.hanging.add(0)
    sampler = Sampler(backend, call_timeout_s=0.5)
    first = sampler.sample_now()
    assert first.gpus[0].error is not None and first.gpus[0].error.startswith("timed out after 0.5 s")
    assert first.gpus[1].error is not None and "not read" in first.gpus[1].error  # the tick's budget was spent
    second = sampler.sample_now()  # device 0 is backing off: device 1 is read again
    assert second.gpus[1].error is None and second.gpus[1].utilization_pct == 1.0
    assert second.host.ram_total_bytes is not None
    sampler.stop()


def test_stop_is_prompt_while_the_thread_waits_on_a_hung_call(backend) -> None:
    backend.hanging.add(0)
    sampler = Sampler(backend, interval_s=0.1, call_timeout_s=30.0)
    sampler.start()
    assert backend.entered_hang.wait(10)
    started = time.monotonic()
    sampler.stop()
    assert time.monotonic() - started < 2.5  # 1 s at most for close, well under the 30 s call timeout
    assert not sampler.running


def test_thread_publishes_to_listeners_with_bounded_history(backend) -> None:
    sampler = Sampler(backend, interval_s=0.1, history_len=3)
    got: list[SampleSet] = []
    threads: set[str] = set()
    five = threading.Event()

    def listen(s: SampleSet) -> None:
        got.append(s)
        threads.add(threading.current_thread().name)
        if len(got) == 5:
            five.set()

    sampler.subscribe(listen)
    sampler.start()
    sampler.start()  # idempotent
    assert five.wait(10)
    sampler.stop()
    assert threads == {"rocmtui-sampler"}
    assert len(got) >= 5
    assert sampler.history() == tuple(got[-3:])


def test_failing_listener_does_not_stop_sampling(backend) -> None:
    sampler = Sampler(backend, interval_s=0.1)
    done = threading.Event()
    calls = []

    def bad(_s: SampleSet) -> None:
        calls.append(1)
        if len(calls) >= 3:
            done.set()
        raise ValueError("listener bug")

    sampler.subscribe(bad)
    sampler.start()
    assert done.wait(10)
    sampler.stop()


def test_interval_change_takes_effect_without_waiting_out_the_old_one(backend) -> None:
    sampler = Sampler(backend, interval_s=60.0)
    ticks = threading.Semaphore(0)
    sampler.subscribe(lambda _s: ticks.release())
    sampler.start()
    assert ticks.acquire(timeout=10)  # the first tick is immediate
    sampler.interval_s = 0.1
    assert ticks.acquire(timeout=10)  # not 60 s later
    sampler.stop()
    sampler.interval_s = 0.0
    assert sampler.interval_s == 0.1


def test_retry_delays_double_up_to_a_minute() -> None:
    r = Retry()
    delays = []
    for _ in range(9):
        r.failed("x", now=100.0)
        delays.append(r.next_at - 100.0)
    assert delays == [1, 2, 4, 8, 16, 32, 60, 60, 60]
    assert not r.ready(100.5) and r.ready(160.0)
    r.succeeded()
    assert r.error is None and r.ready(0.0)


def test_worker_refuses_calls_once_too_many_are_stuck() -> None:
    release = threading.Event()
    worker = CallRunner(max_stuck=2)
    for _ in range(2):
        with pytest.raises(CallTimedOut):
            worker.call(release.wait, 0.05)
    with pytest.raises(RunnerSaturated):
        worker.call(lambda: 1, 1.0)
    release.set()
    for t in list(worker._stuck):  # the stuck threads end once their calls return
        t.join(5)
    assert worker.call(lambda: 42, 5.0) == 42
    worker.close()


def test_worker_reraises_the_call_s_exception() -> None:
    worker = CallRunner()
    with pytest.raises(ZeroDivisionError):
        worker.call(lambda: 1 / 0, 5.0)
    worker.close()


def test_a_tick_that_raises_does_not_end_the_thread() -> None:
    class Odd(ScriptedBackend):
        def sample(self, index: int):
            return None  # a broken backend returning nonsense: the tick itself fails

    sampler = Sampler(Odd(count=1), interval_s=0.1)
    failures = threading.Semaphore(0)

    class Count(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            failures.release()

    handler = Count(level=logging.ERROR)
    logging.getLogger("rocmtui.gpu.feed").addHandler(handler)
    try:
        sampler.start()
        assert failures.acquire(timeout=10) and failures.acquire(timeout=10)  # a second tick ran after the first failed
        assert sampler.running
    finally:
        sampler.stop()
        logging.getLogger("rocmtui.gpu.feed").removeHandler(handler)


def test_stop_does_not_wait_for_a_hung_close(backend) -> None:
    def hang_close() -> None:
        backend.release.wait()

    backend.close = hang_close
    sampler = Sampler(backend)
    sampler.sample_now()
    started = time.monotonic()
    sampler.stop()
    assert time.monotonic() - started < 2.0  # CLOSE_TIMEOUT_S is 0.5 s


def test_the_busiest_host_processes_are_bounded_busiest_first_and_measured_from_the_second_scan() -> None:
    from rocmtui.gpu.proc_stats import BusiestProcesses
    from rocmtui.gpu.sample import NO_GPU

    busiest = BusiestProcesses(limit=3)
    first = busiest.read()
    assert 0 < len(first) <= 3 and all(p.cpu_pct is None for p in first)  # CPU % needs two scans
    again = busiest.read()
    assert 0 < len(again) <= 3 and all(p.gpu_index == NO_GPU for p in again)
    measured = [p.cpu_pct for p in again if p.cpu_pct is not None]
    assert measured and measured == sorted(measured, reverse=True)
    assert any(p.command and p.user and p.uid is not None and p.started_at for p in again)  # as root: all read


def test_a_sampler_without_a_gpu_lists_host_processes_only_when_asked() -> None:
    quiet, listing = Sampler(None), Sampler(None, host_processes=5)
    try:
        assert quiet.sample_now().host_processes == ()  # --json and --once: as before
        listed = listing.sample_now().host_processes
        assert 0 < len(listed) <= 5
    finally:
        quiet.stop()
        listing.stop()


def test_a_sampler_with_a_gpu_lists_no_host_processes(backend) -> None:
    sampler = Sampler(backend, host_processes=5)
    try:
        assert sampler.sample_now().host_processes == ()
    finally:
        sampler.stop()
