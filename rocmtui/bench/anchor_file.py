"""An anchor's figures for ``rocmtui bench --anchor FILE``: a JSON of times written by any script.

The file is one object: ``name`` (text), ``times_s`` (each run's time to result in seconds, at least one),
and optionally ``accuracies`` (each run's final accuracy, 0 to 1) and ``note`` (text, e.g. the machine and
the command). It is read as untrusted input: a regular file opened without following a link or blocking,
at most ``MAX_BYTES``, every value checked; anything else is one ``UsageError`` line.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from pathlib import Path

from rocmtui.base.errors import UsageError
from rocmtui.base.files import read_small
from rocmtui.base.text import plain
from rocmtui.codec import CodecError, decode_json

MAX_BYTES = 1 << 20
MAX_RUNS = 100_000
MAX_TEXT = 200


@dataclass(frozen=True)
class Anchor:
    name: str
    times_s: list[float]
    accuracies: list[float] = field(default_factory=list)
    note: str = ""

    @property
    def median_s(self) -> float:
        return statistics.median(self.times_s)

    def line(self) -> str:
        """``anchor NAME: N runs | median 1.28 s (1.26 to 1.29) | mean acc 94.12%``, text only."""
        text = (
            f"anchor {_printable(self.name)}: {len(self.times_s)} run(s) | median {self.median_s:.2f} s "
            f"({min(self.times_s):.2f} to {max(self.times_s):.2f})"
        )
        if self.accuracies:
            text += f" | mean acc {100 * statistics.mean(self.accuracies):.2f}%"
        return text + (f" | {_printable(self.note)}" if self.note else "")


def load_anchor(path: Path) -> Anchor:
    """The anchor in ``path``; UsageError with one line when it cannot be used."""
    where = f"--anchor {path}"
    anchor = _decoded(_read(path, where), where)
    if not anchor.times_s or len(anchor.times_s) > MAX_RUNS or len(anchor.accuracies) > MAX_RUNS:
        raise UsageError(f"{where}: times_s needs 1 to {MAX_RUNS:,} times (and accuracies at most as many)")
    if not all(math.isfinite(t) and t > 0 for t in anchor.times_s):
        raise UsageError(f"{where}: every time in times_s must be a positive number of seconds")
    if not all(math.isfinite(a) and 0 <= a <= 1 for a in anchor.accuracies):
        raise UsageError(f"{where}: every accuracy must be a fraction from 0 to 1")
    if len(anchor.name) > MAX_TEXT or len(anchor.note) > MAX_TEXT:
        raise UsageError(f"{where}: name and note must be at most {MAX_TEXT} characters")
    return anchor


def _read(path: Path, where: str) -> bytes:
    """The file's bytes: a regular file (no link, FIFO or device), at most MAX_BYTES; one line otherwise."""
    try:
        return read_small(path, MAX_BYTES)
    except OSError as err:
        raise UsageError(f"{where}: cannot open it ({err.strerror or err}); give a JSON file of times") from None
    except UsageError as err:
        raise UsageError(f"{where}: {err}; give a JSON file of times") from None


def _decoded(data: bytes, where: str) -> Anchor:
    try:
        return decode_json(data, Anchor, what=where)
    except CodecError as err:
        line = str(err).splitlines()[0]
        raise UsageError(line if where in line else f"{where}: {line}") from None


def _printable(text: str) -> str:
    """Control characters and escapes shown, never sent to the terminal."""
    return plain(text)
