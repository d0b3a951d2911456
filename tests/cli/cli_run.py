"""``rocmtui``'s main called in-process: its exit code and what it printed."""

from __future__ import annotations

import pytest

from rocmtui.cli.main import main


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = main(argv)
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    out, err = capsys.readouterr()
    return code, out, err
