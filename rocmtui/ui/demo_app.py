"""``rocmtui demo``: a real recorded run replayed at a chosen pace, for a meetup's screen or a booth.

The viewer app of ``watch``, with a high-contrast theme, taller plots, and at the end a closing card in
place of the epoch table (the curves stay in view) instead of the summary card. ``--loop`` starts the
recording over after ``hold_s`` seconds on the card.
"""

from __future__ import annotations

from pathlib import Path

from textual.theme import Theme

from rocmtui.base.errors import UsageError
from rocmtui.config import TrainConfig
from rocmtui.events import Emit, RunControl, RunFinished, TrainEvent
from rocmtui.run.replay_pace import Pace, paced_follow
from rocmtui.ui.screens.train import TrainScreen
from rocmtui.ui.state.demo_samples import PacedSamples
from rocmtui.ui.train_app import TrainApp
from rocmtui.ui.widgets.demo_card import ClosingCard, share_line
from rocmtui.ui.widgets.throttled_plot import PLOT_PERIOD_S

DEMO_RUN = Path(__file__).resolve().parent.parent / "data" / "demo-run"
"""The recording shipped in the package: a run folder as ``rocmtui train`` wrote it on an NVIDIA H200."""
LEAD_S = 1.0
"""Wall seconds between the first frame and the run's first event."""
HOLD_S = 15.0
"""Seconds a ``--loop`` pass stays on its closing card before the recording starts over."""

DEMO_THEME = Theme(
    name="rocmtui-demo",
    primary="#00d7ff",
    secondary="#ffd75f",
    accent="#ff5fd7",
    warning="#ffd75f",
    error="#ff5f5f",
    success="#5fff87",
    foreground="#ffffff",
    background="#000000",
    surface="#000000",
    panel="#1c1c1c",
    boost="#262626",
    dark=True,
)
"""White on black, saturated colours: readable on a projector across a room."""


class DemoTrainScreen(TrainScreen):
    """The training screen with the plots taking the room the epoch table had."""

    bottom_rows = 7


class DemoApp(TrainApp):
    """A TrainApp over a paced replay; q leaves at once (there is nothing to stop)."""

    def __init__(
        self,
        config: TrainConfig,
        events: list[tuple[float, TrainEvent]],
        samples: PacedSamples,
        pace: Pace,
        *,
        loop: bool = False,
        hold_s: float = HOLD_S,
        plot_period_s: float = PLOT_PERIOD_S,
    ) -> None:
        super().__init__(config, self._replay, samples, detachable=True, plot_period_s=plot_period_s)
        self.register_theme(DEMO_THEME)
        self.theme = DEMO_THEME.name
        self.events = events
        self.pace = pace
        self.loop = loop
        self.hold_s = hold_s
        self.plot_period_s = plot_period_s
        self.train_screen = DemoTrainScreen(config, self.control, plot_period_s=plot_period_s)
        self.card: ClosingCard | None = None
        self.shared: str | None = None
        """The last pass's shareable line."""

    def _replay(self, config: TrainConfig, emit: Emit, control: RunControl) -> object:
        return paced_follow(self.events, emit, control, self.pace)

    def action_request_quit(self) -> None:
        self.exit(0)

    def show_finished(self) -> None:
        screen = self.train_screen
        screen.replot_now()
        final = self.final
        if isinstance(final, RunFinished):
            self.peaks.update_all(self.sampler.history())
            self.shared = share_line(screen.state.started, final, self.peaks.temperature_c)
            text = f"{self.shared}\n\nreplayed at {self.pace.speed:g}x the pace it was recorded"
        else:
            text = "the recording ended without a result"
        if self.loop:
            text += f"; starting over in {self.hold_s:.0f} s"
        self.card = ClosingCard(text, id="closing-card")
        self.card.border_title = "Result"
        screen.show_card(self.card, keep_log=False)
        if self.loop:
            self.set_timer(self.hold_s, self.next_pass)

    async def next_pass(self) -> None:
        """``--loop``: a fresh screen, and the recording from its start."""
        if self.screen is not self.train_screen:  # the monitor (m) or help is on top: start over once closed
            self.set_timer(1.0, self.next_pass)
            return
        old = self.train_screen
        self.train_screen = DemoTrainScreen(self.config, self.control, plot_period_s=self.plot_period_s)
        self.final, self.card = None, None
        self.trainer_done.clear()
        self.pace.restart()
        await self.pop_screen()  # the old screen goes first: both have the id "train"
        self.uninstall_screen(old)
        await old.remove()
        await self.push_screen(self.train_screen)
        self.run_worker(self._follow, thread=True, name="run-source", exit_on_error=False)

    def final_lines(self) -> list[str]:
        return [self.shared] if self.shared else []


def build_demo_app(speed: float, loop: bool, run_dir: Path = DEMO_RUN) -> DemoApp:
    """The demo app over ``run_dir``'s events and samples; UsageError (one line) when it cannot be read."""
    from rocmtui.gpu.sample_codec import loads
    from rocmtui.run.format import GPU, saved_config
    from rocmtui.run.replay_pace import recorded_events

    try:
        events = recorded_events(run_dir)
        lines = (run_dir / GPU).read_bytes().splitlines()
        samples = [loads(line) for line in lines if line.strip()]
    except (OSError, ValueError) as err:
        raise UsageError(f"cannot read the recording in {run_dir}: {err}") from None
    if not events:
        raise UsageError(f"no events in the recording in {run_dir}")
    pace = Pace(events[0][0] - LEAD_S * speed, speed)
    paced = PacedSamples(samples, pace)
    paced.catch_up()  # the GPU before the run started is history at the first frame
    return DemoApp(saved_config(run_dir), events, paced, pace, loop=loop)
