"""``rocmtui bench --anchor FILE``: an untrusted JSON of times, read safely and checked, one line when unusable."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from rocmtui.base.errors import UsageError
from rocmtui.bench.anchor_file import MAX_BYTES, load_anchor


def write(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "anchor.json"
    path.write_text(json.dumps(data))
    return path


def test_an_anchor_gives_its_median_range_and_mean_accuracy(tmp_path: Path) -> None:
    anchor = load_anchor(write(tmp_path, {"name": "airbench94_muon", "times_s": [1.29, 1.26, 1.28], "note": "H200"}))
    assert anchor.median_s == pytest.approx(1.28)
    assert anchor.line() == "anchor airbench94_muon: 3 run(s) | median 1.28 s (1.26 to 1.29) | H200"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"name": 3, "times_s": [1.0]}, r"Expected `str`, got `int` - at `\$.name`"),
        ({"name": "x"}, r"missing required field `times_s`"),
        ({"name": "x", "times_s": []}, r"times_s needs 1 to "),
        ({"name": "x", "times_s": [1.0, -2.0]}, r"must be a positive number of seconds"),
        ({"name": "x", "times_s": [1.0], "accuracies": [94.0]}, r"must be a fraction from 0 to 1"),
        ({"name": "x" * 300, "times_s": [1.0]}, r"at most 200 characters"),
        ([1, 2], r"Expected `object`"),
    ],
)
def test_a_bad_anchor_is_one_line(tmp_path: Path, data: object, message: str) -> None:
    with pytest.raises(UsageError, match=message) as caught:
        load_anchor(write(tmp_path, data))
    assert "\n" not in str(caught.value) and str(caught.value).startswith("--anchor ")


def test_not_json_a_link_a_folder_or_a_huge_file_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(UsageError, match="not JSON"):
        load_anchor(bad)
    link = tmp_path / "link.json"
    link.symlink_to(write(tmp_path, {"name": "x", "times_s": [1.0]}))
    with pytest.raises(UsageError, match="symbolic link"):
        load_anchor(link)
    with pytest.raises(UsageError, match="not a regular file"):
        load_anchor(tmp_path)
    huge = tmp_path / "huge.json"
    huge.write_bytes(b" " * (MAX_BYTES + 1))
    with pytest.raises(UsageError, match="larger than"):
        load_anchor(huge)
    with pytest.raises(UsageError, match="cannot open it"):
        load_anchor(tmp_path / "missing.json")


def test_a_fifo_does_not_block(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(UsageError, match="not a regular file"):
        load_anchor(fifo)


def test_escape_sequences_in_its_text_are_shown_not_sent(tmp_path: Path) -> None:
    anchor = load_anchor(write(tmp_path, {"name": "a\x1b[31mb", "times_s": [1.0], "note": "x\ny"}))
    assert "\x1b" not in anchor.line() and "\n" not in anchor.line()
    assert "a\\x1b[31mb" in anchor.line()
