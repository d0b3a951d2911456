"""Epoch and step bars with throughput, elapsed time and ETA, all derived from the events."""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget

from rocmtui.ui.look.meters import bar, dim_tracks, fmt_duration, fmt_rate
from rocmtui.ui.state.run_state import RunState

PHASE_TEXT = {
    "starting": "starting…",
    "training": "● training",
    "paused": "❚❚ paused (p resumes)",
    "stopping": "■ stopping: saving a checkpoint…",
    "finished": "✔ finished",
    "failed": "✘ failed",
}
ENDED_EARLY_TEXT = {"stopped": "■ stopped", "interrupted": "■ interrupted (Ctrl-C)"}
"""A run that finished before its end (a stop, Ctrl-C): never shown as finished."""


def phase_text(state: RunState) -> str:
    if state.stalled and state.running:
        return "‖ stalled: no heartbeat"
    if state.phase == "finished" and state.finished is not None and state.finished.reason != "completed":
        return ENDED_EARLY_TEXT.get(state.finished.reason, f"■ {state.finished.reason}")
    return PHASE_TEXT[state.phase]


SCRIPT_STOPPING = "■ stopping: asked the script to stop…"
"""A script saves only if it does so itself: its stop says nothing of a checkpoint."""


def tracked_lines(state: RunState, width: int) -> list[str]:
    """A script's run (``rocmtui.track()``): steps (of the total, when known) with the phase; speed and times."""
    scalars = state.scalars
    phase = SCRIPT_STOPPING if state.phase == "stopping" else phase_text(state)
    last = scalars.last
    step, total = (last.step, last.total_steps or 0) if last else (0, 0)
    epochs = f"  epoch {scalars.last_epoch.epoch}" if scalars.last_epoch else ""
    head = f"step {step}/{total} " if total else f"step {step} "
    if total:
        line1 = f"{head}{bar(step / total, max(4, width - len(head) - len(phase) - 2))}  {phase}"
    else:
        line1 = f"{head}{epochs}  {phase}"
    rate = None if state.stalled else scalars.steps_per_s
    eta = (total - step) / rate if rate and total and state.running else None
    speed = f"{rate:,.1f} steps/s" if rate else "- steps/s"
    line2 = f"{speed}  elapsed {fmt_duration(state.elapsed_s)}  ETA {fmt_duration(eta)}{epochs if total else ''}"
    return [line1, line2]


def progress_lines(state: RunState, width: int) -> list[str]:
    """Two lines: epoch bar with the phase; step bar with speed, elapsed and ETA."""
    if state.is_script:
        return tracked_lines(state, width)
    steps = state.last_steps
    total = max(1, state.total_epochs)
    epoch_no = min(state.current_epoch + 1, total)
    phase = "◐ testing" if state.testing else phase_text(state)
    head = f"Epoch {epoch_no}/{total} " if state.total_epochs else "Epoch -/- "
    line1 = f"{head}{bar(state.epochs_done / total, max(4, width - len(head) - len(phase) - 2))}  {phase}"
    step, spe = (
        (steps.epoch_step, steps.steps_per_epoch)
        if steps
        else (0, state.started.steps_per_epoch if state.started else 1)
    )
    speed = fmt_rate(steps.images_per_s if steps else None)
    tail = f"  {speed}  elapsed {fmt_duration(state.elapsed_s)}  ETA {fmt_duration(state.eta_s)}"
    step_text = f"step {step}/{spe} "
    line2 = f"{step_text}{bar(step / max(1, spe), max(4, width - len(step_text) - len(tail)))}{tail}"
    return [line1, line2]


class RunProgress(Widget):
    """Two lines of cheap text, redrawn when the run state changes."""

    DEFAULT_CSS = """
    RunProgress { width: 1fr; height: 2; }
    """

    def __init__(self, state: RunState, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.state = state

    def render(self) -> Text:
        return dim_tracks(Text("\n".join(progress_lines(self.state, self.size.width)), no_wrap=True, overflow="crop"))
