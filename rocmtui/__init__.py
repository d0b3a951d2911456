"""rocmtui: train PyTorch models live in the terminal and watch the GPU while they train."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rocmtui.tracking import Run, track

__all__ = ["Run", "__version__", "track"]


def _installed_version() -> str:
    """The installed distribution's version; read on first use (importlib.metadata costs tens of ms)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("rocmtui")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "0+unknown"


def __getattr__(name: str) -> Any:
    """``rocmtui.track``, ``rocmtui.Run`` and ``__version__``, loaded on first use (``import rocmtui`` stays light)."""
    if name in ("track", "Run"):
        from rocmtui import tracking

        return getattr(tracking, name)
    if name == "__version__":
        globals()["__version__"] = found = _installed_version()
        return found
    raise AttributeError(f"module 'rocmtui' has no attribute {name!r}")
