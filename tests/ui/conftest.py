"""Fixtures for the UI tests: the recorded run, a held replay trainer, and manual telemetry sources."""

from __future__ import annotations

import pytest
from ui_helpers import ReplayTrainer, host_recording, recorded_events

from rocmtui.gpu.replay import ManualReplay


@pytest.fixture
def events():
    return recorded_events()


@pytest.fixture
def host_source() -> ManualReplay:
    """Real host-only telemetry recorded on this 2-core machine without a GPU."""
    return ManualReplay(host_recording())


@pytest.fixture
def held_trainer(events) -> ReplayTrainer:
    """The recorded run, parked mid-epoch 3 (before event 36) until released or stopped."""
    return ReplayTrainer(events, hold_at=36)
