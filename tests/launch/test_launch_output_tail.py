"""A script's output.log reaches a viewer: what it printed before the viewer came, and since."""

from __future__ import annotations

from pathlib import Path

from waiting import wait_for

from rocmtui.events import LogMessage
from rocmtui.launch.script import OutputTail


def test_a_watcher_is_shown_what_the_script_printed_before_and_since(tmp_path: Path) -> None:
    (tmp_path / "output.log").write_text("epoch 1 done\nloading\rloaded\n")
    seen: list[object] = []
    tail = OutputTail(tmp_path, seen.append)
    wait_for(lambda: len(seen) >= 2, 10, "the old lines")
    with (tmp_path / "output.log").open("a") as f:
        f.write("epoch 2 done\n")
    wait_for(lambda: len(seen) >= 3, 10, "the new line")
    tail.stop()
    assert [e.message for e in seen if isinstance(e, LogMessage)] == ["epoch 1 done", "loaded", "epoch 2 done"]
