"""The key bar on the bottom row: the screen's keys drawn as one line of text.

Textual's ``Footer`` builds a widget per key and fills them in one frame after the screen's first: its keys
reach the terminal a whole layout pass late, and each key is a node to style and arrange at every resize.
This bar reads the same bindings (``Screen.active_bindings``, refreshed by ``bindings_updated_signal``) and
draws them in the first frame, in the footer's colours and spacing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, NamedTuple

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual import events
from textual.widget import Widget

if TYPE_CHECKING:
    from textual.screen import Screen


class ShownKey(NamedTuple):
    """A key the screen offers, before the bar decides whether it fits."""

    key: str
    display: str
    description: str
    enabled: bool
    apps_own: bool
    """Bound on the app (quit, help), not on the screen: kept longest on a narrow terminal."""
    parts: tuple[tuple[int, int, str], ...] = ()
    """A display of several keys (``+/-``): the columns of each other key in it (from the display's start, end
    excluded) and the key a click there presses."""

    @property
    def cells(self) -> int:
        """Columns it takes: `` key description ``."""
        return cell_len(self.display) + cell_len(self.description) + 3


DIM = Style(dim=True)
"""A key the screen offers but cannot act on now (``check_action`` answered None)."""
NORMAL = Style()


@dataclass(frozen=True)
class KeyItem:
    """One key as drawn: what pressing it sends, what it shows, and the columns it takes."""

    key: str
    display: str
    description: str
    enabled: bool
    start: int
    end: int
    parts: tuple[tuple[int, int, str], ...] = ()
    """As ``ShownKey.parts``, in the bar's columns."""

    def key_at(self, column: int) -> str:
        """The key a click at ``column`` presses: a part's under it, else the item's own."""
        return next((key for start, end, key in self.parts if start <= column < end), self.key)


def other_keys(display: str, hidden: dict[str, str]) -> tuple[tuple[int, int, str], ...]:
    """In a display of keys split by ``/`` (``+/-``), the columns of each one after the first that a hidden
    binding shows (``-``), and that binding's key."""
    parts: list[tuple[int, int, str]] = []
    column = 0
    for index, name in enumerate(display.split("/")):
        width = cell_len(name)
        if index and name in hidden:
            parts.append((column, column + width, hidden[name]))
        column += width + 1
    return tuple(parts)


class KeyBar(Widget, can_focus=False):
    """The keys of the current screen (``show=True`` bindings, one per action), as many whole keys as fit."""

    ALLOW_SELECT = False
    COMPONENT_CLASSES: ClassVar[set[str]] = {"key-bar--key", "key-bar--description"}
    DEFAULT_CSS = """
    KeyBar {
        dock: bottom;
        height: 1;
        color: $footer-foreground;
        background: $footer-background;
        & > .key-bar--key {
            color: $footer-key-foreground;
            background: $footer-key-background;
            text-style: bold;
        }
        & > .key-bar--description {
            color: $footer-description-foreground;
            background: $footer-description-background;
        }
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.items: list[KeyItem] = []
        """The keys drawn by the last render, left to right."""

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self._bindings_changed)

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def _bindings_changed(self, _: Screen[object]) -> None:
        self.refresh()

    def render(self) -> Text:
        key_style = self.get_component_rich_style("key-bar--key")
        description_style = self.get_component_rich_style("key-bar--description")
        text = Text(no_wrap=True, overflow="crop", end="")
        self.items = []
        for shown in self.fitting(self.shown_keys(), self.size.width):
            start = text.cell_len
            dim = NORMAL if shown.enabled else DIM
            text.append(f" {shown.display} ", key_style + dim)
            text.append(f"{shown.description} ", description_style + dim)
            parts = tuple((start + 1 + low, start + 1 + high, key) for low, high, key in shown.parts)
            self.items.append(
                KeyItem(shown.key, shown.display, shown.description, shown.enabled, start, text.cell_len, parts)
            )
        return text

    def shown_keys(self) -> list[ShownKey]:
        """The first binding of each shown action, in the screen's order."""
        seen: set[str] = set()
        keys = []
        bindings = list(self.screen.active_bindings.values())
        hidden = {self.app.get_key_display(b.binding): b.binding.key for b in bindings if not b.binding.show}
        for node, binding, enabled, _tooltip in bindings:
            if not binding.show or binding.action in seen:
                continue
            seen.add(binding.action)
            display = self.app.get_key_display(binding)
            parts = other_keys(display, hidden)
            keys.append(ShownKey(binding.key, display, binding.description, enabled, node is self.app, parts))
        return keys

    @staticmethod
    def fitting(keys: list[ShownKey], width: int) -> list[ShownKey]:
        """The keys that fit in ``width``, whole: when not all do, the screen's last keys go first, so that the
        app's own (quit and help) stay on a narrow terminal."""
        kept = list(keys)
        while sum(k.cells for k in kept) > width and any(not k.apps_own for k in kept):
            del kept[max(i for i, k in enumerate(kept) if not k.apps_own)]
        while kept and sum(k.cells for k in kept) > width:
            kept.pop()
        return kept

    def on_click(self, event: events.Click) -> None:
        """A click on a key presses it (a disabled one rings the bell)."""
        for item in self.items:
            if item.start <= event.x < item.end:
                if item.enabled:
                    self.app.simulate_key(item.key_at(event.x))
                else:
                    self.app.bell()
                return
