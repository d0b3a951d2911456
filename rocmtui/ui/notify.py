"""A word when a run ends or fails: the terminal's bell and a desktop notification (OSC 9 and OSC 777).

``ESC ] 9 ; text BEL`` is iTerm2's, Windows Terminal's and ConEmu's; ``ESC ] 777 ; notify ; title ; text BEL``
is urxvt's, foot's, WezTerm's and Ghostty's. A terminal that knows neither ignores both. The text comes from
outside (run names, error messages): it crosses ``plain``, so no ESC, BEL or other control character is left
to end the sequence early, and it is bounded. Under ``rocmtui serve`` only the bell is sent: the browser's
terminal draws no desktop notification, and the app's own toast says the rest.
"""

from __future__ import annotations

from rocmtui.base.text import one_line
from rocmtui.base.units import fmt_acc, fmt_span
from rocmtui.events import RunFailed, RunFinished

BEL = "\x07"
TITLE = "rocmtui"
NOTICE_LIMIT = 200
"""Characters of a notification's text at most."""


def notice_text(final: RunFinished | RunFailed | None, name: str) -> str:
    """``cifar10 fastnet: completed, best test accuracy 93.57%, 3.44s of training``, plain and bounded."""
    if isinstance(final, RunFinished):
        best = "" if final.best_test_acc is None else f", best test accuracy {fmt_acc(final.best_test_acc)}"
        result = f"{final.reason}{best}, {fmt_span(final.total_s)} of training"
    elif isinstance(final, RunFailed):
        result = f"failed ({final.kind}): {final.message}"
    else:
        result = "ended without a result"
    return one_line(f"{name}: {result}" if name else result, limit=NOTICE_LIMIT)


def osc_notifications(text: str) -> str:
    """The two desktop notifications of ``text`` (made plain here too: nothing outside reaches a sequence raw)."""
    safe = one_line(text, limit=NOTICE_LIMIT)
    return f"\x1b]9;{TITLE}: {safe}{BEL}\x1b]777;notify;{TITLE};{safe}{BEL}"


def terminal_bytes(text: str, *, web: bool) -> str:
    """What is written to the terminal: the bell, then (not under serve) the notifications."""
    return BEL if web else BEL + osc_notifications(text)
