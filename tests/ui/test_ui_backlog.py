"""The backlog between a run source's thread and the UI: the source waits when it is full, until it is drained."""

from __future__ import annotations

import threading

import pytest

from rocmtui.ui.backlog import Backlog


def never() -> bool:
    return False


def test_below_high_the_source_never_waits() -> None:
    backlog = Backlog(high=3)
    asked: list[int] = []
    for _ in range(3):
        backlog.add(lambda: asked.append(1) or False)  # type: ignore[func-returns-value]
    assert backlog.unapplied == 3 and asked == []


def test_a_full_backlog_waits_until_the_ui_has_drained_it_to_low() -> None:
    backlog = Backlog(high=4, low=1)
    for _ in range(4):
        backlog.add(never)
    waiting = threading.Event()

    def probe() -> bool:
        waiting.set()  # the source is inside its wait
        return False

    source = threading.Thread(target=backlog.add, args=(probe,))
    source.start()
    assert waiting.wait(10)
    for _ in range(3):  # 4 -> 1: drained to low
        backlog.applied()
    source.join(10)
    assert not source.is_alive() and backlog.unapplied == 2  # the one left, and the one it added


def test_a_source_gives_up_waiting_when_the_app_goes_away() -> None:
    backlog = Backlog(high=1)
    backlog.add(never)
    backlog.add(lambda: True)  # full, but the app is going: it posts and returns
    assert backlog.unapplied == 2


def test_bad_bounds_are_refused() -> None:
    with pytest.raises(ValueError, match="low < high"):
        Backlog(high=2, low=2)
