"""A tracked script for the tests of viewers that go away: a step every 20 ms, for at most ``LIMIT_S`` (the first
argument, default 60 s), ended early by a viewer's or ``rocmtui stop``'s stop. It prints its pid first, so that
a test can check that no process is left once it stopped."""

from __future__ import annotations

import os
import sys
import time

import rocmtui

STEP_S = 0.02
"""Stands in for a training step (the script's own pace; nothing waits on it)."""


def main(limit_s: float) -> None:
    print(f"pid {os.getpid()}", flush=True)
    end = time.monotonic() + limit_s
    with rocmtui.track(config={"limit_s": limit_s}) as run:
        step = 0
        while time.monotonic() < end and not run.should_stop:
            step += 1
            run.log(step=step, loss=1.0 / step)
            time.sleep(STEP_S)


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 60.0)
