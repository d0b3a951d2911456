"""Outside text for widgets: a ``rich.text.Text`` made by ``rocmtui.base.text.plain`` (never parsed as markup), and
``cleaned``, which passes every string of an event or a sample set through the boundary where it enters the UI.

Textual parses a ``str`` given to ``Static``, ``update``, ``notify`` or a ``DataTable`` cell as markup, so ``[/]`` in
a process's command line raised ``MarkupError`` and ``[@click=...]`` became an action link; a ``Text`` is drawn as
it is. ``tests/test_safe_text.py`` checks that the UI hands those calls no other string than its own literals.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
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


def _clean(value: object) -> object:
    if isinstance(value, str):
        clean = plain(value, lines=True)
        return value if clean == value else clean
    if isinstance(value, msgspec.Struct):
        changes = _changed_fields(value, msgspec.structs.fields(value))
        return msgspec.structs.replace(value, **changes) if changes else value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = _changed_fields(value, [f for f in dataclasses.fields(value) if f.init])
        return dataclasses.replace(value, **changes) if changes else value
    if isinstance(value, tuple | list | dict):
        return _clean_collection(value)
    return value  # numbers, None, bytes: nothing to draw as text


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


def _changed_fields(value: object, fields: Iterable[Any]) -> dict[str, object]:
    changes: dict[str, object] = {}
    for field in fields:
        old = getattr(value, field.name)
        new = _clean(old)
        if new is not old:
            changes[field.name] = new
    return changes
