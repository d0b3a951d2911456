"""The line naming the run (dataset, model, device, AMP, batch size, folder) and its notice."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from rocmtui.config import TrainConfig
from rocmtui.events import RunStarted, TrackStarted


def run_line(config: TrainConfig, started: RunStarted | None) -> str:
    """``cifar10 · simplecnn · cuda:0 AMD MI300X (ROCm 6.2) · AMP bf16 · batch 512 · runs/…``."""
    if started is None:
        return f"{config.dataset} · {config.model} · starting on {config.device}…"
    device = f"{started.device} {started.device_name} ({started.backend})"
    return (
        f"{started.dataset} · {config.model} · {device} · AMP {config.amp} · batch {config.batch_size}"
        f" · {started.run_dir}"
    )


class RunInfo(Vertical):
    """Two statics: the run line and, when there is one, the notice in a warning colour."""

    def __init__(self, config: TrainConfig, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.config = config
        self.line = Static(run_line(config, None), classes="run-line")
        self.notice = Static("", classes="notice")
        self.notice.display = False

    def compose(self) -> ComposeResult:
        yield self.line
        yield self.notice

    def show_tracked(self, started: TrackStarted) -> None:
        """A script's run (``rocmtui.track()``): its name and folder."""
        self.line.update(f"{started.name} · {started.run_dir}")

    def show(self, started: RunStarted) -> None:
        self.line.update(run_line(started.config, started))
        if started.notice:
            self.notice.update(f"⚠ {started.notice}")
            self.notice.display = True
