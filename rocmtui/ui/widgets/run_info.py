"""The line naming the run (dataset, model, device, AMP, batch size, folder) and its notice."""

from __future__ import annotations

from pathlib import Path

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from rocmtui.config import TrainConfig
from rocmtui.events import RunStarted, TrackStarted
from rocmtui.ui.look.safe_text import safe_text


def run_line(config: TrainConfig, started: RunStarted | None) -> str:
    """``cifar10 · simplecnn · cuda:0 AMD MI300X (ROCm 6.2) · AMP bf16 · batch 512 · runs/…``."""
    return run_lines(config, started)[0]


def run_lines(config: TrainConfig, started: RunStarted | None) -> list[str]:
    """The run line, then ever shorter forms of it: the header shows the longest that fits.

    Shortened part by part, least telling first: the folder to its name, the device to its name, the
    defaults dropped, then the folder, the AMP mode and the batch size; never a word cut in half.
    """
    if started is None:
        return [
            f"{config.dataset} · {config.model} · starting on {config.device}…",
            f"{config.dataset} · {config.model}",
        ]
    amp = f"AMP {config.amp}"
    parts = {
        "dataset": started.dataset,
        "model": config.model,
        "device": f"{started.device} {started.device_name} ({started.backend})",
        "amp": amp,
        "batch": f"batch {config.batch_size}",
        "folder": started.run_dir,
    }
    steps: list[tuple[str, str | None]] = [
        ("folder", Path(started.run_dir).name),
        ("device", f"{started.device_name} ({started.backend})"),
        ("amp", None if config.amp == "off" else amp),
        ("device", started.device_name),
        ("batch", f"bs {config.batch_size}"),
        ("folder", None),
        ("amp", None),
        ("batch", None),
    ]
    lines = [" · ".join(parts.values())]
    for name, short in steps:
        if short is None:
            parts.pop(name, None)
        else:
            parts[name] = short
        lines.append(" · ".join(parts.values()))
    return list(dict.fromkeys(lines))


def fitting(lines: list[str], width: int) -> str:
    """The first of ``lines`` that fits ``width`` columns, else the shortest (cut at its end)."""
    return next((line for line in lines if len(line) <= width), lines[-1])


class RunInfo(Vertical):
    """Two statics: the run line (as long as the width allows) and, when there is one, the notice in a
    warning colour."""

    def __init__(self, config: TrainConfig, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.config = config
        self.lines = run_lines(config, None)
        """The run line's forms, longest first (``run_lines``)."""
        self.line = Static(safe_text(self.lines[0]), classes="run-line")
        self.notice = Static("", classes="notice")
        self.notice.display = False

    def compose(self) -> ComposeResult:
        yield self.line
        yield self.notice

    def show_lines(self, lines: list[str]) -> None:
        self.lines = lines
        if not self.is_attached:  # before the screen is composed: the line starts with these
            self.line = Static(safe_text(lines[0]), classes="run-line")
            return
        self.line.update(safe_text(fitting(lines, self.content_size.width or len(lines[0]))))

    def on_resize(self) -> None:
        self.show_lines(self.lines)

    def show_script(self, name: str, folder: Path | None) -> None:
        """A script's run before its first event: its name (and folder, when known), nothing of a training's."""
        where = [f"{name} · {folder}", f"{name} · {folder.name}"] if folder is not None else []
        self.show_lines([*where, name])

    def show_tracked(self, started: TrackStarted) -> None:
        """A script's run (``rocmtui.track()``): its name and folder."""
        name = f"{started.name} · {Path(started.run_dir).name}"
        self.show_lines([f"{started.name} · {started.run_dir}", name, started.name])

    def show(self, started: RunStarted) -> None:
        self.show_lines(run_lines(started.config, started))
        if started.notice:
            self.notice.update(safe_text(f"⚠ {started.notice}"))
            self.notice.display = True
