"""The boundary for outside text: whatever rocmtui did not write itself becomes plain, visible, bounded text.

Process names and command lines, users, GPU names, run names and paths, metric names, logged strings, script
output, exception messages and settings values are drawn, printed or served only after ``plain``. It makes
every control character visible as an escape (``ESC`` shows as ``\\x1b``, so ``ESC ] 52`` can never reach a
terminal as a clipboard write), shows invalid UTF-8 and lone surrogates as U+FFFD, and bounds the length.
What it returns is still a ``str``: a widget must draw it as text, never as markup (``rocmtui.ui.look.safe_text``).
"""

from __future__ import annotations

import re

DEFAULT_LIMIT = 4096
"""Characters kept by default: a command line or an error message longer than this is cut, with an ellipsis."""

ELLIPSIS = "…"
REPLACEMENT = "\ufffd"

_BIDI = (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))
"""Bidirectional marks, embeddings, overrides and isolates: they reorder what follows them on the screen."""
_SEPARATORS = (0x2028, 0x2029, 0xFEFF)
"""Line and paragraph separators (some terminals break lines at them) and the byte-order mark."""


# pragma: no mutate start (the tables are built at import, where mutmut cannot switch a mutant on; the tests of
# plain check every code they hold)
def _escape(code: int) -> str:
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}"


def _table(keep: str) -> dict[int, str]:
    codes = (*range(0x20), 0x7F, *range(0x80, 0xA0), *_BIDI, *_SEPARATORS)
    return {code: _escape(code) for code in codes if chr(code) not in keep}


_ONE_LINE = _table(keep="")
_LINES = _table(keep="\n\t")
# pragma: no mutate end
_SURROGATE = re.compile("[\ud800-\udfff]")


def plain(value: object, *, limit: int = DEFAULT_LIMIT, lines: bool = False) -> str:
    """``value`` as display text: control characters, escape sequences and bidi controls made visible, invalid
    UTF-8 (bytes, or a ``str`` holding surrogates from ``os.fsdecode``) as U+FFFD, at most ``limit`` characters.

    ``lines=True`` keeps newlines and tabs (a log message); otherwise the text is one line. Anything that is not
    ``str`` or ``bytes`` is shown through ``str()`` and cleaned the same way.
    """
    cut = False
    if isinstance(value, bytes | bytearray | memoryview):
        cut = len(value) > limit * 4  # a character takes at most 4 bytes: more bytes hold more than limit of them
        text = bytes(value[: limit * 4]).decode("utf-8", errors="replace")
    elif isinstance(value, str):
        text = value
    else:
        text = _str_of(value, limit)
    cut = cut or len(text) > limit
    text = _SURROGATE.sub(REPLACEMENT, text[:limit]).translate(_LINES if lines else _ONE_LINE)
    if len(text) > limit or cut:
        return text[: max(0, limit - 1)] + ELLIPSIS
    return text


def _str_of(value: object, limit: int) -> str:
    try:
        return str(value)[: limit + 1]
    except Exception as err:  # an object whose __str__ raises is still shown, by its type
        return f"<{type(value).__name__}: unprintable ({type(err).__name__})>"


def one_line(value: object, *, limit: int = DEFAULT_LIMIT) -> str:
    """``value`` as plain text on one line, with runs of whitespace (newlines and tabs too) as one space."""
    if isinstance(value, str):
        cut = len(value) > limit * 2  # what the pre-cut drops is shown as cut, however short the rest
        value = " ".join(value[: limit * 2].split()) + (ELLIPSIS if cut else "")
    return plain(value, limit=limit)
