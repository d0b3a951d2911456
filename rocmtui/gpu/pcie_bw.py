"""PCIe traffic of amdgpu cards from ``pcie_bw``, read on a thread of its own because each read takes a second.

The kernel counts PCIe packets for one second inside the read (``amdgpu_get_pcie_bw``: the ASIC's
``get_pcie_usage`` sleeps 1 s), then prints ``received sent max_payload_bytes``. Read on the sampler's
thread, that second would stall every tick; here a daemon thread reads the cards in turn and the samples
take the newest result, or None once it is older than ``max_age_s``. Only GCN-era cards (Polaris, Vega)
have the file; on the others nothing is started.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

from rocmtui.gpu.amdgpu_files import read_text

PAUSE_S = 1.0
"""Rest between rounds, on top of the kernel's own second per card."""


def parse_pcie_bw(text: str | None) -> tuple[float, float] | None:
    """(rx, tx) bytes per second from ``pcie_bw``'s ``received sent payload`` line; None when malformed."""
    parts = (text or "").split()
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        return None
    received, sent, payload = (int(p) for p in parts)
    return float(received * payload), float(sent * payload)


class PcieBandwidth:
    """The newest ``pcie_bw`` reading of each card, kept fresh by a daemon thread once ``start`` is called."""

    def __init__(self, devices: list[Path], max_age_s: float = 5.0) -> None:
        self._files = [d / "pcie_bw" for d in devices]
        self._present = [f.is_file() for f in self._files]
        self._latest: list[tuple[float, float, float] | None] = [None] * len(devices)
        """Per card: (monotonic time, rx, tx) of the last good read."""
        self._max_age_s = max_age_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.round_done = threading.Event()
        """Set after each round over the cards (tests wait on it instead of sleeping)."""

    @property
    def wanted(self) -> bool:
        """True when at least one card has the file."""
        return any(self._present)

    def start(self) -> None:
        """Start the reading thread (once), if any card has ``pcie_bw``."""
        if self._thread is None and self.wanted and not self._stop.is_set():
            self._thread = threading.Thread(target=self._run, name="rocmtui-pcie-bw", daemon=True)
            self._thread.start()

    def latest(self, index: int) -> tuple[float | None, float | None]:
        """(rx, tx) bytes/s of card ``index`` from a recent read, else (None, None)."""
        entry = self._latest[index] if index < len(self._latest) else None
        if entry is None or time.monotonic() - entry[0] > self._max_age_s:
            return None, None
        return entry[1], entry[2]

    def read_round(self) -> None:
        """Read every card that has the file once (a second each on real hardware)."""
        for index, path in enumerate(self._files):
            if self._stop.is_set():
                return
            if not self._present[index]:
                continue
            reading = parse_pcie_bw(read_text(path))
            self._latest[index] = None if reading is None else (time.monotonic(), *reading)

    def close(self) -> None:
        """Stop the thread after its current read (a daemon: nothing waits for it)."""
        self._stop.set()

    def _run(self) -> None:
        while not self._stop.is_set():
            self.read_round()
            self.round_done.set()
            self._stop.wait(PAUSE_S)
