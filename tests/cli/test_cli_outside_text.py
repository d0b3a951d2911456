"""Plain CLI output shows names, paths and messages from run folders with their escape sequences made visible."""

from __future__ import annotations

from pathlib import Path

import pytest

from rocmtui.cli.main import main
from rocmtui.cli.run_commands import print_lines
from rocmtui.events import RunControl, RunFailed
from rocmtui.run.session import RunSession

OSC52 = "\x1b]52;c;cHduZWQ=\x1b\\"


def test_runs_shows_a_hostile_name_and_folder_as_visible_escapes(tmp_path: Path, capsys) -> None:
    run_dir = tmp_path / "runs" / f"20261201-080000-{OSC52}"
    run_dir.mkdir(parents=True)
    session = RunSession(run_dir, RunControl(), name=f"[/] \x1b[2J{OSC52}")
    session.emit(RunFailed(f"boom {OSC52}", "error"))
    session.close()
    assert main(["runs", "--runs-dir", str(tmp_path / "runs")]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\\x1b]52;c;" in out and "[/]" in out


def test_the_lines_left_after_a_ui_are_plain(capsys: pytest.CaptureFixture[str]) -> None:
    print_lines([f"rocmtui: failed: {OSC52}", "next\x9b2J"], failed=True)
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\x9b" not in err and err.count("\n") == 2


def test_an_error_message_holding_escapes_is_one_plain_line(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["runs", "--runs-dir", f"/no/such/{OSC52}\nsecond line"])
    out, err = capsys.readouterr()
    assert "\x1b" not in out + err and len((out + err).strip().splitlines()) == 1
    assert code in (0, 2)
