"""Pilot tests of ``rocmtui monitor``: no-GPU note, 1 to 8 GPUs, compact layout, interval keys, quit."""

from __future__ import annotations

import pytest
from fresh_interpreter import modules_loaded_by
from ui_helpers import synthetic_gpu_sets

from rocmtui.base.errors import UsageError
from rocmtui.config import MonitorConfig
from rocmtui.gpu.replay import ManualReplay
from rocmtui.ui.app import create_monitor_app
from rocmtui.ui.screens.help import HelpScreen
from rocmtui.ui.screens.monitor import CARD_HEIGHT, layout_for, next_interval
from rocmtui.ui.widgets.gpu_graph_card import GpuGraphCard as GpuCard


async def test_no_gpu_is_one_line_and_w_shows_each_backends_reason(host_source) -> None:
    app = create_monitor_app(MonitorConfig(), host_source)
    async with app.run_test(size=(80, 24)) as pilot:
        host_source.step()
        await pilot.pause()
        screen = app.monitor_screen
        note = str(screen.panel.note.render())
        assert note.startswith("No GPU found (rocm, sysfs, nvml)") and note.endswith("w: why")
        assert "\n" not in note and screen.panel.note.region.height == 3  # one line in its border
        assert screen.panel.note.display and screen.processes is None  # no GPU: no process table
        assert screen.panel.host.readout.reading == host_source.history()[-1].host
        assert "· host ·" in str(screen.status.render())
        await pilot.press("w")
        await pilot.pause()
        statuses = host_source.history()[-1].statuses
        reasons = app.screen
        assert isinstance(reasons, HelpScreen)
        assert reasons.keys == tuple((s.name, s.reason) for s in statuses if not s.available)
        assert len(reasons.keys) == 3
        await pilot.press("escape")
        assert app.screen is screen


@pytest.mark.parametrize(
    ("gpus", "size", "compact"),
    [(1, (160, 48), False), (8, (160, 48), False), (8, (80, 24), True), (2, (80, 24), True)],
)
async def test_every_gpu_gets_a_card_and_small_terminals_go_compact(gpus, size, compact) -> None:
    source = ManualReplay(synthetic_gpu_sets(gpus))
    app = create_monitor_app(MonitorConfig(), source)
    async with app.run_test(size=size) as pilot:
        for _ in range(3):
            source.step()
            await pilot.pause()
        screen = app.monitor_screen
        cards = list(screen.panel.cards.query(GpuCard))
        assert [c.index for c in cards] == list(range(gpus))
        assert screen.has_class("-compact") is compact
        assert all(c.region.height == 1 if compact else c.region.height >= CARD_HEIGHT for c in cards)
        assert all(c.region.bottom <= size[1] - 1 for c in cards)  # every GPU is on screen, above the footer
        assert screen.processes is not None
        assert screen.processes.row_count == gpus


async def test_interval_keys_change_the_source_and_the_status_line() -> None:
    source = ManualReplay(synthetic_gpu_sets(1), interval_s=1.0)
    app = create_monitor_app(MonitorConfig(), source)
    async with app.run_test(size=(80, 24)) as pilot:
        source.step()
        await pilot.press("plus")
        assert source.interval_s == 2.0
        await pilot.press("minus", "minus", "minus")  # 2 -> 1 -> 0.5 -> 0.2
        assert source.interval_s == 0.2
        assert "every 0.2 s" in str(app.monitor_screen.status.render())
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape", "q")
    assert app.return_value == 0
    assert source.stopped


def test_interval_steps_stay_in_range() -> None:
    assert next_interval(0.1, faster=True) == 0.1
    assert next_interval(60.0, faster=False) == 60.0
    assert next_interval(0.7, faster=True) == 0.5
    assert next_interval(0.7, faster=False) == 1.0


def test_layout_rules() -> None:
    assert layout_for(80, 24, 1) == (False, 1)  # one full card fits
    assert layout_for(80, 24, 2) == (True, 1)
    assert layout_for(160, 48, 8) == (False, 2)
    assert layout_for(100, 60, 2) == (False, 1)
    assert layout_for(160, 30, 8)[0] is True


def test_unknown_theme_is_a_usage_error() -> None:
    with pytest.raises(UsageError):
        create_monitor_app(MonitorConfig(theme="no-such-theme"), ManualReplay([]))


@pytest.mark.slow
def test_the_first_frame_loads_no_vendor_library_and_no_psutil() -> None:
    """What ``rocmtui monitor`` imports before its first frame (its CLI path, the app, a live source):
    detection, psutil and the kill dialog wait until the sampler's thread or the first signal needs them, the
    GPU cards, graphs and the process table (a DataTable) until the first GPU sample."""
    loaded = modules_loaded_by(
        "from rocmtui.cli import main; from rocmtui.ui import app; from rocmtui.ui.state import settings; "
        "from rocmtui.gpu import detect, recorder, replay; "
        "from rocmtui.config import MonitorConfig; detect.DetectingSampler(MonitorConfig())"
    )
    later = {
        *("psutil", "pynvml", "pyrsmi", "amdsmi", "statistics", "textual.widgets._data_table"),
        *("rocmtui.gpu.sampler", "rocmtui.gpu.kill", "rocmtui.ui.screens.signal_confirm", "rocmtui.ui.screens.help"),
        *("rocmtui.ui.widgets.gpu_card", "rocmtui.ui.widgets.gpu_graph_card", "rocmtui.ui.widgets.history_graph"),
        "rocmtui.ui.widgets.process_table",
    }
    assert sorted(loaded & later) == []
