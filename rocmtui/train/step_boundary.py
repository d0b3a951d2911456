"""Between two steps: a viewer's stop, pause and save requests, acted on by every rank at the same step."""

from __future__ import annotations

import time
from collections.abc import Callable

from rocmtui.events import LogMessage, RunControl
from rocmtui.train.distributed import agree
from rocmtui.train.progress_events import Reporter

SYNC_STEPS_GPU = 10
"""Steps between the ranks' agreements on a GPU (each one syncs the host with the device)."""
PAUSE_POLL_S = 0.2
"""How often paused ranks agree whether they are still paused."""


class Boundary:
    """Stop, pause and save between steps. A pause is left out of the run's clock; a save writes
    ``checkpoint-last.pt`` through ``save_last``."""

    def __init__(self, control: RunControl, reporter: Reporter, save_last: Callable[[], None]) -> None:
        self.control, self.reporter, self.save_last = control, reporter, save_last
        engine = reporter.engine
        self.ranks, self.device = engine.ranks, engine.device
        self.sync_steps = 1 if self.device.type != "cuda" else SYNC_STEPS_GPU
        self.pending: Callable[[], None] | None = None
        """Work the loop has put off (the last epoch's events and checkpoint): done before a pause or a save."""

    def go_on(self, epoch_step: int) -> bool:
        """Handle the requests before step ``epoch_step``; False means stop now."""
        if self.ranks.several:
            return self._agreed(epoch_step)
        control = self.control
        if control.stop.is_set():
            return False
        if control.paused and not self._sit_out(self._paused_alone, self._wait_alone, control.stop.is_set):
            return False
        if control.take_save_request():
            self._save()
        return True

    def settle(self) -> None:
        """Do the ``pending`` work now, once."""
        pending, self.pending = self.pending, None
        if pending is not None:
            pending()

    def _agreed(self, epoch_step: int) -> bool:
        """The ranks' boundary: every ``sync_steps`` steps they agree on stop, pause, save and reporting.

        Rank 0 hears the viewers' commands; any rank may ask to stop (a signal); all act at the same step.
        """
        if epoch_step % self.sync_steps:
            return True
        control = self.control
        stop, pause, save, report = agree(
            [control.stop.is_set(), control.paused, control.take_save_request(), self.reporter.due()],
            self.device,
            self.reporter.engine.waits,
        )
        if report:
            self.reporter.flush()
        if stop:
            return False

        def wait() -> None:
            nonlocal stop, pause
            time.sleep(PAUSE_POLL_S)
            stop, pause = agree([control.stop.is_set(), control.paused], self.device)

        if pause and not self._sit_out(lambda: bool(pause and not stop), wait, lambda: bool(stop)):
            return False
        if save:
            self._save()
        return True

    def _paused_alone(self) -> bool:
        return self.control.paused and not self.control.stop.is_set()

    def _wait_alone(self) -> None:
        self.control.wait_while_paused()

    def _sit_out(
        self, still_paused: Callable[[], bool], wait: Callable[[], object], stopped: Callable[[], bool]
    ) -> bool:
        """A pause: the steps so far sent, "Paused", ``wait`` while ``still_paused()``, then "Resumed" unless
        ``stopped()``; False means stop now."""
        self.settle()
        self.reporter.flush()
        self.reporter.send(LogMessage("Paused"))
        self.reporter.clock.hold(still_paused, wait)
        self.reporter.mark()
        if stopped():
            return False
        self.reporter.send(LogMessage("Resumed"))
        return True

    def _save(self) -> None:
        self.settle()
        self.reporter.flush()
        self.save_last()
