"""The filter expression of ``rocmtui runs --filter`` and of the runs table: ``state=finished lr>1e-3 name~mlp``.

One parser for both (stdlib only). An expression is terms separated by spaces, all of which must hold; a term is
``KEY OP VALUE`` with OP one of ``= != > >= < <= ~ !~``, or a bare word (the run's name or a tag contains it).
``~`` is a case-insensitive regular expression search (text that is not a valid expression is searched as it
is). A value in double quotes may hold spaces. Numbers compare as numbers (``1e-3`` and ``0.001`` alike); other
values as text, equality without regard to case. A key the run does not have fails the term, except ``!=`` and
``!~``. A list value (the run's tags) holds a term when any of its items does.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rocmtui.base.errors import UsageError

FILTER_LIMIT = 1000
"""Characters of a filter at most (the user's own text, bounded like any other)."""
OPERATORS = ("!~", "!=", ">=", "<=", "=", ">", "<", "~")
"""Longest first, so that ``>=`` is not read as ``>`` and a value starting with ``=``."""
_TOKEN = re.compile(r'\s*(?:"((?:[^"\\]|\\.)*)"|((?:[^\s"]|"(?:[^"\\]|\\.)*")+))')
_KEY = re.compile(r"[A-Za-z_][\w.:/-]*")

Value = str | float | int | bool | None | Sequence[str]
_COMPARISONS: dict[str, Callable[[Any, Any], bool]] = {
    "=": operator.eq,
    "!=": operator.ne,
    ">": operator.gt,
    ">=": operator.ge,
    "<": operator.lt,
    "<=": operator.le,
}


@dataclass(frozen=True)
class Term:
    """One condition: ``key op value``; ``key`` empty for a bare word."""

    key: str
    op: str
    value: str
    pattern: re.Pattern[str] | None = None
    number: float | None = None

    def holds(self, values: Mapping[str, Value]) -> bool:
        if not self.key:
            words = [values.get("name"), *(_items(values.get("tags")))]
            return any(isinstance(word, str) and self.value.lower() in word.lower() for word in words)
        if self.key not in values or values[self.key] is None:
            return self.op in ("!=", "!~")
        value = values[self.key]
        if isinstance(value, list | tuple):
            hits = [self._one(item) for item in value]
            return all(hits) if self.op in ("!=", "!~") else any(hits)
        return self._one(value)

    def _one(self, value: object) -> bool:
        if self.op in ("~", "!~"):
            assert self.pattern is not None
            found = self.pattern.search(_text(value)) is not None
            return found if self.op == "~" else not found
        number = _number(value)
        if self.number is not None and number is not None:
            return _compare(number, self.op, self.number)
        text, wanted = _text(value).lower(), self.value.lower()
        if self.op in ("=", "!="):
            return (text == wanted) == (self.op == "=")
        return _compare(text, self.op, wanted)


@dataclass(frozen=True)
class RunFilter:
    """A parsed expression: every term must hold. The empty filter holds for every run."""

    text: str
    terms: tuple[Term, ...]

    def matches(self, values: Mapping[str, Value]) -> bool:
        return all(term.holds(values) for term in self.terms)

    @property
    def keys(self) -> set[str]:
        """The keys the terms name (bare words name none)."""
        return {term.key for term in self.terms if term.key}


def parse_filter(text: str) -> RunFilter:
    """The filter ``text`` says; UsageError (one line) for a term without a key or a value, or too long a text."""
    if len(text) > FILTER_LIMIT:
        raise UsageError(f"a filter of {len(text):,} characters; at most {FILTER_LIMIT:,}")
    if len(re.findall(r'(?<!\\)"', text)) % 2:
        raise UsageError(f"filter: {text!r} has a quote left open")
    terms: list[Term] = []
    position = 0
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None or match.end() == position:
            if text[position:].strip():
                raise UsageError(f"filter: cannot read {text[position:]!r} (a quote left open?)")
            break
        position = match.end()
        quoted, raw = match.group(1), match.group(2)
        if quoted is not None:
            terms.append(Term("", "", _unquote(quoted)))
        elif raw:
            terms.append(_term(raw))
    return RunFilter(text, tuple(terms))


def _term(raw: str) -> Term:
    key = _KEY.match(raw)
    rest = raw[key.end() :] if key else raw
    op = next((op for op in OPERATORS if rest.startswith(op)), None)
    if op is None:
        if key is None or rest:
            raise UsageError(f"filter: {raw!r} is not KEY=VALUE (operators: {' '.join(OPERATORS)})")
        return Term("", "", raw)
    if key is None:
        raise UsageError(f"filter: {raw!r} has no key before {op!r}")
    value = rest[len(op) :]
    if value.startswith('"') and value.endswith('"') and len(value) >= 2:
        value = _unquote(value[1:-1])
    if value == "":
        raise UsageError(f"filter: {raw!r} has no value after {op!r}")
    pattern = _pattern(value) if op in ("~", "!~") else None
    return Term(key.group(0), op, value, pattern, _number(value))


def _pattern(value: str) -> re.Pattern[str]:
    try:
        return re.compile(value, re.IGNORECASE)
    except re.error:
        return re.compile(re.escape(value), re.IGNORECASE)


def _unquote(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


def _items(value: object) -> list[object]:
    return list(value) if isinstance(value, list | tuple) else []


def _number(value: object) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        return float(value) if not math.isnan(value) else None
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return None
        return number if math.isfinite(number) else None
    return None


def _text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _compare(a: float | str, op: str, b: float | str) -> bool:
    """``a op b``, both numbers or both text."""
    return bool(_COMPARISONS[op](a, b))
