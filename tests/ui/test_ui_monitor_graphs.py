"""The monitor's history graphs and colours: braille picture, axes, timebase and graph keys, levels."""

from __future__ import annotations

from dataclasses import replace

from rich.style import Style
from ui_helpers import monitor_shown

from rocmtui.gpu.history import Point
from rocmtui.gpu.sample import GpuSample
from rocmtui.ui.look.braille import FIRST, SECOND, dot_level, picture
from rocmtui.ui.look.severity import memory_level, power_level, temp_level, util_level
from rocmtui.ui.screens.help import MONITOR_KEYS
from rocmtui.ui.widgets.changed_cells import changed_runs
from rocmtui.ui.widgets.gpu_card import clocks_text
from rocmtui.ui.widgets.gpu_graph_card import GpuGraphCard
from rocmtui.ui.widgets.history_graph import Track, axis_labels, changed_span, graph_rows, round_tick

GIB = 1024**3


def flat(value: float) -> Point:
    return Point(value, value, value)


def test_a_full_value_fills_the_top_dot_row_and_zero_the_bottom() -> None:
    rows = picture([([flat(100.0), flat(100.0)], 100.0)], width=1, height=2)
    assert rows[0] == ("⠉", (FIRST,))  # the two top dots of the top cell
    rows = picture([([flat(0.0), flat(0.0)], 100.0)], width=1, height=2)
    assert rows[1] == ("⣀", (FIRST,))  # the two bottom dots of the bottom cell
    assert rows[0] == (" ", (0,))


def test_a_column_spans_its_min_to_max_and_the_second_series_owns_shared_cells() -> None:
    spread = Point(0.0, 50.0, 100.0)
    rows = picture([([None, spread], 100.0), ([flat(0.0), flat(0.0)], 100.0)], width=1, height=1)
    text, owners = rows[0]
    assert ord(text) - 0x2800 == 0x08 | 0x10 | 0x20 | 0x80 | 0x40  # the right column full, the bottom-left dot
    assert owners == (SECOND,)


def test_axes_are_labelled_and_the_key_names_both_series() -> None:
    tracks = [
        Track("util", [flat(50.0)] * 40, 100.0, lambda v: f"{v:.0f}%"),
        Track("VRAM", [flat(10.0)] * 40, 140.0, lambda v: f"{v:.0f}G"),
    ]
    rows = graph_rows(tracks, width=40, height=6, ends=("-10m", "now"))
    texts = [text for text, _ in rows]
    assert texts[0].startswith(" 100% ") and texts[0].rstrip().endswith("140G")
    assert texts[4].startswith("   0% ") and texts[4].rstrip().endswith("0G")
    assert texts[2].startswith("  50% ") and texts[3].rstrip().endswith("50G")  # round values, on their rows
    assert texts[-1].startswith("-10m") and texts[-1].endswith("now")
    assert "⣀ util" in texts[-1] and "⣀ VRAM" in texts[-1]
    assert all(len(text) == 40 for text in texts)


def test_only_the_changed_cells_of_a_row_are_repainted() -> None:
    old = ("abcdef", (1, 1, 1, 1, 1, 1))
    assert changed_span(old, old) is None
    assert changed_span(old, ("abcdxf", (1, 1, 1, 1, 1, 1))) == (4, 5)
    assert changed_span(old, ("abcdef", (1, 2, 1, 1, 1, 1))) == (1, 2)


def _gpu(**fields: object) -> GpuSample:
    return replace(GpuSample(index=0, name="test card", timestamp=0.0), **fields)  # type: ignore[arg-type]


def test_levels_follow_the_cards_own_limits() -> None:
    assert util_level(_gpu(utilization_pct=99.0)) == "critical"
    assert util_level(_gpu(utilization_pct=20.0)) == "calm"
    assert util_level(_gpu()) is None
    assert memory_level(_gpu(memory_used_bytes=90, memory_total_bytes=100)) == "warning"
    hot = _gpu(temperatures_c=(("junction", 101.0),))
    assert temp_level(hot) == "critical"  # no limit known: 90 °C
    assert temp_level(replace(hot, temp_crit_c=110.0)) == "warning"  # within 10 °C of the card's own limit
    assert temp_level(replace(hot, temp_crit_c=120.0)) == "calm"
    assert power_level(_gpu(power_w=695.0, power_cap_w=700.0)) == "critical"
    assert power_level(_gpu(power_w=695.0)) is None


def test_a_gpu_without_clocks_reads_plainly() -> None:
    assert clocks_text(_gpu()) == "N/A"
    assert clocks_text(_gpu(fan_rpm=1200.0)) == "fan 1200 rpm"
    assert clocks_text(_gpu(sclk_mhz=2100.0, fan_pct=40.0)) == "sclk 2100 MHz  fan 40%"


def test_help_lists_every_key_the_monitor_footer_shows() -> None:
    keys = {part for key, _ in MONITOR_KEYS for part in key.split(" / ")}
    assert {"+", "-", "t", "g", "s", "r", "/", "[", "]", "k", "K", "c", "m", "q", "?"} <= keys


def test_the_middle_label_is_a_round_value_on_the_row_its_dots_are_drawn_in() -> None:
    assert round_tick(100.0) == 50.0 and round_tick(700.0) == 400.0 and round_tick(95.0) == 50.0
    assert round_tick(140.4 * GIB, GIB) == 50.0 * GIB  # not 60G or 70.2G
    track = Track("power", [], 700.0, lambda v: f"{v:.0f}W")
    labels = axis_labels(track, 5)
    assert labels[0] == "700W" and labels[-1] == "0W" and labels.count("400W") == 1
    row = labels.index("400W")  # 400 of 700 on 20 dot rows is level 11: the third cell row from the top
    assert row == 5 - 1 - dot_level(400.0, 700.0, 20) // 4 == 2


async def test_the_graph_fills_from_the_left_edge_and_the_timebase_grows_with_the_history() -> None:
    async with monitor_shown(1, 30) as (app, pilot):
        card = app.monitor_screen.query_one(GpuGraphCard)
        rows = card.graph.rows
        assert rows[-1][0].startswith("-29s") and rows[-1][0].endswith("window 1m")
        assert "history 1m auto" in str(app.monitor_screen.status.render())
        plot = [text[6:-6] for text, _ in rows[:-1]]
        width = len(plot[0])
        drawn = [x for x in range(width) if any(line[x] not in " ⠀" for line in plot)]
        # 30 samples a second apart of a minute's window: the left half, starting at the left edge
        assert drawn[0] == 0 and width * 0.4 < drawn[-1] < width * 0.6
        await pilot.press("t")  # fixed at 1 min
        assert "history 1m" in str(app.monitor_screen.status.render())
        assert "auto" not in str(app.monitor_screen.status.render())
        await pilot.press("t", "t")  # 10 min, 1 h
        assert card.graph.rows[-1][0].startswith("-29s") and card.graph.rows[-1][0].endswith("window 1h")
        assert "history 1h" in str(app.monitor_screen.status.render())
        await pilot.press("g")
        assert "power" in card.graph.rows[-1][0] and "temp" in card.graph.rows[-1][0]
        assert card.graph.rows[0][0].startswith(" 750W")  # the synthetic card's power cap tops the axis
        await pilot.press("t", "t")  # 24 h, then auto again
        assert "history 1m auto" in str(app.monitor_screen.status.render())


async def test_a_history_longer_than_the_window_scrolls_with_now_at_the_right() -> None:
    async with monitor_shown(1, 90) as (app, _):
        card = app.monitor_screen.query_one(GpuGraphCard)
        assert "history 10m auto" in str(app.monitor_screen.status.render())  # 89 s: past the first minute
        assert card.graph.rows[-1][0].startswith("-1m") and card.graph.rows[-1][0].endswith("window 10m")
        app.monitor_screen.panel.set_view(replace(app.monitor_screen.panel.view, span_s=60.0, fixed=True))
        assert card.graph.rows[-1][0].startswith("-1m") and card.graph.rows[-1][0].endswith("now")
        plot = [text[6:-6] for text, _ in card.graph.rows[:-1]]
        assert all(any(line[x] not in " ⠀" for line in plot) for x in range(len(plot[0])))  # full width


def test_a_readout_line_is_rewritten_only_where_it_changed() -> None:
    assert changed_runs("util  ███▌░░ 45%", "util  ███▌░░ 46%") == [(len("util  ███▌░░ 4"), len("util  ███▌░░ 46"))]
    assert changed_runs("util  ███▌░░ 45%", "util  ███▋░░ 46%") == [(len("util  ███"), len("util  ███▋░░ 46"))]
    assert changed_runs("VRAM  ██░ 3.0/24.0 GiB  x", "VRAM  ██░ 3.0/24.0 GiB  x") == []
    assert changed_runs("temp  52°C  ", "temp  53°C  ") == [(len("temp  5"), len("temp  53"))]
    assert changed_runs("a", "abc") == [(1, 3)]
    assert changed_runs("abc", "xbc") == [(0, 1)]
    # the track between a bar's tip and its value is skipped once it costs more than a second cursor move
    before, after = f"power ███▌{'░' * 30} 589 W", f"power ███▋{'░' * 30} 596 W"
    assert changed_runs(before, after) == [(9, 10), (len(before) - 4, len(before) - 2)]
    before, after = f"power ███▌{'░' * 3} 589 W", f"power ███▋{'░' * 3} 596 W"
    assert changed_runs(before, after) == [(9, len(before) - 2)]


async def test_kept_line_styles_follow_a_theme_change_and_an_ancestors_background() -> None:
    """The readout and the graph keep their line styles from sample to sample (``repaint_cells``), yet draw in the
    new colours once the theme (``c``) or a card's background changes: no line drawn in the old ones."""
    async with monitor_shown(gpus=1, samples=8) as (app, pilot):
        card = app.monitor_screen.query_one(GpuGraphCard)

        def drawn(widget: object) -> set[Style]:
            return {segment.style for y in range(widget.size.height) for segment in widget.render_line(y)}  # type: ignore[attr-defined]

        def fresh(widget: object) -> Style:
            return widget.rich_style  # type: ignore[attr-defined]

        before = (drawn(card.readout), drawn(card.graph))
        assert fresh(card.readout) in before[0] and fresh(card.graph) in before[1]
        await pilot.press("c")
        await pilot.pause()
        after_theme = (drawn(card.readout), drawn(card.graph))
        assert fresh(card.readout) in after_theme[0] and fresh(card.graph) in after_theme[1]
        assert fresh(card.readout) not in before[0]  # the theme did change the readout's colours

        card.styles.background = "#123456"
        await pilot.pause()
        readout_styles, graph_styles = drawn(card.readout), drawn(card.graph)
        assert fresh(card.readout) in readout_styles and fresh(card.graph) in graph_styles
        assert {style.bgcolor for style in readout_styles | graph_styles} == {fresh(card.readout).bgcolor}
