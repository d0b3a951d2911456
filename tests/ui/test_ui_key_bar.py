"""The key bar: the screen's shown keys in one line, in the first frame, kept in step with the bindings."""

from __future__ import annotations

from typing import Any, ClassVar

from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType

from rocmtui.gpu.replay import ManualReplay
from rocmtui.ui.app import MonitorApp
from rocmtui.ui.widgets.key_bar import KeyBar


class KeysApp(App[None]):
    """Keys of each kind the bar must tell apart: shown, hidden, two keys for one action, and one switched off."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a", "note('a')", "Alpha"),
        Binding("h", "note('h')", "Hidden", show=False),
        Binding("plus,equals_sign", "note('plus')", "Bigger", key_display="+"),
        Binding("b", "note('b')", "Beta"),
        Binding("x", "switch", "Extra"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.pressed: list[str] = []
        self.extra = "shown"

    def compose(self) -> ComposeResult:
        yield KeyBar()

    def action_note(self, what: str) -> None:
        self.pressed.append(what)

    def action_switch(self) -> None:
        self.pressed.append("x")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "switch":
            return {"shown": True, "disabled": None, "gone": False}[self.extra]
        return True


def bar_text(app: App[Any]) -> str:
    return app.screen.query_one(KeyBar).render().plain


async def test_shown_keys_one_per_action_in_the_footers_spacing() -> None:
    app = KeysApp()
    async with app.run_test(size=(80, 3)):
        assert bar_text(app) == " a Alpha  + Bigger  b Beta  x Extra "


async def test_a_narrow_bar_keeps_only_whole_keys() -> None:
    app = KeysApp()
    async with app.run_test(size=(26, 3)):
        assert bar_text(app) == " a Alpha  + Bigger "  # " b Beta " would need columns 19 to 26


async def test_the_bar_follows_the_bindings_as_they_change() -> None:
    """What Textual painted last (``items`` is set by each render), not a render asked for by the test."""
    app = KeysApp()
    async with app.run_test(size=(80, 3)) as pilot:
        bar = app.screen.query_one(KeyBar)
        await pilot.pause()
        assert [(item.display, item.enabled) for item in bar.items][-1] == ("x", True)
        app.extra = "disabled"
        app.refresh_bindings()
        await pilot.pause()
        assert [(item.display, item.enabled) for item in bar.items][-1] == ("x", False)
        app.extra = "gone"
        app.refresh_bindings()
        await pilot.pause()
        assert [item.display for item in bar.items] == ["a", "+", "b"]


async def test_a_click_presses_the_key_under_it_unless_disabled() -> None:
    app = KeysApp()
    async with app.run_test(size=(80, 3)) as pilot:
        bar = app.screen.query_one(KeyBar)
        await pilot.click(KeyBar, offset=(10, 0))  # inside " + Bigger "
        await pilot.click(KeyBar, offset=(1, 0))  # " a Alpha "
        assert app.pressed == ["plus", "a"]
        app.extra = "disabled"
        app.refresh_bindings()
        await pilot.pause()
        x = next(item for item in bar.items if item.display == "x")
        await pilot.click(KeyBar, offset=(x.start + 1, 0))
        await pilot.click(KeyBar, offset=(70, 0))  # past the last key: nothing
        assert app.pressed == ["plus", "a"]


async def test_a_narrow_terminal_keeps_the_apps_own_keys_and_drops_the_screens_last() -> None:
    """The monitor at 50 columns: quit and help (the app's keys) stay; the screen's last keys give way."""
    app = MonitorApp(ManualReplay([]))
    async with app.run_test(size=(50, 15)):
        text = bar_text(app)
        assert text == " +/- Interval  t Time  g Graph  q Quit  ? Help "
        assert len(text) <= 50
    async with MonitorApp(ManualReplay([])).run_test(size=(120, 15)) as pilot:
        assert bar_text(pilot.app).endswith(" k Kill  q Quit  ? Help ")  # wide: every key, in order


async def test_the_monitor_opened_from_training_keeps_the_way_back_on_its_bar() -> None:
    """At 80 columns not every key fits; ``m`` (back to the curves) does, with quit and help."""

    class FromTraining(MonitorApp):
        @property
        def has_run(self) -> bool:
            return True

    app = FromTraining(ManualReplay([]))
    async with app.run_test(size=(80, 24)):
        text = bar_text(app)
        assert text.startswith(" m Training ") and text.endswith(" q Quit  ? Help ") and len(text) <= 80


async def test_the_monitor_is_the_first_screen_and_its_keys_are_in_its_first_frame() -> None:
    """No blank screen before the monitor's, the keys drawn with it, and the filter input only once asked for."""
    app = MonitorApp(ManualReplay([]))
    async with app.run_test(size=(80, 24)) as pilot:
        assert app.screen_stack == [app.monitor_screen]
        assert " q Quit " in bar_text(app) and " ? Help " in bar_text(app)
        assert not app.monitor_screen.filter_input.is_mounted
        await pilot.press("slash")
        assert app.monitor_screen.filter_input.has_focus


async def test_a_click_on_the_minus_of_plus_minus_changes_the_interval_the_other_way() -> None:
    app = MonitorApp(ManualReplay([]))
    async with app.run_test(size=(120, 24)) as pilot:
        bar = app.screen.query_one(KeyBar)
        await pilot.pause()
        item = next(item for item in bar.items if item.display == "+/-")
        start = app.sampler.interval_s
        await pilot.click(KeyBar, offset=(item.start + 3, 0))  # " +/- ": the "-"
        await pilot.pause()
        faster = app.sampler.interval_s
        assert faster < start
        await pilot.click(KeyBar, offset=(item.start + 1, 0))  # the "+"
        await pilot.click(KeyBar, offset=(item.start + 6, 0))  # the description: the first key's
        await pilot.pause()
        assert faster < app.sampler.interval_s
