"""The monitor's process table: columns, sort, filter, selection, and signals to the user's own processes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from textual import events
from ui_helpers import monitor_sampled, synthetic_gpu_sets

from rocmtui.config import MonitorConfig
from rocmtui.gpu.kill import refusal, send
from rocmtui.gpu.proc_stats import ProcessStats
from rocmtui.gpu.replay import ManualReplay, ReplaySource
from rocmtui.gpu.sample import GpuProcess
from rocmtui.ui.app import create_monitor_app
from rocmtui.ui.screens.signal_confirm import SignalConfirm
from rocmtui.ui.state.process_rows import COLUMNS, SORTS, fitting, fmt_elapsed, matches, one_line, ordered


def proc(pid: int, **fields: object) -> GpuProcess:
    return GpuProcess(gpu_index=0, pid=pid, **fields)  # type: ignore[arg-type]


def test_sort_by_any_column_with_unknowns_last_when_descending() -> None:
    procs = [proc(1, gpu_memory_bytes=5), proc(2), proc(3, gpu_memory_bytes=9)]
    assert [p.pid for p in ordered(procs, "GPU mem", reverse=True, now=0.0)] == [3, 1, 2]
    assert [p.pid for p in ordered(procs, "PID", reverse=False, now=0.0)] == [1, 2, 3]
    aged = [proc(1, started_at=90.0), proc(2, started_at=10.0)]
    assert [p.pid for p in ordered(aged, "elapsed", reverse=True, now=100.0)] == [2, 1]


def test_filter_matches_pid_user_or_command() -> None:
    p = proc(4242, user="alice", command="python train.py")
    assert matches(p, "") and matches(p, "424") and matches(p, "ALICE") and matches(p, "train")
    assert not matches(p, "bob")
    assert one_line("python3 -c \nimport torch\n") == "python3 -c import torch"


def test_others_processes_are_refused_with_the_reason() -> None:
    theirs = proc(4242, user="root", uid=0)
    assert refusal(theirs, uid=1000) == "PID 4242 belongs to root: rocmtui signals only your own processes"
    assert refusal(proc(4242), uid=1000) is not None  # owner unknown: refused
    assert refusal(proc(1, user="root", uid=0), uid=0) == "PID 1 is the system's init: rocmtui never signals it"
    assert refusal(proc(os.getpid(), uid=os.getuid())) == "this is rocmtui itself: quit with q"


def test_sigterm_reaches_the_users_own_process_and_a_reused_pid_is_spared() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        listed = ProcessStats().enrich(proc(child.pid))
        assert listed.uid == os.getuid() and listed.started_at is not None and listed.host_memory_bytes
        stale = GpuProcess(gpu_index=0, pid=child.pid, uid=os.getuid(), started_at=listed.started_at - 100)
        assert "has ended" in send(stale, "TERM")
        assert child.poll() is None  # not signalled
        assert send(listed, "TERM") == f"sent SIGTERM to PID {child.pid}"
        assert child.wait(timeout=10) == -signal.SIGTERM
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


def test_cpu_percent_is_known_from_the_second_reading() -> None:
    stats = ProcessStats()
    me = proc(os.getpid())
    assert stats.enrich(me).cpu_pct is None
    assert stats.enrich(me).cpu_pct is not None
    assert stats.enrich(proc(2**22 + 12345)).cpu_pct is None  # no such process: left as it was


async def test_keys_sort_filter_and_refuse_a_replay() -> None:
    async with monitor_sampled(3) as (app, pilot):
        table = app.monitor_screen.processes
        assert table is not None
        assert table.sort_by == "GPU mem" and [p.pid for p in table.listed] == [4002, 4001, 4000]
        await pilot.press("s")
        assert table.sort_by == "GPU%"
        await pilot.press("slash", "4", "0", "0", "1", "enter")
        assert [p.pid for p in table.listed] == [4001]
        await pilot.press("escape")
        assert len(table.listed) == 3
        await pilot.press("k")
        assert not isinstance(app.screen, SignalConfirm)  # a replay's PIDs are not this machine's
        app.monitor_screen.replaying = False
        await pilot.press("k")  # the synthetic processes' owner is unknown: refused, nothing asked
        assert not isinstance(app.screen, SignalConfirm)


async def test_the_table_comes_with_the_first_gpu_sample_and_keeps_the_keys_pressed_before() -> None:
    """Sort, filter and kill keys before any sample: kept (or refused plainly), then applied by the table."""
    source = ManualReplay(synthetic_gpu_sets(3))
    app = create_monitor_app(MonitorConfig(), source)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.monitor_screen
        assert screen.processes is None
        await pilot.press("s", "k")  # sort by the next column; nothing to kill yet
        await pilot.press("slash", "4", "0", "0", "1", "enter")
        assert screen.processes is None and screen.focused is None  # the keys are the screen's again
        source.step()
        await pilot.pause()
        table = screen.processes
        assert table is not None and table.has_focus
        assert table.sort_by == "GPU%" and "GPU% ▼" in str(table.ordered_columns[4].label)
        assert [p.pid for p in table.listed] == [4001]
        await pilot.press("escape")
        assert len(table.listed) == 3


async def test_keys_typed_in_one_burst_after_slash_are_the_filters() -> None:
    """Over SSH a fast typist's keys arrive together: the characters after / go to the filter, not the table."""
    async with monitor_sampled(3) as (app, pilot):
        screen = app.monitor_screen
        for key in ("slash", "4", "0", "0", "1"):
            app.post_message(events.Key(key, "/" if key == "slash" else key))  # as the driver posts them: no waits
        await pilot.pause()
        assert screen.filter_input.value == "4001" and screen.filter_input.has_focus
        await pilot.press("enter", "s")
        assert screen.processes is not None and [p.pid for p in screen.processes.listed] == [4001]
        assert screen.processes.sort_by == "GPU%" and screen.processes.has_focus  # s sorted: the table's again


async def test_kill_asks_first_for_the_users_own_process() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        sets = synthetic_gpu_sets(1, count=1)
        mine = ProcessStats().enrich(proc(child.pid, user="me", command="sleeper"))
        sample = replace(sets[0], processes=(mine,))
        source = ManualReplay([sample])
        app = create_monitor_app(MonitorConfig(), source)
        async with app.run_test(size=(120, 40)) as pilot:
            app.monitor_screen.replaying = False  # as if sampled live on this machine
            source.step()
            await pilot.pause()
            await pilot.press("k")
            assert isinstance(app.screen, SignalConfirm)
            await pilot.press("n")
            assert child.poll() is None
            await pilot.press("k", "y")
            assert child.wait(timeout=10) == -signal.SIGTERM
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


H200_RECORDING = Path(__file__).resolve().parent / "data" / "monitor-h200-nvml.jsonl"
"""A real capture: ``rocmtui monitor --json --count 30`` on one NVIDIA H200 (driver 580.159.04) under a bf16
matrix-product load holding 31 GiB, 2026-12-01; NVML slowdown/shutdown thresholds 89/95 °C."""
COMBINED_RECORDING = Path(__file__).resolve().parent / "data" / "monitor-8gpu-combined.jsonl"
"""Eight real H200 captures side by side (``scripts/combine_recordings.py``: the recording above at three
offsets, ``tests/data/h200-fastnet-run/gpu.jsonl`` at three, ``screenshots/h200-monitor-recording.jsonl`` at
two); no reading changed."""


def test_elapsed_reads_to_the_minute() -> None:
    assert [fmt_elapsed(s) for s in (None, 5, 61, 3600 + 300, 3 * 86400 + 7200)] == [
        "N/A",
        "<1m",
        "1m",
        "1h05m",
        "3d02h",
    ]


async def test_a_real_recording_fills_the_table_and_updates_cells_in_place() -> None:
    source = ManualReplay(ReplaySource.from_jsonl(H200_RECORDING).samples)
    app = create_monitor_app(MonitorConfig(), source)
    async with app.run_test(size=(120, 40)) as pilot:  # wide enough for every column
        for _ in range(3):
            source.step()
        await pilot.pause()
        table = app.monitor_screen.processes
        assert table is not None
        assert len(table.listed) == 1 and table.listed[0].user == "root"
        first = table.get_row_at(0)
        for _ in range(20):
            source.step()
        await pilot.pause()
        later = table.get_row_at(0)
        assert later[0] == first[0]  # the same process, its row kept
        assert isinstance(later[6], str)
        assert later[5] != "N/A" and later[6].endswith("MiB")  # CPU % known from the second reading; RSS
        gpu = app.monitor_screen.last.gpus[0] if app.monitor_screen.last else None
        assert gpu is not None and gpu.temp_crit_c == 89.0


async def test_gpu_percent_per_process_is_shown_and_n_a_where_the_backend_cannot_say() -> None:
    sets = synthetic_gpu_sets(1, count=1)
    measured = (proc(4100, gpu_memory_bytes=2**30, gpu_util_pct=75.4), proc(4101, gpu_memory_bytes=2**20))
    source = ManualReplay([replace(sets[0], processes=measured)])
    app = create_monitor_app(MonitorConfig(), source)
    async with app.run_test(size=(120, 40)) as pilot:
        source.step()
        await pilot.pause()
        table = app.monitor_screen.processes
        assert table is not None
        gpu_pct = {table.get_row_at(i)[0]: table.get_row_at(i)[4] for i in range(2)}
        assert gpu_pct == {"4100": "75%", "4101": "N/A"}


async def test_eight_real_gpus_at_80x24_show_five_processes_with_30_characters_of_command() -> None:
    """The combined recording of real H200 captures: the least important columns give way to the command."""
    source = ManualReplay(ReplaySource.from_jsonl(COMBINED_RECORDING).samples)
    app = create_monitor_app(MonitorConfig(), source)
    async with app.run_test(size=(80, 24)) as pilot:
        for _ in range(4):
            source.step()
        await pilot.pause()
        await pilot.pause()
        table = app.monitor_screen.processes
        assert table is not None and len(table.listed) == 8
        assert table.scrollable_content_region.height >= 6  # the header and five processes
        assert table.region.right <= 80 and table.virtual_size.width <= table.scrollable_content_region.width
        columns = list(table.columns.values())
        assert columns[-1].width >= 30 and str(table.get_row_at(0)[-1]).startswith("python3 -c import torch,time")
        assert [str(c.label) for c in columns][:4] == ["PID", "user", "GPU", "GPU mem ▼"]
        assert "host mem" not in {c.key.value for c in columns}  # the first to give way
        await pilot.resize_terminal(160, 30)
        await pilot.pause()
        assert {c.key.value for c in table.columns.values()} >= {"host mem", "elapsed", "CPU%"}


@pytest.mark.parametrize("label", SORTS)
def test_every_column_has_room_for_its_sort_mark(label: str) -> None:
    column = next((c for c in COLUMNS if c.label == label), None)
    if column is not None:
        assert column.cells - 2 >= len(f"{label} ▼")
    shown, command = fitting(80)
    assert command >= 30 and sum(c.cells for c in shown) + command + 2 <= 80


def test_the_sorted_column_stays_on_a_narrow_table() -> None:
    shown, _ = fitting(60, "elapsed")
    assert "elapsed" in [c.label for c in shown] and "host mem" not in [c.label for c in shown]


async def test_the_cursor_stays_on_its_process_when_the_order_changes_in_place() -> None:
    """Rows are rewritten in place while their number stays the same; the selected process is followed."""
    sets = synthetic_gpu_sets(3, count=2)
    swapped = tuple(replace(p, gpu_memory_bytes=(40 - 10 * p.gpu_index) * 1024**3) for p in sets[1].processes)
    source = ManualReplay([sets[0], replace(sets[1], processes=swapped)])
    app = create_monitor_app(MonitorConfig(), source)
    async with app.run_test(size=(120, 40)) as pilot:
        source.step()
        await pilot.pause()
        table = app.monitor_screen.processes
        assert table is not None and [p.pid for p in table.listed] == [4002, 4001, 4000]
        await pilot.press("down", "down")
        assert table.selected is not None and table.selected.pid == 4000
        source.step()
        await pilot.pause()
        assert [p.pid for p in table.listed] == [4000, 4001, 4002]
        assert table.selected is not None and table.selected.pid == 4000 and table.cursor_row == 0
        assert [str(table.get_row_at(i)[0]) for i in range(3)] == ["4000", "4001", "4002"]
