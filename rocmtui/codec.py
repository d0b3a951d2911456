"""The one codec: typed values <-> plain data and JSON, through msgspec, validated when read.

Events, telemetry samples and run settings all go through these few calls, so every file the project
writes is read back with the same rules: types are checked (``"87"`` is not a number), unknown keys are
ignored (newer writers), and anything wrong is one ``CodecError`` line that names the bad field.
No torch and no textual here: every layer may import it.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, TypeVar, overload

import msgspec

T = TypeVar("T")


class CodecError(ValueError):
    """Data that does not fit its type: one line naming what is wrong and where (``$.gpus[0].name``)."""


def _enc_hook(obj: Any) -> Any:
    if isinstance(obj, Path):
        return str(obj)
    raise NotImplementedError(f"cannot encode {type(obj).__name__}")


def _dec_hook(type_: Any, obj: Any) -> Any:
    if type_ is Path:
        if not isinstance(obj, str):
            raise TypeError(f"Expected `str` (a path), got `{type(obj).__name__}`")
        return Path(obj)
    raise NotImplementedError(f"cannot decode {type_!r}")


_ENCODER = msgspec.json.Encoder(enc_hook=_enc_hook)


@functools.cache
def decoder(type_: Any) -> msgspec.json.Decoder[Any]:
    """One Decoder per type: it keeps its decoding plan (for a union, msgspec would rebuild it per call).

    Its ``decode`` raises msgspec's own errors, for callers that tell a malformed line from a bad value."""
    return msgspec.json.Decoder(type_, dec_hook=_dec_hook)


def _error(what: str, err: Exception) -> CodecError:
    """``what: the first line of msgspec's message``; the message already names the path."""
    text = " ".join(str(err).split()) or type(err).__name__
    return CodecError(f"{what}: {text}")


def _name(type_: Any) -> str:
    return f"bad {getattr(type_, '__name__', None) or type_}"


def to_builtins(obj: Any) -> Any:
    """Plain dicts, lists, strings and numbers for ``obj`` (Structs, dataclasses, tuples, Paths)."""
    return msgspec.to_builtins(obj, enc_hook=_enc_hook)


@overload
def convert(data: Any, type_: type[T], *, what: str | None = None) -> T: ...
@overload
def convert(data: Any, type_: Any, *, what: str | None = None) -> Any: ...  # a union such as TrainEvent
def convert(data: Any, type_: Any, *, what: str | None = None) -> Any:
    """``data`` (plain values, e.g. from ``json.loads``) as ``type_``; CodecError when it does not fit.

    ``what`` starts the error message (default: the type's name).
    """
    try:
        return msgspec.convert(data, type_, dec_hook=_dec_hook)
    except msgspec.ValidationError as err:
        raise _error(what or _name(type_), err) from None


_SORTED = msgspec.json.Encoder(enc_hook=_enc_hook, order="sorted")


def encode_json(obj: Any, *, indent: int = 0, sort_keys: bool = False) -> bytes:
    """JSON for ``obj``: compact, or indented by ``indent`` spaces (Paths as strings; NaN and infinity
    become null); ``sort_keys`` for a canonical form (a hash of settings)."""
    data = (_SORTED if sort_keys else _ENCODER).encode(obj)
    return msgspec.json.format(data, indent=indent) if indent else data


@overload
def decode_json(data: bytes | str, type_: type[T], *, what: str | None = None) -> T: ...
@overload
def decode_json(data: bytes | str, type_: Any, *, what: str | None = None) -> Any: ...
def decode_json(data: bytes | str, type_: Any, *, what: str | None = None) -> Any:
    """Parse and validate JSON as ``type_``; CodecError for malformed or truncated JSON as well."""
    try:
        return decoder(type_).decode(data)
    except msgspec.ValidationError as err:
        raise _error(what or _name(type_), err) from None
    except msgspec.DecodeError as err:
        raise _error("not JSON", err) from None
