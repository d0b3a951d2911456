"""The one "first line of an error" helper behind every one-line failure message."""

from __future__ import annotations

import pytest

from rocmtui.base.errors import first_line


@pytest.mark.parametrize(
    ("err", "plain", "typed"),
    [
        (RuntimeError("  disk full\n  at line 3\n"), "disk full", "RuntimeError: disk full"),
        (KeyError("state"), "'state'", "KeyError: 'state'"),
        (ValueError(""), "ValueError", "ValueError"),
        (OSError("\n\n"), "OSError", "OSError"),
    ],
)
def test_first_line_keeps_one_line_and_names_the_type_when_asked(err: BaseException, plain: str, typed: str) -> None:
    assert first_line(err) == plain
    assert first_line(err, with_type=True) == typed
