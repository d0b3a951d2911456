"""Whole lines only: torn tails set aside, failed writes cut back, partial lines held back by the tailer."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from rocmtui.run.lines import LineTailer, LineWriter, last_line, set_aside_torn_tail


def test_a_torn_tail_is_set_aside_never_appended_to(tmp_path: Path) -> None:
    path = tmp_path / "metrics.jsonl"
    path.write_bytes(b'{"seq":1}\n{"seq":2}\n{"seq":3,"eve')
    writer = LineWriter(path, tmp_path / "metrics.torn")
    writer.append(b'{"seq":3}\n')
    writer.close()
    assert writer.set_aside == len(b'{"seq":3,"eve')
    assert path.read_bytes() == b'{"seq":1}\n{"seq":2}\n{"seq":3}\n'
    assert (tmp_path / "metrics.torn").read_bytes() == b'{"seq":3,"eve\n'


def test_a_clean_file_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"a\nb\n")
    assert set_aside_torn_tail(path, tmp_path / "t") == 0
    assert not (tmp_path / "t").exists()
    assert path.read_bytes() == b"a\nb\n"


def test_a_file_that_is_all_torn_is_emptied(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"x" * 100_000)  # longer than one read chunk, no newline at all
    assert set_aside_torn_tail(path, tmp_path / "t") == 100_000
    assert path.read_bytes() == b""


def test_a_write_that_fails_part_way_is_cut_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A disk that fills mid-line: the file keeps its whole lines and nothing else."""
    path = tmp_path / "f"
    writer = LineWriter(path)
    writer.append(b"first\n")
    real_write = os.write
    calls = []

    def half_then_full(fd: int, data: bytes | memoryview) -> int:
        calls.append(len(data))
        if len(calls) == 1:
            return real_write(fd, bytes(data)[:3])
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", half_then_full)
    with pytest.raises(OSError) as err:
        writer.append(b"second line\n")
    monkeypatch.undo()
    assert err.value.errno == errno.ENOSPC and len(calls) == 2
    assert path.read_bytes() == b"first\n"
    writer.append(b"third\n")
    assert path.read_bytes() == b"first\nthird\n"


def test_the_tailer_holds_back_a_partial_line_until_its_newline(tmp_path: Path) -> None:
    path = tmp_path / "f"
    tail = LineTailer(path)
    assert tail.read_lines() == []  # no file yet
    with path.open("ab") as f:
        f.write(b"one\ntw")
        f.flush()
        assert tail.read_lines() == [b"one"]
        assert tail.read_lines() == []
        f.write(b"o\n\nthree\n")
        f.flush()
    assert tail.read_lines() == [b"two", b"three"]


def test_the_tailer_starts_over_when_the_file_is_replaced_or_cut_back(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"a\nb\n")
    tail = LineTailer(path)
    assert tail.read_lines() == [b"a", b"b"]
    replacement = tmp_path / "g"
    replacement.write_bytes(b"c\n")
    os.replace(replacement, path)
    assert tail.read_lines() == [b"c"] and tail.restarts == 1
    path.write_bytes(b"")
    assert tail.read_lines() == []
    path.write_bytes(b"d\n")
    assert tail.read_lines() == [b"d"]


def test_last_line_reads_from_the_end(tmp_path: Path) -> None:
    path = tmp_path / "f"
    assert last_line(path) is None
    path.write_bytes(b"a\n" + b"x" * 70_000 + b"\nlast\n")
    assert last_line(path) == b"last"
    path.write_bytes(b"only\n")
    assert last_line(path) == b"only"
    path.write_bytes(b"whole\ntorn")
    assert last_line(path) == b"whole"
