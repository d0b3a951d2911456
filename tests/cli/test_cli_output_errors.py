"""Output errors end every command quietly: a reader gone (a pipe closed early) as SIGPIPE would, a full
disk (``/dev/full``) in one line; never a traceback. Real pipes and the real ``/dev/full``."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rocmtui.cli.main import main
from rocmtui.entry import EXIT_BROKEN_PIPE, EXIT_OUTPUT_FAILED, run_writing_out

DATA = Path(__file__).resolve().parents[1] / "data"
RUN = DATA / "h200-fastnet-run"
COMMANDS = {
    "runs": ["runs", "--runs-dir", str(DATA)],
    "runs --json": ["runs", "--json", "--runs-dir", str(DATA)],
    "runs --csv -": ["runs", str(RUN), "--csv", "-"],
    "monitor --once": ["monitor", "--once", "--backend", "host"],
}


@pytest.mark.parametrize("name", list(COMMANDS))
def test_a_full_disk_under_stdout_is_one_line_and_exit_1(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    err = io.StringIO()
    with open("/dev/full", "w") as full:
        monkeypatch.setattr(sys, "stdout", full)  # every write that reaches it: ENOSPC
        monkeypatch.setattr(sys, "stderr", err)
        code = run_writing_out(lambda: main(COMMANDS[name]))
        full.flush()  # nothing left to fail at the interpreter's exit: stdout now goes nowhere
    assert code == EXIT_OUTPUT_FAILED
    assert err.getvalue() == "rocmtui: cannot write the output: No space left on device\n"


def test_an_error_that_is_not_of_the_output_is_raised_on() -> None:
    def command() -> int:
        raise PermissionError(13, "Permission denied", "/etc/x")

    with pytest.raises(PermissionError):
        run_writing_out(command)


def _run(argv: list[str], stdout: int) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rocmtui", *argv],
        stdout=stdout,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.slow
@pytest.mark.parametrize("name", list(COMMANDS))
def test_a_reader_gone_ends_the_command_quietly_as_sigpipe_would(name: str) -> None:
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first line: `| head -0`
    try:
        result = _run(COMMANDS[name], write)
    finally:
        os.close(write)
    assert (result.returncode, result.stderr) == (EXIT_BROKEN_PIPE, "")


@pytest.mark.slow
def test_a_reader_that_leaves_after_one_line_ends_the_writer_quietly() -> None:
    """``rocmtui runs RUN --csv - | head -1``: a real pipeline."""
    command = f"{sys.executable} -m rocmtui runs {RUN} --csv - | head -1; echo rc=${{PIPESTATUS[0]}}"
    big = DATA / "cpu-ddp-run"
    result = subprocess.run(
        ["bash", "-c", command.replace(str(RUN), str(big))], capture_output=True, text=True, timeout=120, check=False
    )
    first, rc = result.stdout.splitlines()
    assert first == "step,time_s,name,value"
    assert rc in ("rc=0", f"rc={EXIT_BROKEN_PIPE}") and result.stderr == ""


@pytest.mark.slow
@pytest.mark.parametrize("name", list(COMMANDS))
def test_a_full_disk_in_a_real_process_is_one_line(name: str) -> None:
    with open("/dev/full", "wb") as full:
        result = _run(COMMANDS[name], full.fileno())
    assert result.returncode == EXIT_OUTPUT_FAILED
    assert result.stderr == "rocmtui: cannot write the output: No space left on device\n"
