"""The non-blocking HTTP client under the scraper, against servers that answer with exact bytes: chunked answers
(Go's servers send large pages so), interim answers, answers that are not HTTP, the cap, and the bound on how many
are asked at once."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rocmtui.gpu.cluster.fetch import Connection, Fetcher, FetchError, Reply


@contextmanager
def answering(
    answer: Callable[[int], bytes],
    *,
    keep: bool = False,
    delay_s: float = 0.0,
    cuts: tuple[int, ...] = (),
    gap_s: float = 0.0,
) -> Iterator[dict[str, int]]:
    """A server on 127.0.0.1 that answers its n-th request with ``answer(n)`` exactly, then closes the connection
    (``keep``: waits for the next request on it); ``cuts``: where the answer is sent in parts, ``gap_s`` apart.
    Yields counts: requests, connections, most requests at once."""
    counts = {"requests": 0, "connections": 0, "at_once": 0, "port": 0}
    busy = [0]
    lock = threading.Lock()
    listener = socket.create_server(("127.0.0.1", 0), backlog=64)
    counts["port"] = listener.getsockname()[1]

    def serve(conn: socket.socket) -> None:
        with conn:
            while True:
                request = b""
                while b"\r\n\r\n" not in request:
                    part = conn.recv(65536)
                    if not part:
                        return
                    request += part
                with lock:
                    n = counts["requests"]
                    counts["requests"] += 1
                    busy[0] += 1
                    counts["at_once"] = max(counts["at_once"], busy[0])
                time.sleep(delay_s)
                with lock:
                    busy[0] -= 1
                data = answer(n)
                for start, stop in zip((0, *cuts), (*cuts, len(data)), strict=True):
                    conn.sendall(data[start:stop])
                    if stop < len(data):
                        time.sleep(gap_s)
                if not keep:
                    return

    def accept() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            counts["connections"] += 1
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield counts
    finally:
        listener.close()


def url(counts: dict[str, int]) -> str:
    return f"http://127.0.0.1:{counts['port']}/metrics"


def chunked(body: bytes, size: int) -> bytes:
    parts = [body[i : i + size] for i in range(0, len(body), size)]
    framed = b"".join(b"%x;ext=1\r\n%s\r\n" % (len(p), p) for p in parts)
    return b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + framed + b"0\r\nX-Trailer: 1\r\n\r\n"


PAGE = b"".join(b'DCGM_FI_DEV_GPU_UTIL{gpu="%d"} %d\n' % (i, i % 101) for i in range(3000))


def test_a_chunked_answer_is_read_whole_and_its_connection_kept() -> None:
    with answering(lambda n: chunked(PAGE[n:], 4096), keep=True) as counts:
        connection = Connection(url(counts))
        first, second = (connection.get(timeout_s=5, max_bytes=1 << 20) for _ in range(2))
        connection.close()
    assert (first.body, second.body) == (PAGE, PAGE[1:])
    assert (counts["requests"], counts["connections"]) == (2, 1)


def test_an_answer_in_parts_is_read_across_them() -> None:
    answer = chunked(PAGE, 4096)
    head = answer.index(b"\r\n\r\n")
    cuts = (head - 3, head + 6, head + 2000, len(answer) - 4)  # in the head, a chunk's size, its data, the end
    with answering(lambda _: answer, cuts=cuts, gap_s=0.02) as counts:
        assert Connection(url(counts)).get(timeout_s=5, max_bytes=1 << 20).body == PAGE


def test_an_answer_that_stops_halfway_times_out() -> None:
    answer = b"HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\nhalfhalf"
    with (
        answering(lambda _: answer, cuts=(len(answer) - 4,), gap_s=2) as counts,
        pytest.raises(FetchError, match=r"no whole answer within 0\.3 s"),
    ):
        Connection(url(counts)).get(timeout_s=0.3, max_bytes=1000)


def test_a_chunked_answer_over_the_cap_is_refused() -> None:
    with answering(lambda _: chunked(PAGE, 512)) as counts, pytest.raises(FetchError, match="larger than 10,000"):
        Connection(url(counts)).get(timeout_s=5, max_bytes=10_000)


def test_an_interim_answer_is_passed_over() -> None:
    answer = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
    with answering(lambda _: answer) as counts:
        assert Connection(url(counts)).get(timeout_s=5, max_bytes=100).body == b"ok"


def test_an_answer_without_a_length_ends_with_its_connection() -> None:
    with answering(lambda _: b"HTTP/1.0 200 OK\r\n\r\n" + PAGE) as counts:
        connection = Connection(url(counts))
        assert connection.get(timeout_s=5, max_bytes=1 << 20).body == PAGE
        assert connection.get(timeout_s=5, max_bytes=1 << 20).body == PAGE
    assert counts["connections"] == 2


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        (b"", "closed connection without response"),
        (b"SSH-2.0-OpenSSH_9.6\r\n\r\n", "not an HTTP answer"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "malformed Content-Length"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", "cut short"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "malformed chunk"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n", "malformed chunk"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", "not supported"),
        (b"HTTP/1.1 200 OK\r\nX: " + b"y" * 70_000, "headers larger than 64 KiB"),
        (b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n", "HTTP 404 Not Found"),
    ],
)
def test_an_answer_that_is_not_a_good_one_is_one_line(answer: bytes, problem: str) -> None:
    with answering(lambda _: answer) as counts, pytest.raises(FetchError, match=problem):
        Connection(url(counts)).get(timeout_s=5, max_bytes=1 << 20)


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=300) | st.builds(lambda b: b"HTTP/1.1 200 OK\r\n" + b, st.binary(max_size=300)))
def test_any_bytes_as_an_answer_give_a_body_or_one_line(answer: bytes) -> None:
    with answering(lambda _: answer) as counts:
        try:
            body = Connection(url(counts)).get(timeout_s=2, max_bytes=1000).body
        except FetchError as err:
            assert "\n" not in str(err)
        else:
            assert len(body) <= 1000


def test_at_most_max_parallel_are_asked_at_once_and_each_answers() -> None:
    answer = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
    with answering(lambda _: answer, delay_s=0.05) as counts:
        connections = [Connection(url(counts)) for _ in range(12)]
        got: dict[int, Reply | FetchError] = {}
        with Fetcher(timeout_s=5, max_bytes=100, max_parallel=3) as fetcher:
            left = fetcher.run(list(enumerate(connections)), got.setdefault)
    assert left == [] and sorted(got) == list(range(12))
    assert all(isinstance(r, Reply) for r in got.values())
    assert counts["at_once"] <= 3 and counts["requests"] == 12


def test_once_stopped_no_more_are_started() -> None:
    answer = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
    stop = threading.Event()
    with answering(lambda _: answer) as counts:
        connections = [Connection(url(counts)) for _ in range(4)]

        def first_stops(i: int, _: Reply | FetchError) -> None:
            stop.set()

        with Fetcher(timeout_s=5, max_bytes=100, max_parallel=1) as fetcher:
            left = fetcher.run(list(enumerate(connections)), first_stops, stop)
    assert left == [1, 2, 3] and counts["requests"] == 1


def blocking_polls(monkeypatch: pytest.MonkeyPatch) -> list[float | None]:
    """The timeouts of the polls a Fetcher waits in (a poll with timeout 0 does not wait)."""
    import selectors

    waits: list[float | None] = []

    class Counting(selectors.DefaultSelector):
        def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
            if timeout != 0:
                waits.append(timeout)
            return super().select(timeout)

    monkeypatch.setattr(selectors, "DefaultSelector", Counting)
    return waits


@pytest.mark.parametrize(("gather_s", "most_waits"), [(0.3, 2), (0.0, 8)])
def test_answers_that_come_apart_are_read_in_a_few_wakes(
    monkeypatch: pytest.MonkeyPatch, gather_s: float, most_waits: int
) -> None:
    """Eight answers 15 ms apart: gathered, the first wake waits for the others and reads them together."""

    def later(n: int) -> bytes:
        time.sleep(0.015 * n)
        return b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"

    waits = blocking_polls(monkeypatch)
    with answering(later, keep=True) as counts:
        connections = [Connection(url(counts)) for _ in range(8)]
        got: dict[int, Reply | FetchError] = {}
        with Fetcher(timeout_s=5, max_bytes=100, gather_s=gather_s) as fetcher:
            fetcher.run(list(enumerate(connections)), got.setdefault)
    assert sorted(got) == list(range(8)) and all(isinstance(r, Reply) for r in got.values())
    assert len(waits) <= most_waits
    if not gather_s:
        assert len(waits) >= 4  # each answer its own wake, but for two that came within one poll


def counted_registrations(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How often a Fetcher's selector registers, modifies and unregisters a socket."""
    import selectors

    calls = {"register": 0, "modify": 0, "unregister": 0}

    class Counting(selectors.DefaultSelector):
        def register(self, fileobj: Any, events: int, data: Any = None) -> selectors.SelectorKey:
            calls["register"] += 1
            return super().register(fileobj, events, data)

        def modify(self, fileobj: Any, events: int, data: Any = None) -> selectors.SelectorKey:
            calls["modify"] += 1
            return super().modify(fileobj, events, data)

        def unregister(self, fileobj: Any) -> selectors.SelectorKey:
            calls["unregister"] += 1
            return super().unregister(fileobj)

    monkeypatch.setattr(selectors, "DefaultSelector", Counting)
    return calls


def test_a_kept_connection_is_asked_again_without_registering_its_socket_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = counted_registrations(monkeypatch)
    answer = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
    with answering(lambda _: answer, keep=True) as counts, Fetcher(timeout_s=5, max_bytes=100) as fetcher:
        connections = [Connection(url(counts)) for _ in range(4)]
        registered = []
        for _ in range(3):
            got: dict[int, Reply | FetchError] = {}
            fetcher.run(list(enumerate(connections)), got.setdefault)
            assert sorted(got) == [0, 1, 2, 3] and all(isinstance(r, Reply) for r in got.values())
            registered.append(calls["register"])
        assert calls["unregister"] == 0
    assert counts["connections"] == 4 and counts["requests"] == 12
    assert registered == [4, 4, 4]  # once each, when it connected; asked again, nothing more
    assert calls["unregister"] == 4  # when the fetcher closed


def test_a_kept_connection_its_server_closes_while_idle_is_let_go_then_opened_anew() -> None:
    """The first host answers at once and closes its connection (without saying so); the second answers later:
    the closing is seen while the round waits for the second, and the next round asks the first on a new one."""
    answer = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
    with (
        answering(lambda _: answer) as closing,
        answering(lambda _: answer, keep=True, delay_s=0.3) as slow,
        Fetcher(timeout_s=5, max_bytes=100, gather_s=0) as fetcher,
    ):
        first, second = Connection(url(closing)), Connection(url(slow))
        got: dict[int, Reply | FetchError] = {}
        fetcher.run([(0, first), (1, second)], got.setdefault)
        assert all(isinstance(r, Reply) for r in got.values()) and len(got) == 2
        assert first._sock is None and first._fd == -1  # closed while the round waited for the second
        again: dict[int, Reply | FetchError] = {}
        fetcher.run([(0, first)], again.setdefault)
        assert isinstance(again[0], Reply) and bytes(again[0].raw) == b"ok"
    assert closing["connections"] == 2 and closing["requests"] == 2
