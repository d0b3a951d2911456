"""The cluster screen driven by its keys (Pilot), and its picture at 80x24 with 8 hosts of 8 GPUs."""

from __future__ import annotations

import pytest
from cluster_rounds import ListedRounds, synthetic_round

from rocmtui.gpu.cluster.cluster_source import ClusterSource
from rocmtui.ui.cluster_app import ClusterApp
from rocmtui.ui.screens.cluster import HostScreen

ROUNDS = 12


def cluster_app() -> tuple[ClusterApp, ListedRounds]:
    reader = ListedRounds([synthetic_round(step) for step in range(ROUNDS)])
    return ClusterApp(ClusterSource(reader, interval_s=60.0)), reader  # one round at the start, the rest by hand


async def play(app: ClusterApp, reader: ListedRounds, pilot) -> None:
    """Every round shown, in order: the first from the source's own start, the others read here."""
    while app.cluster_screen.last is None:
        await pilot.pause(0.01)
    while reader.calls < ROUNDS:
        cluster = app.source.round_now()
        while app.cluster_screen.last is None or app.cluster_screen.last.timestamp != cluster.timestamp:
            await pilot.pause(0.01)
    await pilot.pause()


def shown(app: ClusterApp) -> list[str]:
    return [line.text.plain for line in app.cluster_screen.list.lines]


async def test_hosts_are_grouped_and_a_down_host_says_why() -> None:
    app, reader = cluster_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await play(app, reader, pilot)
        lines = shown(app)
        assert len(lines) == 8 + 7 * 8  # a line per host, one per GPU of the 7 up
        assert lines[0].startswith("▾ node01 (10.0.0.1:9400) · dcgm-exporter · 8 GPUs")
        assert "✗ 10.0.0.6:9400  DOWN: connection refused (retrying in 4 s)" in lines
        summary = str(app.cluster_screen.summary.render())
        assert summary.startswith("hosts 7/8 up · GPUs 56 · util ")


async def test_sort_by_utilisation_puts_the_busiest_first() -> None:
    app, reader = cluster_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await play(app, reader, pilot)
        await pilot.press("s")
        assert app.cluster_screen.query_state.sort_by == "util"
        last = app.cluster_screen.last
        assert last is not None
        busiest = max(g.utilization_pct or 0 for h in last.hosts for g in h.gpus)
        first_gpu = shown(app)[1]
        assert f"{busiest:.0f}%" in first_gpu
        assert "sort util" in str(app.cluster_screen.summary.render())
        await pilot.press("r")
        assert app.cluster_screen.query_state.reverse
        assert "sort util reversed" in str(app.cluster_screen.summary.render())


async def test_idle_filter_shows_gpus_holding_memory_at_zero() -> None:
    app, reader = cluster_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await play(app, reader, pilot)
        await pilot.press("i")
        lines = shown(app)
        assert lines[0].startswith("▾ node03")
        assert len(lines) == 2 and "   3 NVIDIA H100" in lines[1] and "0%" in lines[1]


async def test_find_keeps_the_hosts_named() -> None:
    app, reader = cluster_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await play(app, reader, pilot)
        await pilot.press("slash", *"node07", "enter")
        lines = shown(app)
        assert lines[0].startswith("▾ node07") and len(lines) == 9
        await pilot.press("escape")
        assert len(shown(app)) == 64


async def test_enter_on_a_host_opens_its_gpus_in_the_monitor_panel_and_escape_comes_back() -> None:
    app, reader = cluster_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await play(app, reader, pilot)
        await pilot.press("down", "down", "enter")  # a GPU line of node01: its host opens
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, HostScreen) and screen.target == "10.0.0.1:9400"
        assert screen.last is not None and len(screen.last.gpus) == 8
        assert "dcgm-exporter · 8 GPUs" in screen.status_text
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, HostScreen)


async def test_question_mark_shows_the_cluster_keys() -> None:
    from rocmtui.ui.screens.help import HelpScreen

    app, reader = cluster_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await play(app, reader, pilot)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen) and app.screen.title_text == "rocmtui cluster: keys"
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)


async def test_the_cursor_scrolls_past_the_first_screen() -> None:
    app, reader = cluster_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await play(app, reader, pilot)
        await pilot.press("end")
        cluster_list = app.cluster_screen.list
        assert cluster_list.cursor == len(cluster_list.lines) - 1
        assert cluster_list.scroll_offset.y > 0


async def test_hostile_names_are_drawn_as_text() -> None:
    from dataclasses import replace

    evil = synthetic_round(0)
    gpus = tuple(replace(g, name="\x1b[2J" + g.name) for g in evil.hosts[0].gpus)
    first = replace(evil.hosts[0], hostname="\x1b]52;c;ZXZpbA==\x07[b]bold[/b]", gpus=gpus)
    again = replace(first, timestamp=first.timestamp + 2)  # the same GPUs: a page not read again
    reader = ListedRounds([replace(evil, hosts=(first, *evil.hosts[1:])), replace(evil, hosts=(again,))])
    app = ClusterApp(ClusterSource(reader, interval_s=60.0))
    async with app.run_test(size=(80, 24)) as pilot:
        while app.cluster_screen.last is None:
            await pilot.pause(0.01)
        cluster = app.source.round_now()
        while app.cluster_screen.last is None or app.cluster_screen.last.hosts[0].timestamp != again.timestamp:
            await pilot.pause(0.01)
        assert cluster.hosts[0].gpus is gpus
        lines = shown(app)
        assert "\x1b" not in lines[0] and "\\x1b]52" in lines[0] and "[b]bold[/b]" in lines[0]
        assert all("\x1b" not in line for line in lines) and "\\x1b[2J" in lines[1]
        assert app.latest is not None  # the round cleaned whole: clean too
        assert all(g.name.startswith("\\x1b[2J") for g in app.latest.hosts[0].gpus)
        await pilot.press("enter")  # the host's GPU panel is handed the host cleaned
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, HostScreen) and screen.last is not None
        assert all(g.name.startswith("\\x1b[2J") for g in screen.last.gpus)


@pytest.mark.snapshot
def test_cluster_screen_80x24(snap_compare) -> None:
    app, reader = cluster_app()

    async def run_before(pilot) -> None:
        await play(app, reader, pilot)

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)
