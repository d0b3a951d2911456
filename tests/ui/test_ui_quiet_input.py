"""The quiet input thread: blocked while the keyboard is quiet, a lone Esc still a key, a stop still prompt."""

from __future__ import annotations

import asyncio
import os
import queue
import threading
import time
from typing import Any

import pytest
from textual import events
from textual.app import App
from textual.drivers.headless_driver import HeadlessDriver
from textual.drivers.linux_driver import LinuxDriver
from textual.message import Message

from rocmtui.ui.quiet_input import POLL_S, QUIET_S, QuietApp, WakingEvent, driver_class, quiet_wait


def test_the_thread_polls_only_while_keys_are_coming() -> None:
    assert quiet_wait(last_input=100.0, now=100.0) == POLL_S
    assert quiet_wait(last_input=100.0, now=100.0 + QUIET_S / 2) == POLL_S
    assert quiet_wait(last_input=100.0, now=100.0 + QUIET_S + 0.01) is None


def test_textuals_linux_driver_is_replaced_and_no_other() -> None:
    quiet = driver_class(LinuxDriver)
    assert issubclass(quiet, LinuxDriver) and quiet is not LinuxDriver
    assert driver_class(HeadlessDriver) is HeadlessDriver


def test_the_apps_pick_the_quiet_driver_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(App, "get_driver_class", lambda self: LinuxDriver)
    assert QuietApp().get_driver_class().__name__ == "QuietLinuxDriver"


def test_setting_the_event_writes_to_the_pipe_and_a_closed_pipe_is_no_error() -> None:
    read_end, write_end = os.pipe()
    event = WakingEvent(write_end)
    event.set()
    assert event.is_set() and os.read(read_end, 16) == b"\0"
    os.close(write_end)
    os.close(read_end)
    WakingEvent(write_end).set()  # a stop after the driver closed its pipe


class _Collecting:
    """The quiet driver reading a pipe as its terminal, its events collected instead of sent to an app."""

    def __init__(self) -> None:
        self.read_end, self.write_end = os.pipe()
        self.events: queue.Queue[Message] = queue.Queue()
        base = driver_class(LinuxDriver)
        received = self.events

        class Driver(base):  # type: ignore[misc, valid-type]
            def process_message(self, message: Message) -> None:
                received.put(message)

        async def make() -> Any:  # a driver is made inside the app's running loop
            return Driver(App())

        self.loop = asyncio.new_event_loop()
        self.driver: Any = self.loop.run_until_complete(make())
        self.driver.fileno = self.read_end
        self.thread = threading.Thread(target=self.driver.run_input_thread, daemon=True)

    def keys(self, timeout: float) -> list[str]:
        found = []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                message = self.events.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                break
            if isinstance(message, events.Key):
                found.append(message.key)
        return found

    def close(self) -> None:
        self.driver.close()
        os.close(self.read_end)
        os.close(self.write_end)
        self.loop.close()


@pytest.fixture
def collecting() -> Any:
    reader = _Collecting()
    reader.thread.start()
    yield reader
    reader.driver.exit_event.set()
    reader.thread.join(5)
    reader.close()


def test_keys_and_a_lone_escape_arrive_and_a_stop_ends_a_blocked_thread(collecting: _Collecting) -> None:
    os.write(collecting.write_end, b"q")
    assert collecting.keys(1.0) == ["q"]
    os.write(collecting.write_end, b"\x1b")  # Esc alone: a key once ESCDELAY has passed with nothing after it
    assert collecting.keys(1.0) == ["escape"]
    time.sleep(QUIET_S + 2 * POLL_S)  # quiet: the thread now blocks with no timeout
    started = time.monotonic()
    collecting.driver.exit_event.set()
    collecting.thread.join(5)
    assert not collecting.thread.is_alive() and time.monotonic() - started < 1.0


def test_a_quiet_keyboard_wakes_the_thread_no_more(collecting: _Collecting) -> None:
    time.sleep(QUIET_S + 2 * POLL_S)
    tid = collecting.thread.native_id
    status = f"/proc/self/task/{tid}/status"
    if not os.path.exists(status):
        pytest.skip("no /proc task status here (not Linux)")

    def wakeups() -> int:
        with open(status) as file:
            return next(int(line.split()[1]) for line in file if line.startswith("voluntary_ctxt_switches"))

    before = wakeups()
    time.sleep(1.0)
    assert wakeups() - before <= 1  # Textual's own thread: 10 a second
