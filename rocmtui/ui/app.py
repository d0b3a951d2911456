"""The monitor app, and the base of the training app: telemetry in, one data screen drawn at a time.

One factory per app (``create_monitor_app`` here, ``TrainApp`` in ``train_app``) serves the
CLI, the tests and the screenshot script. Threading invariant: the sampler's thread only posts
messages (through the coalescing ``SampleRelay``); handlers on the UI thread own every widget.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar, Protocol, runtime_checkable

from textual import events
from textual.binding import Binding, BindingType
from textual.filter import Monochrome, NoColor
from textual.screen import Screen
from textual.theme import BUILTIN_THEMES

from rocmtui.base import startup_gc
from rocmtui.base.text import plain
from rocmtui.config import MonitorConfig
from rocmtui.gpu.feed import Feed
from rocmtui.gpu.replay import ReplaySource
from rocmtui.gpu.sample import SampleSet
from rocmtui.gpu.source import TelemetrySource
from rocmtui.ui.look.safe_text import cleaned
from rocmtui.ui.look.themes import check_theme
from rocmtui.ui.messages import GpuSampled, SampleRelay
from rocmtui.ui.quiet_input import QuietApp
from rocmtui.ui.screens.monitor import MonitorScreen, next_interval
from rocmtui.ui.state.peaks import Peaks
from rocmtui.ui.state.settings import MonitorSettings
from rocmtui.ui.state.settings import save as save_settings


@runtime_checkable
class ShowsSamples(Protocol):
    """A screen that draws telemetry: the topmost one gets each new sample."""

    def show_samples(self, sample_set: SampleSet, history: Sequence[SampleSet]) -> None: ...


class MonitorApp(QuietApp[int]):
    """The GPU panel alone (``rocmtui monitor``); the training app adds its run on top."""

    CSS_PATH = str(Path(__file__).resolve().parent / "app.tcss")  # absolute: subclasses live elsewhere
    TITLE = "rocmtui"
    ENABLE_COMMAND_PALETTE = False
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "request_quit", "Quit"),
        Binding("ctrl+c", "request_quit", "Quit", show=False, priority=True),
        Binding("question_mark", "help", "Help", key_display="?"),
        Binding("S,f9", "save_screen", "Screenshot", show=False),  # F9 too: in a browser, S right after Escape is alt+S
    ]

    def __init__(
        self,
        sampler: TelemetrySource,
        *,
        theme: str = MonitorConfig.theme,
        settings: MonitorSettings | None = None,
        settings_path: Path | None = None,
        readonly: bool = False,
        recording: bool = False,
    ) -> None:
        """``recording``: the sampler plays a recording (``--replay``), which the monitor says in place of the
        live interval."""
        super().__init__()
        if self.no_color:  # NO_COLOR: no colour at all (Textual's own filter turns colours into greys)
            self._filters = [f for f in self._filters if not isinstance(f, Monochrome)] + [NoColor()]
        self.theme = theme
        self.settings = settings or MonitorSettings(theme=theme)
        self.settings_path = settings_path
        """Where changed settings are saved; None: not saved (tests, the training app)."""
        self.sampler = sampler
        self.peaks = Peaks()
        self.relay = SampleRelay(self.post_message)
        self.monitor_screen = MonitorScreen(
            in_train=self.has_run, replaying=isinstance(sampler, ReplaySource), readonly=readonly
        )
        if recording and isinstance(sampler, Feed):  # --replay: the status line says what times it covers
            self.monitor_screen.recorded_span = sampler.span

    @property
    def has_run(self) -> bool:
        return False

    def get_default_screen(self) -> Screen[Any]:
        """The monitor is the first screen itself: no blank screen is composed and drawn before it."""
        return self.monitor_screen if self.first_screen() == "monitor" else super().get_default_screen()

    def on_mount(self) -> None:
        if self.screen is not self.monitor_screen:
            self.install_screen(self.monitor_screen, "monitor")
            self.push_screen(self.first_screen())
        self.monitor_screen.interval_s = self.sampler.interval_s
        self.monitor_screen.apply_settings(self.settings)
        # The first frame first: a live source loads and initialises its vendor library at its first tick.
        self.call_after_refresh(self.start_sampling)
        self.call_after_refresh(startup_gc.resume)  # the start is over (rocmtui.entry paused the collector)

    def start_sampling(self) -> None:
        """Samples in once the screens are up: the newest already held (a replay's history), then the source's."""
        self.sampler.subscribe(self.relay.offer)
        history = self.sampler.history()
        if history:
            self.relay.offer(history[-1])
        self.sampler.start()

    def first_screen(self) -> str:
        return "monitor"

    def on_unmount(self) -> None:
        self.sampler.stop()

    def on_gpu_sampled(self, _: GpuSampled) -> None:
        sample_set = self.relay.take()
        if sample_set is not None:
            self.peaks.update(sample_set)
            self.show_samples(sample_set)

    def show_samples(self, sample_set: SampleSet) -> None:
        """Only the visible data screen draws; the other catches up when shown."""
        sample_set = cleaned(sample_set)  # process names, command lines, GPU names: plain text from here on
        for screen in reversed(self.screen_stack):
            if isinstance(screen, ShowsSamples):
                screen.show_samples(sample_set, self.sampler.history())
                return

    def show_latest(self) -> None:
        if self.relay.latest is not None:
            self.show_samples(self.relay.latest)

    def on_key(self, event: events.Key) -> None:
        """Characters typed in one burst with the monitor's / went to what had the focus as they came in, and
        reach the app once the filter has opened (keys typed into the filter never get here): the filter's."""
        filter_input = self.monitor_screen.filter_input
        if self.focused is filter_input and event.is_printable and event.character and event.key != "slash":
            filter_input.insert_text_at_cursor(event.character)

    def action_request_quit(self) -> None:
        self.exit(0)

    def action_change_interval(self, faster: bool) -> None:
        value = next_interval(self.sampler.interval_s, faster)
        self.sampler.interval_s = value
        self.monitor_screen.interval_s = value
        self.monitor_screen.show_status()
        self.save_settings()

    def action_next_theme(self) -> None:
        """The next built-in theme (c), kept for the next session."""
        names = sorted(BUILTIN_THEMES)
        self.theme = names[(names.index(self.theme) + 1) % len(names)] if self.theme in names else names[0]
        self.notify(f"theme {self.theme}", timeout=2, markup=False)
        self.save_settings()

    def on_monitor_screen_changed(self, _: MonitorScreen.Changed) -> None:
        self.save_settings()

    def save_settings(self) -> None:
        """Keep the current interval, theme, timebase, graphs and sort (when a settings file is in use)."""
        self.settings = self.monitor_screen.settings(
            replace(self.settings, interval_s=self.sampler.interval_s, theme=self.theme)
        )
        if self.settings_path is not None:
            problem = save_settings(self.settings_path, self.settings)
            if problem is not None:
                self.notify(problem, severity="warning", markup=False)

    def picture_places(self) -> list[Path]:
        """Where the ``S`` key's picture goes, first choice first."""
        from rocmtui.ui.screenshot import monitor_places

        return monitor_places()

    def action_save_screen(self) -> None:
        """The screen as it is now, as Textual's SVG, into the first of ``picture_places`` that takes it."""
        from rocmtui.ui.screenshot import write_picture

        try:
            path = write_picture(self.export_screenshot(), self.picture_places())
        except OSError as err:
            self.notify(f"screen not saved: {plain(err)}", severity="warning", markup=False)
            return
        where = " on the server" if self.is_web else ""  # serve: the app runs there, not in the browser
        self.notify(f"screen saved{where}: {plain(path)}", timeout=6, markup=False)

    def action_help(self) -> None:
        from rocmtui.ui.screens.help import MONITOR_KEYS, HelpScreen  # not needed for the first frame

        if not isinstance(self.screen, HelpScreen):
            readonly = self.monitor_screen.readonly
            keys = tuple(k for k in MONITOR_KEYS if not (readonly and k[0] == "k / K"))  # --readonly: no kill keys
            self.push_screen(HelpScreen("rocmtui monitor: keys", keys))


def create_monitor_app(
    config: MonitorConfig,
    sampler: TelemetrySource,
    *,
    settings: MonitorSettings | None = None,
    settings_path: Path | None = None,
    readonly: bool = False,
    recording: bool = False,
) -> MonitorApp:
    """The monitor app (also the screenshot script's); ``settings_path``: where changes are saved; ``readonly``:
    no kill keys; ``recording``: ``sampler`` plays a recording (``--replay``), said so with its times."""
    check_theme(config.theme)
    return MonitorApp(
        sampler,
        theme=config.theme,
        settings=settings,
        settings_path=settings_path,
        readonly=readonly,
        recording=recording,
    )


def run_monitor_app(
    config: MonitorConfig,
    sampler: TelemetrySource,
    *,
    settings: MonitorSettings | None = None,
    settings_path: Path | None = None,
    readonly: bool = False,
    recording: bool = False,
) -> int:
    """``rocmtui monitor``; returns the exit code."""
    app = create_monitor_app(
        config, sampler, settings=settings, settings_path=settings_path, readonly=readonly, recording=recording
    )
    result = app.run()
    return result if isinstance(result, int) else (app.return_code or 0)
