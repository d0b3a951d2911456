"""rocmtui: train PyTorch models live in the terminal and watch the GPU while they train."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rocmtui.tracking import Run, track

__all__ = ["Run", "__version__", "track"]

try:
    __version__ = version("rocmtui")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"


def __getattr__(name: str) -> Any:
    """``rocmtui.track`` and ``rocmtui.Run``, loaded on first use (``import rocmtui`` stays light)."""
    if name in ("track", "Run"):
        from rocmtui import tracking

        return getattr(tracking, name)
    raise AttributeError(f"module 'rocmtui' has no attribute {name!r}")
