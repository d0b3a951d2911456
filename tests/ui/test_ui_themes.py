"""The theme names the CLI checks without Textual are Textual's own."""

from __future__ import annotations

import pytest
from textual.theme import BUILTIN_THEMES

from rocmtui.base.errors import UsageError
from rocmtui.ui.look.themes import THEME_NAMES, check_theme


def test_the_names_are_textuals_built_in_themes() -> None:
    assert set(BUILTIN_THEMES) == THEME_NAMES


def test_an_unknown_theme_is_one_line_naming_the_choices() -> None:
    with pytest.raises(UsageError, match="unknown theme 'neon'; choose from ansi-dark, "):
        check_theme("neon")
    check_theme("nord")


def test_a_theme_newer_than_the_list_is_looked_up_in_textual(monkeypatch: pytest.MonkeyPatch) -> None:
    from rocmtui.ui.look import themes

    monkeypatch.setattr(themes, "THEME_NAMES", frozenset({"nord"}))
    check_theme("dracula")  # Textual has it: accepted
    with pytest.raises(UsageError, match="unknown theme 'neon'"):
        check_theme("neon")
