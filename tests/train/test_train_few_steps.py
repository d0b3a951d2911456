"""An epoch of only a few steps (``--recipe fast``'s batches of 2,000 on the 1,900-image sample) is said in one
line, with what to do."""

from __future__ import annotations

import pytest

from rocmtui.config import TrainConfig
from rocmtui.events import LogMessage, RunControl, RunFinished, TrainEvent
from rocmtui.train.loop import train
from rocmtui.train.progress_events import few_steps_notice


def test_a_few_steps_an_epoch_are_said_with_what_to_do() -> None:
    line = few_steps_notice(2000, 1900, 1, TrainConfig(batch_size=2000))
    assert line is not None and "\n" not in line
    assert line.startswith("1 step an epoch: batches of 2,000 over 1,900 training images")
    assert "--download or --data-dir" in line and "--batch-size 32 (60 steps an epoch)" in line
    assert few_steps_notice(64, 1900, 30, TrainConfig()) is None
    assert few_steps_notice(32, 1900, 6, TrainConfig(max_steps_per_epoch=6)) is None  # capped on purpose


@pytest.mark.slow  # a real epoch of 1,900 images on the CPU
def test_a_one_step_epoch_on_the_sample_says_so(small) -> None:
    events: list[TrainEvent] = []
    config = small(batch_size=2000, epochs=1, max_steps_per_epoch=None)
    summary = train(config, events.append, RunControl())
    assert isinstance(summary.event, RunFinished)
    warnings = [e.message for e in events if isinstance(e, LogMessage) and e.level == "warning"]
    assert any(message.startswith("1 step an epoch") for message in warnings), warnings
