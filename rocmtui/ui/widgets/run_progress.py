"""Epoch and step bars with throughput, elapsed time and ETA, all derived from the events."""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget

from rocmtui.ui.format import bar, dim_tracks, fmt_duration, fmt_rate
from rocmtui.ui.run_state import RunState

PHASE_TEXT = {
    "starting": "starting…",
    "training": "● training",
    "paused": "❚❚ paused (p resumes)",
    "stopping": "■ stopping: saving a checkpoint…",
    "finished": "✔ finished",
    "failed": "✘ failed",
}


def progress_lines(state: RunState, width: int) -> list[str]:
    """Two lines: epoch bar with the phase; step bar with speed, elapsed and ETA."""
    steps = state.last_steps
    total = max(1, state.total_epochs)
    epoch_no = min(state.current_epoch + 1, total)
    phase = PHASE_TEXT[state.phase]
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
