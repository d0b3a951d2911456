"""A function named by its module, imported at its first call: what one command needs is not loaded by another."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def deferred(module: str, name: str) -> Callable[..., Any]:
    """``module.name``, imported when first called (each call then goes straight to it)."""

    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(importlib.import_module(module), name)(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    return call
