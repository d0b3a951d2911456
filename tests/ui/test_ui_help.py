"""The key reference (``?``): every key reachable at the sizes people use, by scrolling where it does not fit."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from textual.app import App
from textual.containers import VerticalScroll

from rocmtui.ui.screens.help import MONITOR_KEYS, TRAIN_KEYS, HelpScreen

APP_CSS = Path(__file__).resolve().parents[2] / "rocmtui" / "ui" / "app.tcss"


class HelpApp(App[None]):
    CSS_PATH = str(APP_CSS)

    def __init__(self, keys: tuple[tuple[str, str], ...]) -> None:
        super().__init__()
        self.keys = keys

    def on_mount(self) -> None:
        self.push_screen(HelpScreen("rocmtui: keys", self.keys))


def screen_text(app: App[None]) -> str:
    """What the terminal shows, as plain text in one line (Textual's SVG picture of it), without the borders
    and the scroll bar: a description wrapped over rows reads whole."""
    root = ET.fromstring(app.export_screenshot())
    text = "".join(root.itertext()).replace("\xa0", " ")
    return " ".join(re.sub("[\u2580-\u259f]", " ", text).split())


@pytest.mark.parametrize("size", [(80, 24), (80, 16)])
@pytest.mark.parametrize("keys", [TRAIN_KEYS, MONITOR_KEYS], ids=["train", "monitor"])
async def test_every_key_and_the_way_out_can_be_read(size: tuple[int, int], keys: tuple[tuple[str, str], ...]) -> None:
    app = HelpApp(keys)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        screens = [screen_text(app)]
        assert "escape closes" in screens[0]
        scroll = app.screen.query_one("#help-scroll", VerticalScroll)
        for _ in range(len(keys)):  # four rows at a time (a description takes two at most), to the end
            if scroll.scroll_y >= scroll.max_scroll_y:
                break
            await pilot.press(*["down"] * 4)
            screens.append(screen_text(app))
        missing = [what for _, what in keys if not any(" ".join(what.split()) in seen for seen in screens)]
        assert not missing
        await pilot.press("pageup", "pagedown", "end")
        assert " ".join(keys[-1][1].split()) in screen_text(app)  # the last key, at the end
        await pilot.press("home")
        await pilot.pause()
        assert keys[0][1] in screen_text(app)
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)
