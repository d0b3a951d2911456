"""The monitor with many GPUs at 80x24: one line per GPU, and the graph of the GPU selected with [ and ]."""

from __future__ import annotations

from ui_helpers import monitor_shown

from rocmtui.ui.widgets.gpu_graph_card import GpuGraphCard


async def test_eight_gpus_at_80x24_graph_the_selected_one_and_the_keys_move_the_selection() -> None:
    async with monitor_shown(8, 30) as (app, pilot):
        screen = app.monitor_screen
        panel = screen.panel
        cards = list(screen.query(GpuGraphCard))
        assert len(cards) == 8 and all(card.has_class("-compact") for card in cards)
        graph = panel.focus_graph
        assert graph is not None and graph.display and graph.region.height >= 4
        assert screen.processes is not None
        assert graph.region.bottom <= screen.processes.region.y  # above the process table, not over it
        assert screen.processes.region.height >= 5
        assert graph.border_title == "GPU 0 · AMD Instinct MI300X (synthetic)"
        assert cards[0].has_class("-selected") and not cards[1].has_class("-selected")
        first_rows = list(graph.rows)
        assert first_rows[-1][0].startswith("-29s") and "util" in first_rows[-1][0]
        assert any(ch not in " ⠀" for text, _ in first_rows[:-1] for ch in text[6:-6])  # something is drawn

        await pilot.press("right_square_bracket")
        assert str(graph.border_title).startswith("GPU 1 ")
        assert cards[1].has_class("-selected") and not cards[0].has_class("-selected")
        assert graph.rows != first_rows  # another GPU's history (their utilisations differ)

        await pilot.press("left_square_bracket", "left_square_bracket")
        assert str(graph.border_title).startswith("GPU 7 ")  # wraps around

        await pilot.press("g")
        assert "power" in graph.rows[-1][0]  # the graph key applies to the selected GPU's graph too


async def test_one_gpu_at_80x24_keeps_its_full_card_and_no_second_graph() -> None:
    async with monitor_shown(1, 5) as (app, pilot):
        panel = app.monitor_screen.panel
        assert not panel.focus_shown
        card = app.monitor_screen.query_one(GpuGraphCard)
        assert not card.has_class("-compact") and card.graph.display
        await pilot.resize_terminal(80, 16)  # too short for the full card: one line, and its graph under it
        await pilot.pause()
        assert card.has_class("-compact")
        assert panel.focus_shown


async def test_a_click_on_a_gpu_line_selects_it() -> None:
    async with monitor_shown(8, 10) as (app, pilot):
        cards = list(app.monitor_screen.query(GpuGraphCard))
        await pilot.click(cards[5].readout)
        await pilot.pause()
        assert app.monitor_screen.panel.selected == 5 and cards[5].has_class("-selected")
        focus = app.monitor_screen.panel.focus_graph
        assert focus is not None and str(focus.border_title).startswith("GPU 5 ")
