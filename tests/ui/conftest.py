"""Fixtures for the UI tests: the recorded run, a held replay trainer, and manual telemetry sources."""

from __future__ import annotations

import asyncio
import inspect

import pytest
from ui_helpers import ManualSource, ReplayTrainer, host_recording, recorded_events


@pytest.fixture
def events():
    return recorded_events()


@pytest.fixture
def host_source() -> ManualSource:
    """Real host-only telemetry recorded on this 2-core machine without a GPU."""
    return ManualSource(host_recording())


@pytest.fixture
def held_trainer(events) -> ReplayTrainer:
    """The recorded run, parked mid-epoch 3 (before event 36) until released or stopped."""
    return ReplayTrainer(events, hold_at=36)


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """Run ``async def`` tests in a fresh event loop (no asyncio plugin is installed)."""
    if not inspect.iscoroutinefunction(pyfuncitem.obj):
        return None
    kwargs = {name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}
    asyncio.run(pyfuncitem.obj(**kwargs))
    return True
