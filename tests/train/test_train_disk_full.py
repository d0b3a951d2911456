"""A full disk is one line and exit 1, keeps everything already written, and leaves no torn line.

On a real full filesystem: a small tmpfs mounted for the test (root only; CI runs as root). Without
one, the same failure is injected at the real write call.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from rocmtui.cli.main import main

pytestmark = pytest.mark.slow  # functional tier: trains on the CPU


@contextlib.contextmanager
def tmpfs(tmp_path: Path, size: str) -> Iterator[Path]:
    mount = tmp_path / f"tmpfs-{uuid.uuid4().hex[:6]}"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mount)], capture_output=True, check=False
    )
    if done.returncode != 0:
        pytest.skip("cannot mount a tmpfs here (not root?); the injected ENOSPC test covers this")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def whole_lines(path: Path) -> list[dict[str, object]]:
    data = path.read_bytes()
    assert data.endswith(b"\n"), "a torn last line"
    return [json.loads(line) for line in data.splitlines()]


def headless(runs_dir: Path, *extra: str) -> list[str]:
    return ["train", "cifar", "--headless", "--device", "cpu", "--epochs", "2", "--runs-dir", str(runs_dir), *extra]


def test_a_disk_that_fills_during_the_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with tmpfs(tmp_path, "2m") as disk:  # room for the stream, not for a 3.5 MB checkpoint
        code = main(headless(disk / "runs"))
        out, err = capsys.readouterr()
        assert code == 1
        assert "Traceback" not in out + err
        failure = [line for line in err.splitlines() if line.strip()]
        assert len(failure) == 2 and failure[0].startswith("failed (disk): disk full")  # and the run folder line
        run_dir = next((disk / "runs").iterdir())
        events = whole_lines(run_dir / "metrics.jsonl")
        assert events[1]["event"] == "RunStarted" and any(e.get("event") == "EpochCompleted" for e in events)
        assert json.loads((run_dir / "config.json").read_text())["epochs"] == 2


def test_a_disk_that_is_full_at_the_start(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with tmpfs(tmp_path, "256k") as disk:
        with contextlib.suppress(OSError), (disk / "filler").open("wb") as f:
            f.write(b"\0" * (1 << 20))
        code = main(headless(disk / "runs"))
        out, err = capsys.readouterr()
    assert code == 1 and "Traceback" not in out + err
    assert [line for line in err.splitlines() if line.strip()] == [
        next(line for line in err.splitlines() if line.startswith("failed (disk): disk full"))
    ]


def test_an_injected_enospc_mid_run_keeps_the_stream_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    real_write = os.write
    writes = {"n": 0}

    def fill_up(fd: int, data: bytes | memoryview) -> int:
        writes["n"] += 1
        if writes["n"] == 6:  # part of the sixth line goes out...
            return real_write(fd, bytes(data)[:5])
        if writes["n"] > 6:  # ...then the disk is full
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", fill_up)
    code = main(headless(tmp_path / "runs"))
    monkeypatch.undo()
    out, err = capsys.readouterr()
    assert code == 1 and "Traceback" not in out + err and "failed (disk): disk full" in err
    run_dir = next((tmp_path / "runs").iterdir())
    events = whole_lines(run_dir / "metrics.jsonl")
    assert [e["seq"] for e in events] == list(range(len(events)))
    assert (run_dir / "config.json").is_file()
    # a later resume appends to a whole file, never onto a torn line
    assert main(headless(tmp_path / "runs", "--resume", str(run_dir), "--epochs", "1")) in (0, 2)
    whole_lines(run_dir / "metrics.jsonl")
