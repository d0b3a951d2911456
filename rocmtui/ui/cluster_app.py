"""The cluster view's app: rounds over many hosts in, the cluster screen and a host's GPU panel drawn.

Threading invariant as in the monitor: the source's thread only offers rounds to the coalescing relay; the
handlers on the UI thread own every widget. The exporters' text crosses the boundary on its way to the screen: the
cluster list cleans what a line shows as it is drawn (the lines on screen, not 2,048 GPUs a round), and a host
handed to the monitor's GPU panel, or ``latest``, is cleaned whole first (``cleaned_host``).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.theme import BUILTIN_THEMES

from rocmtui.base import startup_gc
from rocmtui.config import MonitorConfig
from rocmtui.gpu.cluster.cluster_source import ClusterSource
from rocmtui.gpu.cluster.reading import ClusterRound, HostReading
from rocmtui.gpu.sample import GpuSample, HostSample, SampleSet
from rocmtui.ui.look.safe_text import cleaned, cleaned_like
from rocmtui.ui.messages import ClusterRead, Relay
from rocmtui.ui.quiet_input import QuietApp
from rocmtui.ui.screens.cluster import ClusterScreen, HostScreen
from rocmtui.ui.screens.monitor import next_interval
from rocmtui.ui.widgets.cluster_list import ClusterList

_Cleaned = tuple[tuple[GpuSample, ...], HostSample | None, tuple[str | None, ...], HostReading]


class ClusterApp(QuietApp[int]):
    """Every GPU of many hosts (``rocmtui monitor --hosts``, ``--hostfile``, ``--prometheus``)."""

    CSS_PATH = str(Path(__file__).resolve().parent / "app.tcss")
    TITLE = "rocmtui cluster"
    ENABLE_COMMAND_PALETTE = False
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit_app", "Quit"),
        Binding("ctrl+c", "quit_app", "Quit", show=False, priority=True),
        Binding("question_mark", "help", "Help", key_display="?"),
    ]

    def __init__(self, source: ClusterSource, *, theme: str = MonitorConfig.theme) -> None:
        super().__init__()
        self.theme = theme
        self.source = source
        self.relay: Relay[ClusterRound] = Relay(self.post_message, ClusterRead)
        self.cluster_screen = ClusterScreen(source.interval_s)
        self.received: ClusterRound | None = None
        """The last round as read (the exporters' text as they wrote it)."""
        self._latest: ClusterRound | None = None
        self._clean: dict[str, _Cleaned] = {}
        """Each host's GPUs, host readings and own strings as last cleaned, and the host as cleaned."""

    def get_default_screen(self) -> Screen[Any]:
        return self.cluster_screen

    def on_mount(self) -> None:
        self.call_after_refresh(self.start_reading)  # the first frame first: the first round may take a timeout
        self.call_after_refresh(startup_gc.resume)

    def start_reading(self) -> None:
        self.source.subscribe(self.relay.offer)
        self.source.start()

    def on_unmount(self) -> None:
        self.source.stop()

    def on_cluster_read(self, _: ClusterRead) -> None:
        cluster = self.relay.take()
        if cluster is None:
            return
        self.received, self._latest = cluster, None
        self.cluster_screen.show_round(cluster)  # its lines clean what they show as they are drawn
        if isinstance(self.screen, HostScreen):
            self.show_host(self.screen)

    @property
    def latest(self) -> ClusterRound | None:
        """The last round with every text in it through the boundary (made when first asked for)."""
        if self._latest is None and self.received is not None:
            hosts = tuple(self.cleaned_host(h) for h in self.received.hosts)
            self._latest = replace(self.received, hosts=hosts)
            if len(self._clean) > 2 * len(hosts):  # instances come and go (a Prometheus's): keep this round's
                targets = {h.target for h in hosts}
                self._clean = {t: c for t, c in self._clean.items() if t in targets}
        return self._latest

    def cleaned_host(self, host: HostReading) -> HostReading:
        """``host`` with its text through the boundary, what was cleaned for its last reading kept where it can be:
        when its own strings and host reading are the very ones of then, they are kept as cleaned then, and its
        GPUs too when they are then's (a page not read again); GPUs read anew are each cleaned like its reading of
        then (``cleaned_like``)."""
        own = (host.hostname, host.exporter, host.error)
        held = self._clean.get(host.target)
        if held is None or held[1] is not host.host or held[2] != own:
            clean = cleaned(host)
        else:
            was = held[3]
            if held[0] is host.gpus:
                gpus = was.gpus
            elif len(held[0]) == len(host.gpus):
                gpus = tuple(cleaned_like(*g) for g in zip(host.gpus, held[0], was.gpus, strict=True))
            else:
                gpus = cleaned(host.gpus)
            clean = HostReading(
                target=was.target, up=host.up, timestamp=host.timestamp, gpus=gpus, host=was.host,
                hostname=was.hostname, exporter=was.exporter, error=was.error, malformed=host.malformed,
                latency_s=host.latency_s,
            )  # fmt: skip
        self._clean[host.target] = (host.gpus, host.host, own, clean)
        return clean

    def on_cluster_list_opened(self, event: ClusterList.Opened) -> None:
        screen = HostScreen(event.target)
        screen.interval_s = self.source.interval_s
        self.push_screen(screen)
        self.call_after_refresh(self.show_host, screen)

    def show_host(self, screen: HostScreen) -> None:
        if self.received is None:
            return
        now = next((h for h in self.received.hosts if h.target == screen.target), None)
        if now is None:
            return
        history: list[SampleSet] = []
        for earlier in self.source.history():
            host = next((h for h in earlier.hosts if h.target == screen.target and h.up), None)
            if host is not None:
                history.append(host.sample_set())
        screen.show_samples(self.cleaned_host(now).sample_set(), history)

    def action_quit_app(self) -> None:
        self.exit(0)

    def action_change_interval(self, faster: bool) -> None:
        value = next_interval(self.source.interval_s, faster)
        self.source.interval_s = value
        self.cluster_screen.interval_s = value
        self.cluster_screen.redraw()
        if isinstance(self.screen, HostScreen):
            self.screen.interval_s = value
            self.screen.show_status()

    def action_help(self) -> None:
        from rocmtui.ui.screens.help import CLUSTER_KEYS, MONITOR_KEYS, HelpScreen

        if isinstance(self.screen, HelpScreen):
            return
        if isinstance(self.screen, HostScreen):
            keys = tuple(k for k in MONITOR_KEYS if k[0] not in {"k / K", "S"})
            self.push_screen(HelpScreen("one host of the cluster: keys (m or escape: back)", keys))
        else:
            self.push_screen(HelpScreen("rocmtui cluster: keys", CLUSTER_KEYS))

    def action_next_theme(self) -> None:
        names = sorted(BUILTIN_THEMES)
        self.theme = names[(names.index(self.theme) + 1) % len(names)] if self.theme in names else names[0]
        self.notify(f"theme {self.theme}", timeout=2, markup=False)


def run_cluster_app(source: ClusterSource, *, theme: str = MonitorConfig.theme) -> int:
    """``rocmtui monitor --hosts ...``; returns the exit code."""
    app = ClusterApp(source, theme=theme)
    result = app.run()
    return result if isinstance(result, int) else (app.return_code or 0)
