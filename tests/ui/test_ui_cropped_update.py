"""Partial updates cropped at the start of each dirty span: only the changed cells are written, and a terminal
that applies them shows the same screen as one that is sent every frame in full."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from cluster_rounds import ListedRounds, synthetic_round
from rich.cells import cell_len
from rich.console import Console
from rich.segment import Segment
from rich.style import Style
from textual._compositor import CompositorUpdate
from textual.geometry import Region
from textual.strip import Strip

from rocmtui.config import MonitorConfig
from rocmtui.gpu.cluster.cluster_source import ClusterSource
from rocmtui.gpu.cluster.reading import ClusterRound
from rocmtui.gpu.replay import ManualReplay, ReplaySource
from rocmtui.ui.app import create_monitor_app
from rocmtui.ui.cluster_app import ClusterApp
from rocmtui.ui.cropped_update import CroppedChopsUpdate, CroppingCompositor, SgrWriter, char_start
from rocmtui.ui.state.cluster_rows import gpu_text

H200_RECORDING = Path(__file__).resolve().parents[2] / "screenshots" / "h200-monitor-recording.jsonl"
COMBINED_RECORDING = Path(__file__).resolve().parent / "data" / "monitor-8gpu-combined.jsonl"
CONSOLE = Console(color_system="256", force_terminal=True, width=200, legacy_windows=False)
TOKENS = re.compile(r"\x1b\[(\d+);(\d+)H|\x1b\[([0-9;]*)m|\x1b\[[0-9;?]*[A-Za-z]|(\n)|([^\x1b\n])")
Pen = tuple[frozenset[int], str, str]
"""What a cell was written with: its attributes (SGR numbers), foreground and background (``""``: default)."""
Cell = tuple[str, Pen]
"""A character (``""`` for the right half of a wide one) and the pen it was written with."""
NO_PEN: Pen = (frozenset(), "", "")
ATTRIBUTES_OFF = {22: (1, 2), 23: (3,), 24: (4,), 25: (5, 6), 27: (7,), 28: (8,), 29: (9,)}


def pen_after(pen: Pen, params: str) -> Pen:
    """The pen after one SGR sequence: resets, attributes on and off, 8-bit and true colours, defaults."""
    attributes, fg, bg = set(pen[0]), pen[1], pen[2]
    codes = [int(code) if code else 0 for code in params.split(";")]
    i = 0
    while i < len(codes):
        code = codes[i]
        if code in (38, 48):
            size = 3 if codes[i + 1] == 5 else 5
            colour = ";".join(map(str, codes[i : i + size]))
            fg, bg = (colour, bg) if code == 38 else (fg, colour)
            i += size
            continue
        if code == 0:
            attributes, fg, bg = set(), "", ""
        elif code == 39:
            fg = ""
        elif code == 49:
            bg = ""
        elif 30 <= code <= 37 or 90 <= code <= 97:
            fg = str(code)
        elif 40 <= code <= 47 or 100 <= code <= 107:
            bg = str(code)
        elif code in ATTRIBUTES_OFF:
            attributes -= set(ATTRIBUTES_OFF[code])
        else:
            attributes.add(code)
        i += 1
    return frozenset(attributes), fg, bg


class Terminal:
    """Just enough of a terminal for Textual's updates: cursor moves, SGR, text, wide characters."""

    def __init__(self, width: int, height: int) -> None:
        self.cells: list[list[Cell]] = [[(" ", NO_PEN)] * width for _ in range(height)]
        self.x = self.y = 0
        self.pen = NO_PEN

    def put(self, char: str) -> None:
        row, width = self.cells[self.y], cell_len(char)
        if self.x < len(row) and row[self.x][0] == "" and self.x > 0:  # over the right half of a wide character
            row[self.x - 1] = (" ", row[self.x - 1][1])
        end = self.x + width
        if end < len(row) and row[end][0] == "":  # over the left half of one
            row[end] = (" ", row[end][1])
        row[self.x] = (char, self.pen)
        if width == 2 and self.x + 1 < len(row):
            row[self.x + 1] = ("", self.pen)
        self.x = min(end, len(row) - 1)

    def write(self, text: str) -> None:
        for match in TOKENS.finditer(text):
            move, sgr, new_line, char = match.group(1), match.group(3), match.group(4), match.group(5)
            if move:
                self.y, self.x = int(move) - 1, int(match.group(2)) - 1
            elif sgr is not None:
                self.pen = pen_after(self.pen, sgr)
            elif new_line:
                self.y = min(self.y + 1, len(self.cells) - 1)
            elif char:
                self.put(char)


def test_a_span_is_written_from_its_own_start() -> None:
    style = Style(color="red")
    strip = Strip([Segment("util  ", Style()), Segment("█████▌░░ 45%", style)])
    update = CroppedChopsUpdate([{0: strip, 20: None}], [(0, 11, 18)], [[20, 30]])
    text = update.render_segments(CONSOLE)
    assert text.startswith("\x1b[1;12H") and "util" not in text and "▌░░ 45%" in text
    screen = Terminal(30, 1)
    screen.write(update.render_segments(CONSOLE))
    assert "".join(char for char, _ in screen.cells[0][11:18]) == "▌░░ 45%"


def test_a_crop_never_starts_in_the_right_half_of_a_wide_character() -> None:
    strip = Strip([Segment("ab"), Segment("漢字cd")])
    assert [char_start(strip, offset) for offset in range(8)] == [0, 1, 2, 2, 4, 4, 6, 7]
    update = CroppedChopsUpdate([{0: strip}], [(0, 3, 8)], [[8]])
    assert update.render_segments(CONSOLE).startswith("\x1b[1;3H")


def test_colours_are_written_as_changes_and_reset_once_at_the_end() -> None:
    tip, track = Style(bold=True, color="color(174)", bgcolor="color(233)"), Style(bold=True, color="color(95)")
    out = SgrWriter(CONSOLE)
    out.write("▊", tip)
    out.write("░░", track)  # the same attributes: the foreground, and the background back to the default
    out.write(" 95", tip)
    out.write("x", Style(color="color(174)", bgcolor="color(233)"))  # bold off: a reset first
    out.write(" ", None)
    assert out.text() == (
        "\x1b[1;38;5;174;48;5;233m▊\x1b[38;5;95;49m░░\x1b[38;5;174;48;5;233m 95\x1b[0;38;5;174;48;5;233mx\x1b[0m "
    )
    screen, rich = Terminal(10, 1), Terminal(10, 1)
    segments = [("▊", tip), ("░░", track), (" 95", tip), ("x", Style(color="color(174)", bgcolor="color(233)"))]
    out = SgrWriter(CONSOLE)
    for text, style in segments:
        out.write(text, style)
    screen.write(out.text())
    rich.write("".join(style.render(text, color_system=CONSOLE._color_system) for text, style in segments))
    assert screen.cells == rich.cells and screen.pen == NO_PEN


class Mirror:
    """A terminal fed every update a screen sends, counting the partial ones."""

    def __init__(self, compositor: CroppingCompositor, size: tuple[int, int]) -> None:
        self.terminal = Terminal(*size)
        self.partial = 0
        self.render_update = compositor.render_update

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        update = self.render_update(*args, **kwargs)
        if isinstance(update, CompositorUpdate):
            self.partial += isinstance(update, CroppedChopsUpdate)
            self.terminal.write(update.render_segments(CONSOLE))
        return update


async def steps_then_keys(
    recording: Path, size: tuple[int, int], keys: tuple[str, ...], mp: pytest.MonkeyPatch
) -> None:
    """Twenty samples of ``recording``, then ``keys``: the mirrored terminal ends as a full frame draws."""
    source = ManualReplay(ReplaySource.from_jsonl(recording).samples * 2)
    app = create_monitor_app(MonitorConfig(), source, recording=True)
    async with app.run_test(size=size) as pilot:
        screen = app.monitor_screen
        compositor = screen._compositor
        assert isinstance(compositor, CroppingCompositor)
        mirror = Mirror(compositor, size)
        mp.setattr(compositor, "render_update", mirror)
        screen.refresh()  # a first full frame into the terminal
        await pilot.pause()
        for _ in range(20):
            source.step()
            await pilot.pause()
            await pilot.pause()
        for key in keys:
            await pilot.press(key)
            await pilot.pause()
        assert mirror.partial >= 10
        full = Terminal(*size)
        full.write(compositor.render_full_update().render_segments(CONSOLE))
        assert mirror.terminal.cells == full.cells
        assert mirror.terminal.pen == NO_PEN  # no colour left over for whatever is written next


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_the_monitor_written_in_cropped_updates_reads_as_if_drawn_in_full(
    size: tuple[int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every update the monitor screen sends, applied in turn, leaves the screen a full frame draws."""
    await steps_then_keys(H200_RECORDING, size, (), monkeypatch)


async def test_eight_gpus_and_the_keys_that_move_things_read_as_if_drawn_in_full(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The process table's cursor, sort and filter, the timebase and the GPU selection, over eight GPUs."""
    keys = ("down", "down", "s", "t", "g", "right_square_bracket", "up", "slash", "p", "y", "backspace", "escape")
    await steps_then_keys(COMBINED_RECORDING, (80, 24), keys, monkeypatch)


HOSTILE_NAMES = ("漢字 GPU\x1b[31m", "Tesla\u200b T4\r", "\x1b]0;title\x07A100", "\uff27\uff30\uff35 \uff10")
"""Exporter names of another width than their length (CJK, full-width letters), escapes and controls: a name
that changes between rounds repaints its line whole, never a run of cells that would split a wide character."""


def named_round(step: int, hostile: bool) -> ClusterRound:
    """``synthetic_round(step)``, its first host's GPUs given names from ``HOSTILE_NAMES`` that change each round."""
    cluster = synthetic_round(step)
    if not hostile:
        return cluster
    host = cluster.hosts[0]
    gpus = tuple(replace(g, name=HOSTILE_NAMES[(step + i) % len(HOSTILE_NAMES)]) for i, g in enumerate(host.gpus))
    return replace(cluster, hosts=(replace(host, gpus=gpus, hostname="node\x1b[2J01"), *cluster.hosts[1:]))


@pytest.mark.parametrize("hostile", [False, True])
async def test_the_cluster_screen_written_in_cropped_updates_reads_as_if_drawn_in_full(
    monkeypatch: pytest.MonkeyPatch, hostile: bool
) -> None:
    """Rounds of new readings, then the keys that move the cursor, sort and filter, then rounds again."""
    reader = ListedRounds([named_round(step, hostile) for step in range(20)])
    app = ClusterApp(ClusterSource(reader, interval_s=60.0))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.cluster_screen
        while screen.last is None:
            await pilot.pause(0.01)
        compositor = screen._compositor
        assert isinstance(compositor, CroppingCompositor)
        mirror = Mirror(compositor, (80, 24))
        monkeypatch.setattr(compositor, "render_update", mirror)
        screen.refresh()
        await pilot.pause()

        async def rounds(count: int) -> None:
            for _ in range(count):
                cluster = app.source.round_now()
                while screen.last is None or screen.last.timestamp != cluster.timestamp:
                    await pilot.pause(0.01)
                await pilot.pause()

        await rounds(8)
        for key in ("down", "down", "s", "r", "i", "i", "s", "s", "s", "s", "pagedown", "home"):
            await pilot.press(key)
            await pilot.pause()
        await rounds(4)
        assert mirror.partial >= 10
        full = Terminal(80, 24)
        full.write(compositor.render_full_update().render_segments(CONSOLE))
        assert mirror.terminal.cells == full.cells
        assert mirror.terminal.pen == NO_PEN


async def test_a_new_round_repaints_only_the_cells_that_changed_in_the_cluster_list(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A round where one GPU's utilisation changed: its digits and each history's newest point are repainted."""
    first = synthetic_round(1)
    host = first.hosts[0]
    gpu = host.gpus[2]
    changed_gpu = replace(gpu, utilization_pct=(gpu.utilization_pct or 0.0) + 10.0)
    gpus = (*host.gpus[:2], changed_gpu, *host.gpus[3:])
    second = replace(first, hosts=(replace(host, gpus=gpus), *first.hosts[1:]))
    reader = ListedRounds([first, second])
    app = ClusterApp(ClusterSource(reader, interval_s=60.0))
    async with app.run_test(size=(80, 24)) as pilot:
        listing = app.cluster_screen.list
        while app.cluster_screen.last is None:
            await pilot.pause(0.01)
        await pilot.pause()
        regions: list[Region] = []
        refresh = listing.refresh

        def noted(*regions_given: Region, **kwargs: Any) -> Any:
            regions.extend(regions_given)
            return refresh(*regions_given, **kwargs)

        monkeypatch.setattr(listing, "refresh", noted)
        app.source.round_now()
        while app.cluster_screen.last is not second:
            await pilot.pause(0.01)
        row = next(y for y, line in enumerate(listing.lines) if line.key.endswith(f":{gpu.index}:{gpu.uuid}"))
        old_line, new_line = (gpu_text(g, "").plain for g in (gpu, changed_gpu))
        changed = [i for i, (a, b) in enumerate(zip(old_line, new_line, strict=True)) if a != b]
        # each GPU's history gains its newest point; the one GPU's utilisation changed besides: no line whole
        assert regions and all(region.height == 1 and region.width <= 2 for region in regions)
        assert min(region.x for region in regions if region.y == row) == changed[0] > 0
