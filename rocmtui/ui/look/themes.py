"""The names of Textual's built-in themes, known without importing Textual.

``rocmtui train`` checks ``--theme`` before it starts the trainer, and importing Textual for that (0.2 s on
a fast core, 0.5 s on the 2-core box) held the trainer's start back by as much. A test keeps this list equal
to Textual's own ``BUILTIN_THEMES``.
"""

from __future__ import annotations

from rocmtui.base.errors import UsageError

THEME_NAMES = frozenset(
    {
        "ansi-dark", "ansi-light", "atom-one-dark", "atom-one-light", "catppuccin-frappe", "catppuccin-latte",
        "catppuccin-macchiato", "catppuccin-mocha", "dracula", "flexoki", "gruvbox", "monokai", "nord",
        "rose-pine", "rose-pine-dawn", "rose-pine-moon", "solarized-dark", "solarized-light", "textual-dark",
        "textual-light", "tokyo-night",
    }
)  # fmt: skip


def check_theme(theme: str) -> None:
    """A one-line UsageError for an unknown theme, before any terminal setup. A name this list lacks is
    looked up in Textual itself (a newer Textual may have more themes)."""
    if theme in THEME_NAMES:
        return
    from textual.theme import BUILTIN_THEMES

    if theme not in BUILTIN_THEMES:
        raise UsageError(f"unknown theme {theme!r}; choose from {', '.join(sorted(BUILTIN_THEMES))}")
