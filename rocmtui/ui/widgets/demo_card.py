"""The closing card of ``rocmtui demo``: the result in one shareable line, below the curves, never over them."""

from __future__ import annotations

from textual.widgets import Static

from rocmtui.events import RunFinished, RunStarted
from rocmtui.ui.look.meters import fmt_acc, fmt_rate, fmt_span, fmt_temp


def share_line(started: RunStarted | None, done: RunFinished, peak_temp_c: float | None) -> str:
    """The run in one line, to copy into a chat or a slide."""
    what = f"{started.dataset} {started.config.model} on {started.device_name}" if started else "the run"
    acc = fmt_acc(done.best_test_acc)
    return (
        f"rocmtui: {what}: {acc} test accuracy, {done.epochs_completed} epochs in {fmt_span(done.total_s)}, "
        f"{fmt_rate(done.images_per_s)}, peak temp {fmt_temp(peak_temp_c)}"
    )


class ClosingCard(Static):
    """Takes the place of the epoch table and the log at the end of a demo pass (``TrainScreen.show_card``)."""

    DEFAULT_CSS = """
    ClosingCard {
        column-span: 3;
        height: 100%;
        border: heavy $accent;
        border-title-align: center;
        padding: 0 2;
        content-align: center middle;
        text-align: center;
        text-style: bold;
        background: $panel;
    }
    TrainScreen.-compact ClosingCard { column-span: 2; row-span: 2; border: none; padding: 0; }
    """
