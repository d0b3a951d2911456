"""SampleSet <-> plain JSON dict, for ``monitor --json``, recorded replays and snapshot tests.

The format is one JSON object per SampleSet::

    {"schema": 1, "timestamp": ..., "backend": "sysfs",
     "gpus": [{GpuSample fields, "temperatures_c": [["edge", 45.0], ...]}, ...],
     "host": {HostSample fields}, "processes": [{GpuProcess fields}], "statuses": [{BackendStatus fields}]}

Reading goes through ``rocmtui.codec``: types are checked (``"utilization_pct": "87"`` is refused at load,
not when a panel draws it), unknown keys are ignored (newer writers) and absent optional fields take their
defaults, so older recordings keep loading. Malformed input raises ``CodecError`` (a ValueError) in one
line that names the bad field.
"""

from __future__ import annotations

from typing import Any

from rocmtui.codec import convert, decode_json, encode_json, to_builtins
from rocmtui.gpu.sample import SampleSet

SCHEMA = 1
_WHAT = "bad sample"


def sample_set_to_dict(s: SampleSet) -> dict[str, Any]:
    """A JSON-ready dict of ``s``, ``schema`` first."""
    data: dict[str, Any] = to_builtins(s)
    return {"schema": SCHEMA, **data}


def sample_set_from_dict(d: object) -> SampleSet:
    """Inverse of ``sample_set_to_dict``; raises CodecError (a ValueError) on malformed input."""
    return convert(d, SampleSet, what=_WHAT)


def dumps(s: SampleSet) -> str:
    """One compact JSON line for ``s``."""
    return encode_json(sample_set_to_dict(s)).decode()


def loads(line: str | bytes) -> SampleSet:
    """Parse one JSON line written by ``dumps``; raises CodecError (a ValueError) when it is not one."""
    return decode_json(line, SampleSet, what=_WHAT)
