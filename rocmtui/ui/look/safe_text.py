"""Outside text for widgets: a ``rich.text.Text`` made by ``rocmtui.base.text.plain`` (never parsed as markup), and
``cleaned``, which passes every string of an event or a sample set through the boundary where it enters the UI.

Textual parses a ``str`` given to ``Static``, ``update``, ``notify`` or a ``DataTable`` cell as markup, so ``[/]`` in
a process's command line raised ``MarkupError`` and ``[@click=...]`` became an action link; a ``Text`` is drawn as
it is. ``tests/test_safe_text.py`` checks that the UI hands those calls no other string than its own literals.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any, TypeVar, cast

import msgspec
from rich.text import Text

from rocmtui.base.text import DEFAULT_LIMIT, plain

T = TypeVar("T")


def safe_text(value: object, style: str = "", *, lines: bool = False, limit: int = DEFAULT_LIMIT) -> Text:
    """``value`` as a ``Text`` to draw: control characters visible, bounded, no markup."""
    return Text(plain(value, limit=limit, lines=lines), style=style)


def cleaned(value: T) -> T:
    """``value`` with every string in it (fields of dataclasses and msgspec Structs, items of tuples, lists and
    dicts, keys included) through ``plain``; the object itself when nothing needed to change."""
    return cast(T, _clean(value))


def cleaned_like(value: T, before: object, before_clean: object) -> T:
    """``cleaned(value)``, knowing that ``before`` (an object of the same type) cleaned to ``before_clean``: when
    ``before`` needed nothing and ``value`` differs from it only in fields that hold numbers or None (a GPU's next
    reading), ``value`` needs nothing either and is given back without its fields walked one by one."""
    if before_clean is before and type(value) is type(before):
        mine, theirs = getattr(value, "__dict__", None), getattr(before, "__dict__", None)
        if (
            mine is not None
            and theirs is not None
            and mine.keys() == theirs.keys()
            and all(v is theirs[k] or type(v) in _PLAIN_TYPES for k, v in mine.items())
        ):
            return value
    return cleaned(value)


def _clean(value: object) -> object:
    kind = type(value)
    if kind in _PLAIN_TYPES:
        return value  # numbers, None, bytes: nothing to draw as text
    if kind is str:
        text = cast(str, value)
        known = _CLEANED.get(text)
        if known is not None:
            return text if known == text else known  # an equal string kept earlier is another object
        clean = plain(text, lines=True)
        clean = text if clean == text else clean
        if len(text) <= _MEMO_CHARS:
            if len(_CLEANED) >= _MEMO_ENTRIES:
                _CLEANED.clear()
            _CLEANED[text] = clean
        return clean
    if isinstance(value, tuple | list | dict):
        return _clean_collection(value)
    return _clean_fields(value, _field_names(kind))


def _clean_fields(value: Any, names: tuple[str, ...]) -> object:
    """A Struct or dataclass with its changed fields replaced (``names``: its fields; () for other objects)."""
    changes = {}
    for name in names:
        old = getattr(value, name)
        if type(old) in _PLAIN_TYPES:
            continue
        new = _clean_keys(old) if (type(value), name) in _NUMBER_VALUES else _clean(old)
        if new is not old:
            changes[name] = new
    if not changes:
        return value
    if isinstance(value, msgspec.Struct):
        return msgspec.structs.replace(value, **changes)
    return dataclasses.replace(value, **changes)


_PLAIN_TYPES = frozenset({int, float, bool, type(None), bytes})
_CLEANED: dict[str, str] = {}
"""Short strings as cleaned, kept: the same names, labels and units arrive at every round (a cluster round holds
about 10,000 strings, nearly all seen the round before). Emptied when full."""
_MEMO_CHARS = 256
_MEMO_ENTRIES = 100_000


_FIELDS: dict[type, tuple[str, ...]] = {}
_NUMBER_VALUES: set[tuple[type, str]] = set()
"""Struct fields typed as a dict of numbers (``MetricsLogged.logged``): only their keys can hold text."""


def _field_names(kind: type) -> tuple[str, ...]:
    """The fields of a Struct or dataclass type (found once per type: this runs for every event); () for others."""
    names = _FIELDS.get(kind)
    if names is None:
        if issubclass(kind, msgspec.Struct):  # validated by type when decoded: a number-only field holds no text
            hints = typing.get_type_hints(kind)
            names = tuple(name for name in kind.__struct_fields__ if _may_hold_text(hints[name]))
            for name in names:
                if _number_values(hints[name]):
                    _NUMBER_VALUES.add((kind, name))
        elif dataclasses.is_dataclass(kind):
            names = tuple(f.name for f in dataclasses.fields(kind) if f.init)
        else:
            names = ()
        _FIELDS[kind] = names
    return names


_NUMBERS = (int, float, bool, type(None), bytes)
"""Types that hold no text to draw (bytes: a packed window's float64 values)."""


def _may_hold_text(annotation: object) -> bool:
    """False for a type made only of numbers, None, bytes, and tuples, lists, unions and dict values of those
    (``tuple[float, ...]``, ``dict[str, tuple[int, ...]]`` holds text in its keys only: True)."""
    if annotation in _NUMBERS:
        return False
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (tuple, list, typing.Union, types.UnionType):
        return any(_may_hold_text(arg) for arg in args if arg is not Ellipsis)
    return True


def _number_values(annotation: object) -> bool:
    """A ``dict[str, X]`` where X holds no text."""
    args = typing.get_args(annotation)
    return typing.get_origin(annotation) is dict and len(args) == 2 and not _may_hold_text(args[1])


def _clean_keys(value: dict[str, object]) -> object:
    """A dict whose values hold no text (validated by type): its keys cleaned, its values left as they are."""
    keys = [_clean(key) for key in value]
    if all(a is b for a, b in zip(keys, value, strict=True)):
        return value
    return dict(zip(keys, value.values(), strict=True))


def _clean_collection(value: tuple[object, ...] | list[object] | dict[object, object]) -> object:
    if isinstance(value, dict):
        pairs = [(_clean(k), _clean(v)) for k, v in value.items()]
        same = all(k is k0 and v is v0 for (k, v), (k0, v0) in zip(pairs, value.items(), strict=True))
        return value if same else dict(pairs)
    items = [_clean(item) for item in value]
    if all(a is b for a, b in zip(items, value, strict=True)):
        return value
    factory: Any = type(value)
    return factory(*items) if hasattr(value, "_fields") else factory(items)  # a namedtuple takes its fields
