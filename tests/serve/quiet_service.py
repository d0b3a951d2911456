"""A tab's service for in-process tests: the server's own ``BoundedService`` with a socket that goes nowhere."""

from __future__ import annotations

from typing import Any

from textual_serve.download_manager import DownloadManager

from rocmtui.serve.guarded_server import BoundedService


def quiet_service(command: str) -> BoundedService:
    async def nowhere(_data: Any) -> None:
        return None

    async def closed() -> None:
        return None

    return BoundedService(
        command, write_bytes=nowhere, write_str=nowhere, close=closed, download_manager=DownloadManager(), debug=False
    )
