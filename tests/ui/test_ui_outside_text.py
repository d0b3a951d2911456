"""Outside text in the screens: markup in a process's command line, a run's name or an error message is drawn as
the characters it is (no MarkupError, no action link), and escape sequences are shown, never sent."""

from __future__ import annotations

from dataclasses import replace

import msgspec
from rich.text import Text
from ui_helpers import ReplayTrainer, recorded_config, recorded_events, synthetic_gpu_sets

from rocmtui.config import MonitorConfig
from rocmtui.events import RunFailed, RunStarted
from rocmtui.gpu.replay import ManualReplay
from rocmtui.gpu.sample import NO_GPU, GpuProcess
from rocmtui.ui.app import create_monitor_app
from rocmtui.ui.screens.signal_confirm import SignalConfirm

MARKUP = "[/] [@click=app.quit]x[/] [bold red]loud"
OSC52 = "\x1b]52;c;cHduZWQ=\x1b\\"


def _hostile_sets() -> list:
    sets = synthetic_gpu_sets(1, count=3)
    proc = GpuProcess(gpu_index=0, pid=4000, user="[u]\x1b[8m", command=f"python {MARKUP} {OSC52}")
    gpu = replace(sets[0].gpus[0], name=f"MI300X {MARKUP}\x1b]0;t\x07")
    return [replace(s, processes=(proc,), gpus=(gpu,)) for s in sets]


async def test_a_hostile_command_line_and_gpu_name_are_drawn_as_text() -> None:
    source = ManualReplay(_hostile_sets())
    app = create_monitor_app(MonitorConfig(), source)
    async with app.run_test(size=(160, 48)) as pilot:
        source.step()
        await pilot.pause()
        table = app.monitor_screen.processes
        assert table is not None and len(table.listed) == 1
        command = table.get_row_at(0)[-1]
        assert isinstance(command, Text)
        assert "[@click=app.quit]x[/]" in command.plain and "\\x1b]52;c;" in command.plain
        assert not command.spans  # no markup became style
        await pilot.click(table, offset=(60, 1))  # a click on the command is no action link
        await pilot.pause()
        assert app.is_running
        assert app.monitor_screen.processes is not None
        app.monitor_screen.processes.focus()
        await pilot.press("T")  # the kill dialog shows the command too
        await pilot.pause()
        if isinstance(app.screen, SignalConfirm):
            await pilot.press("n")
        assert app.is_running


async def test_a_hostile_host_process_is_drawn_as_text_where_there_is_no_gpu(host_source: ManualReplay) -> None:
    """The host's busiest processes (no GPU here) cross the same text boundary as GPU processes."""
    proc = GpuProcess(gpu_index=NO_GPU, pid=4000, user="[u]\x1b[8m", command=f"python {MARKUP} {OSC52}", cpu_pct=50.0)
    source = ManualReplay([replace(s, host_processes=(proc,)) for s in host_source.samples[:3]])
    app = create_monitor_app(MonitorConfig(), source)
    async with app.run_test(size=(120, 40)) as pilot:
        source.step()
        await pilot.pause()
        table = app.monitor_screen.processes
        assert table is not None and table.host and len(table.listed) == 1
        user, command = table.get_row_at(0)[1], table.get_row_at(0)[-1]
        assert isinstance(command, Text) and isinstance(user, Text)
        assert "[@click=app.quit]x[/]" in command.plain and "\\x1b]52;c;" in command.plain and "\x1b" not in user.plain
        assert not command.spans


async def test_a_run_name_and_a_failure_with_markup_do_not_break_the_train_screen() -> None:
    from rocmtui.ui.train_app import TrainApp

    events = recorded_events()
    started = events[0]
    assert isinstance(started, RunStarted)
    hostile = [
        msgspec.structs.replace(started, run_dir=f"/runs/{MARKUP}{OSC52}", notice=f"note {MARKUP}"),
        *events[1:4],
        RunFailed(message=f"ValueError: {MARKUP} {OSC52}", kind="error"),
    ]
    trainer = ReplayTrainer(hostile)
    app = TrainApp(recorded_config(), trainer, ManualReplay(synthetic_gpu_sets(1, count=2)))
    async with app.run_test(size=(120, 40)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.is_running and app.state.failed
