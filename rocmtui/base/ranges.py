"""The allowed values of each numeric kind of ``rocmtui train`` option: one table that the command line
(``rocmtui.cli.argtypes``) and every saved settings file (a run's ``config.json``, a checkpoint's settings, a
launcher's) are checked against (``TrainConfig.check_ranges``). Stdlib only, so every layer may ask it."""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable
from typing import Any

NEWTON_SCHULZ_RANGE = (1, 10)
"""Muon's iterations per update that ``--newton-schulz-steps`` accepts."""

INT_LIMIT = 2**63
"""Whole numbers must fit an int64 (torch's seeds and counters)."""
CROP_RANGE = (9, 4096)
"""A crop's side in pixels: fastnet's three halvings after its 2x2 stem need at least 9."""


def _crops_ok(sides: Any) -> bool:
    low, high = CROP_RANGE
    return len(sides) <= high and all(isinstance(s, int) and low <= s <= high for s in sides)


_HOST = re.compile(r"(?:\[[0-9A-Fa-f:.]{2,45}\]|[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?)")
_JOB_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def endpoint_ok(value: Any) -> bool:
    """``HOST:PORT`` (a host name, an IPv4 address or a bracketed IPv6 address; a port 1 to 65535)."""
    if not isinstance(value, str):
        return False
    host, _, port = value.rpartition(":")
    return bool(_HOST.fullmatch(host)) and port.isascii() and port.isdigit() and 0 < int(port) < 65536


def job_id_ok(value: Any) -> bool:
    """A job id that names a folder: letters, digits, ``.``, ``_`` and ``-``, at most 64, not starting with a dot."""
    return isinstance(value, str) and bool(_JOB_ID.fullmatch(value))


Range = tuple[Callable[[Any], bool], str]
RANGES: dict[str, Range] = {
    "positive_int": (lambda v: 0 < v < INT_LIMIT, "it must be a positive integer (1 or more)"),
    "non_negative_int": (lambda v: 0 <= v < INT_LIMIT, "give a whole number, 0 or more (below 2**63)"),
    "endpoint": (lambda v: v is None or endpoint_ok(v), "give HOST:PORT, such as node0:29500 or [::1]:29500"),
    "job_id": (lambda v: v is None or job_id_ok(v), "give letters, digits, '.', '_' or '-' (at most 64)"),
    "node_rank": (lambda v: v is None or 0 <= v < INT_LIMIT, "give a whole number, 0 or more (below 2**63)"),
    "positive_float": (lambda v: math.isfinite(v) and v > 0, "give a positive finite number, such as 1e-3"),
    "non_negative_float": (lambda v: math.isfinite(v) and v >= 0, "give a finite number, 0 or more"),
    "fraction": (lambda v: 0.0 <= v < 1.0, "it must be at least 0 and below 1"),
    "share": (lambda v: 0.0 < v <= 1.0, "give a share above 0 and at most 1, such as 0.25"),
    "newton_schulz_steps": (
        lambda v: NEWTON_SCHULZ_RANGE[0] <= v <= NEWTON_SCHULZ_RANGE[1],
        f"give a whole number of iterations, {NEWTON_SCHULZ_RANGE[0]} to {NEWTON_SCHULZ_RANGE[1]}",
    ),
    "crop_sizes": (
        _crops_ok,
        f"give sides of {CROP_RANGE[0]} to {CROP_RANGE[1]} px separated by commas, one an epoch from the first, "
        "such as 24,28",
    ),
}
"""Each kind (``config.ParseAs``): whether a value is allowed, and the rule an error states."""


def cpu_cores() -> int:
    """The CPU cores this process may run on (its affinity), the bound of ``--nproc`` without ``--force``."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
