"""SampleSet <-> plain JSON dict, for ``monitor --json``, recorded replays and snapshot tests.

The format is one JSON object per SampleSet::

    {"schema": 1, "timestamp": ..., "backend": "sysfs",
     "gpus": [{GpuSample fields, "temperatures_c": [["edge", 45.0], ...]}, ...],
     "host": {HostSample fields}, "processes": [{GpuProcess fields}], "statuses": [{BackendStatus fields}]}

Reading ignores unknown keys (newer writers) and fills absent optional fields with None, so
older recordings keep loading. Malformed input raises ``ValueError`` with what is wrong.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, TypeVar

from rocmtui.gpu.sample import BackendStatus, GpuProcess, GpuSample, HostSample, SampleSet

SCHEMA = 1
_T = TypeVar("_T")


def sample_set_to_dict(s: SampleSet) -> dict[str, Any]:
    """A JSON-ready dict of ``s`` (tuples become lists)."""
    return {
        "schema": SCHEMA,
        "timestamp": s.timestamp,
        "backend": s.backend,
        "gpus": [_gpu_to_dict(g) for g in s.gpus],
        "host": dataclasses.asdict(s.host),
        "processes": [dataclasses.asdict(p) for p in s.processes],
        "statuses": [dataclasses.asdict(st) for st in s.statuses],
    }


def sample_set_from_dict(d: dict[str, Any]) -> SampleSet:
    """Inverse of ``sample_set_to_dict``; raises ValueError on malformed input."""
    if not isinstance(d, dict):
        raise ValueError(f"a sample must be a JSON object, not {type(d).__name__}")
    try:
        return SampleSet(
            timestamp=float(d["timestamp"]),
            backend=str(d["backend"]),
            gpus=tuple(_gpu_from_dict(g) for g in _list(d, "gpus")),
            host=_build(HostSample, d["host"]),
            processes=tuple(_build(GpuProcess, p) for p in _list(d, "processes")),
            statuses=tuple(_build(BackendStatus, st) for st in _list(d, "statuses")),
        )
    except KeyError as err:
        raise ValueError(f"sample is missing the key {err}") from None


def dumps(s: SampleSet) -> str:
    """One compact JSON line for ``s``."""
    return json.dumps(sample_set_to_dict(s), separators=(",", ":"))


def loads(line: str) -> SampleSet:
    """Parse one JSON line written by ``dumps``; raises ValueError when it is not one."""
    try:
        data = json.loads(line)
    except json.JSONDecodeError as err:
        raise ValueError(f"not JSON: {err}") from None
    return sample_set_from_dict(data)


def _gpu_to_dict(g: GpuSample) -> dict[str, Any]:
    out = dataclasses.asdict(g)
    out["temperatures_c"] = [[label, value] for label, value in g.temperatures_c]
    return out


def _gpu_from_dict(d: Any) -> GpuSample:
    if not isinstance(d, dict):
        raise ValueError(f"a GPU entry must be an object, not {type(d).__name__}")
    temps = d.get("temperatures_c") or []
    try:
        pairs = tuple((str(label), float(value)) for label, value in temps)
    except (TypeError, ValueError):
        raise ValueError(f"temperatures_c must be [label, degrees] pairs, got {temps!r}") from None
    return _build(GpuSample, {**d, "temperatures_c": pairs})


def _list(d: dict[str, Any], key: str) -> list[Any]:
    value = d.get(key, [])
    if not isinstance(value, list):
        raise ValueError(f"{key!r} must be a list, not {type(value).__name__}")
    return value


def _build(cls: type[_T], d: Any) -> _T:
    """``cls(**d)`` keeping only its fields; a missing required field is a ValueError."""
    if not isinstance(d, dict):
        raise ValueError(f"{cls.__name__} must be an object, not {type(d).__name__}")
    known = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]  # cls is a dataclass
    try:
        return cls(**{k: v for k, v in d.items() if k in known})
    except TypeError as err:
        raise ValueError(f"bad {cls.__name__}: {err}") from None
