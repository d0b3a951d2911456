"""What the cluster view costs with many hosts: 256 fake dcgm-exporters of 8 GPUs each on 127.0.0.1.

One helper process answers on 256 ports (asyncio), each a dcgm-exporter page of 8 GPUs in the recorded T4
capture's format (tests/data/exporters/dcgm-exporter-t4.prom) with the host's name and a utilisation that
changes every ``--sample-every`` seconds (2: every round). Every page is made before the viewer starts (a cycle
of ``CYCLE`` samples, each new value differing from the last), as a real exporter serves the page it made at its
own collect: made on demand, the 256 pages of a new sample took the helper about 0.1 s of CPU on the same cores,
in the very moments the viewer was reading them. The viewer, ``rocmtui monitor --hostfile FILE
--interval 2``, runs in a pseudo-terminal
(scripts/monitor_cost.py's measurement): launch to first frame, launch until every GPU is counted on screen
(the summary's "GPUs 2048"), then CPU (% of one core, the viewer's process alone) and bytes drawn per second.

    python scripts/cluster_cost.py --seconds 30                 # the cluster screen at 80x24
    python scripts/cluster_cost.py --hosts 64 --size 120x40
    python scripts/cluster_cost.py --json-rounds 5              # the cost of rounds alone: --json, no screen
    python scripts/cluster_cost.py --fetch-rounds 30            # the fetches alone, in this process
    python scripts/cluster_cost.py --prometheus --seconds 30    # the same GPUs through a Prometheus's HTTP API
    python scripts/cluster_cost.py --source ../before           # another checkout's code (before and after)

``--prometheus``: one helper process answers ``/api/v1/query`` as Prometheus does, the viewer runs with
``--prometheus URL``. The answer is the recorded Prometheus 2.42 answer's dcgm-exporter series
(tests/data/exporters/prometheus-2.42-query.json) once per GPU of every host, renamed and re-indexed, with an
``up`` series a host, the utilisation new every ``--sample-every`` seconds; sent chunked in 2 KiB chunks, as Go's
net/http sends an answer written without a length (about 7 MB for 256 hosts of 8 GPUs).
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import hashlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
from monitor_cost import Tool, measure

T4 = Path(__file__).resolve().parents[1] / "tests" / "data" / "exporters" / "dcgm-exporter-t4.prom"
PROMETHEUS_ANSWER = T4.parent / "prometheus-2.42-query.json"
GO_CHUNK = 2048
"""The chunks Go's net/http sends an answer written without a Content-Length in (its bufferBeforeChunkingSize)."""


CYCLE = 8
"""Samples the fake exporters cycle through (all made before the viewer starts): sample ``tick`` serves the pages of
``tick % CYCLE``."""


def utilisation(host: int, gpu: int, tick: int) -> int:
    """A GPU's utilisation at ``tick``: pseudo-random, never the same as at the tick before (so every page changes
    each sample, the worst case)."""
    value = hashlib.blake2b(f"{host}-{gpu}-{tick % CYCLE}".encode(), digest_size=1).digest()[0] % 101
    before = hashlib.blake2b(f"{host}-{gpu}-{(tick - 1) % CYCLE}".encode(), digest_size=1).digest()[0] % 101
    return (value + 1) % 101 if value == before else value


@functools.cache
def _template() -> tuple[str, ...]:
    return tuple(T4.read_text().splitlines())


def page(host: int, gpus: int, tick: int) -> bytes:
    """Host ``host``'s page at ``tick`` (2 s steps): the T4 lines once per GPU, renamed and re-indexed."""
    lines = []
    for line in _template():
        for gpu in range(gpus):
            text = line.replace('gpu="0"', f'gpu="{gpu}"').replace("cp-bm14r7", f"node{host:03d}")
            text = text.replace("GPU-6d5c0ac5", f"GPU-{host:04x}{gpu:04x}").replace(
                'device="nvidia0"', f'device="nvidia{gpu}"'
            )
            if text.startswith("DCGM_FI_DEV_GPU_UTIL"):
                text = text.rsplit(" ", 1)[0] + f" {utilisation(host, gpu, tick)}"
            lines.append(text)
    return ("\n".join(lines) + "\n").encode()


async def serve(hosts: int, gpus: int, base: int, ready: Path, sample_every: float, *, close: bool) -> None:
    answers: dict[tuple[int, int], bytes] = {}
    """(host, tick % CYCLE) -> the whole answer, head and page, made before serving (see the module's note)."""
    for host in range(hosts):
        for tick in range(CYCLE):
            body = page(host, gpus, tick)
            head = (
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\n"
                f"Content-Length: {len(body)}\r\nConnection: {'close' if close else 'keep-alive'}\r\n\r\n"
            )
            answers[(host, tick)] = head.encode() + body

    def handler_for(host: int):  # noqa: ANN202
        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                while True:  # keep-alive, as the exporters' Go servers answer (--close: a connection a request)
                    await reader.readuntil(b"\r\n\r\n")
                    writer.write(answers[(host, int(time.time() / sample_every) % CYCLE)])
                    await writer.drain()
                    if close:
                        break
            except (asyncio.IncompleteReadError, ConnectionError):
                pass
            finally:
                writer.close()

        return handle

    for host in range(hosts):
        await asyncio.start_server(handler_for(host), "127.0.0.1", base + host, backlog=64)
    ready.write_text("ready")
    await asyncio.Event().wait()


def prometheus_answer(hosts: int, gpus: int, tick: int, when: float) -> bytes:
    """The query's answer at ``tick``, framed in chunks: the recorded answer's dcgm-exporter series for every GPU."""
    recorded = json.loads(PROMETHEUS_ANSWER.read_text())["data"]["result"]
    dcgm = [s for s in recorded if s["metric"]["instance"] == "127.0.0.1:19601" and s["metric"]["__name__"] != "up"]
    result = []
    for host in range(hosts):
        instance = f"node{host:03d}:9400"
        for gpu in range(gpus):
            for series in dcgm:
                metric = dict(series["metric"], gpu=str(gpu), device=f"nvidia{gpu}", Hostname=f"node{host:03d}",
                              UUID=f"GPU-{host:04x}{gpu:04x}", instance=instance)  # fmt: skip
                value = utilisation(host, gpu, tick) if metric["__name__"] == "DCGM_FI_DEV_GPU_UTIL" else None
                result.append({"metric": metric, "value": [when, series["value"][1] if value is None else str(value)]})
        result.append({"metric": {"__name__": "up", "instance": instance, "job": "gpus"}, "value": [when, "1"]})
    body = json.dumps({"status": "success", "data": {"resultType": "vector", "result": result}},
                      separators=(",", ":")).encode()  # fmt: skip
    chunks = [body[at : at + GO_CHUNK] for at in range(0, len(body), GO_CHUNK)]
    return b"".join(b"%x\r\n%s\r\n" % (len(c), c) for c in chunks) + b"0\r\n\r\n"


async def serve_prometheus(hosts: int, gpus: int, port: int, ready: Path, sample_every: float) -> None:
    made = time.time()
    answers = [prometheus_answer(hosts, gpus, tick, round(made + tick * sample_every, 3)) for tick in range(CYCLE)]
    """The answer of each sample of the cycle, made before serving (see the module's note)."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:  # keep-alive, as Prometheus's Go server answers
                request = await reader.readuntil(b"\r\n\r\n")
                if not request.startswith(b"GET /api/v1/query?"):
                    writer.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
                    continue
                body = answers[int(time.time() / sample_every) % CYCLE]
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
                writer.write(body)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    await asyncio.start_server(handle, "127.0.0.1", port)
    ready.write_text("ready")
    await asyncio.Event().wait()


def free_base(hosts: int) -> int:
    """A first port with ``hosts`` free ports after it."""
    for base in range(20000, 60000, 1000):
        try:
            for port in range(base, base + hosts):
                with socket.socket() as s:
                    s.bind(("127.0.0.1", port))
            return base
        except OSError:
            continue
    raise SystemExit("no run of free ports found")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=256)
    parser.add_argument("--gpus", type=int, default=8)
    parser.add_argument("--interval", type=float, default=2.0)
    parser.add_argument("--seconds", type=float, default=30.0, help="measured window after settling")
    parser.add_argument("--settle", type=float, default=6.0, help="seconds ignored after the first frame")
    parser.add_argument("--size", default="80x24")
    parser.add_argument(
        "--sample-every", type=float, default=2.0,
        help="seconds between the fake exporters' new values (default 2: every round, the worst case; "
        "dcgm-exporter's own default is 30)",
    )  # fmt: skip
    parser.add_argument("--close", action="store_true",
                        help="the fake exporters close each connection after one answer (default: keep-alive, "
                        "as dcgm-exporter's and the AMD exporter's Go servers do)")  # fmt: skip
    parser.add_argument("--json-rounds", type=int, default=0, help="instead: time N rounds of --json, no screen")
    parser.add_argument("--fetch-rounds", type=int, default=0,
                        help="instead: time N rounds of the fetches alone (every host asked once, nothing read), "
                        "in this process: the thread's CPU a round")  # fmt: skip
    parser.add_argument("--prometheus", action="store_true",
                        help="the GPUs through one fake Prometheus's HTTP API (monitor --prometheus)")  # fmt: skip
    parser.add_argument("--source", default=None,
                        help="run the rocmtui found in this folder (another checkout; default: installed)")  # fmt: skip
    parser.add_argument("--serve", nargs=2, metavar=("BASE", "READY"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        base, ready = int(args.serve[0]), Path(args.serve[1])
        if args.prometheus:
            asyncio.run(serve_prometheus(args.hosts, args.gpus, base, ready, args.sample_every))
        else:
            asyncio.run(serve(args.hosts, args.gpus, base, ready, args.sample_every, close=args.close))
        return 0
    base = free_base(1 if args.prometheus else args.hosts)
    with tempfile.TemporaryDirectory() as tmp:
        ready = Path(tmp) / "ready"
        serve_args = ["--hosts", str(args.hosts), "--gpus", str(args.gpus), "--sample-every", str(args.sample_every),
                      *(["--close"] if args.close else []), *(["--prometheus"] if args.prometheus else [])]  # fmt: skip
        server = subprocess.Popen([sys.executable, __file__, *serve_args, "--serve", str(base), str(ready)])
        try:
            while not ready.exists():
                if server.poll() is not None:
                    raise SystemExit("the fake exporters did not start")
                time.sleep(0.05)
            print(f"{os.uname().nodename}, {psutil.cpu_count()} CPUs, {time.strftime('%Y-%m-%d %H:%M %Z')}")
            if args.prometheus:
                extra = ["--prometheus", f"http://127.0.0.1:{base}", "--interval", f"{args.interval:g}"]
                print(f"{args.hosts} hosts x {args.gpus} GPUs through a fake Prometheus API on 127.0.0.1:{base}, "
                      f"new values every {args.sample_every:g} s")  # fmt: skip
            else:
                hostfile = Path(tmp) / "hosts"
                hostfile.write_text("".join(f"127.0.0.1:{base + i}\n" for i in range(args.hosts)))
                extra = ["--hostfile", str(hostfile), "--interval", f"{args.interval:g}"]
                print(f"{args.hosts} hosts x {args.gpus} GPUs on 127.0.0.1:{base}-{base + args.hosts - 1}, "
                      f"new values every {args.sample_every:g} s, "
                      f"{'a connection a request' if args.close else 'connections kept alive'}")  # fmt: skip
            if args.json_rounds:
                return json_rounds(extra, args.json_rounds)
            if args.fetch_rounds:
                return fetch_rounds(base, args.hosts, args.fetch_rounds, args.interval, args.source)
            cols, rows = (int(v) for v in args.size.split("x"))
            tool = Tool("rocmtui", b"Quit", 'the key bar\'s "q Quit"', f"GPUs {args.hosts * args.gpus}".encode(),
                        f'the summary\'s "GPUs {args.hosts * args.gpus}": every host read once')  # fmt: skip
            options = argparse.Namespace(replay=None, source=args.source, frame_timeout=30.0, settle=args.settle,
                                         seconds=args.seconds, rss_every=0.0)  # fmt: skip
            result = measure(options, tool, cols, rows, extra)
            return 1 if result.error else 0
        finally:
            server.terminate()
            server.wait()


def fetch_rounds(base: int, hosts: int, rounds: int, interval: float, source: str | None) -> int:
    """``Fetcher.run`` over every host ``rounds`` times, ``interval`` apart (after one round that connects), on
    kept connections: the thread's CPU a round (min, quartiles), as the viewer's scraping thread spends it.
    ``source``: the rocmtui of that folder is imported instead."""
    if source:
        sys.path.insert(0, os.path.abspath(source))
    from rocmtui.gpu.cluster.fetch import Connection, Fetcher, FetchError, Reply
    from rocmtui.gpu.cluster.scrape import ACCEPT, DEFAULT_TIMEOUT_S, MAX_PAGE_BYTES

    connections = [Connection(f"http://127.0.0.1:{base + i}/metrics", accept=ACCEPT) for i in range(hosts)]
    failed: list[str] = []

    def answered(_: int, got: Reply | FetchError) -> None:
        if isinstance(got, FetchError):
            failed.append(str(got))

    spent = []
    fetcher = Fetcher(timeout_s=DEFAULT_TIMEOUT_S, max_bytes=MAX_PAGE_BYTES)
    for n in range(rounds + 1):
        time.sleep(interval)
        started = time.thread_time()
        fetcher.run(list(enumerate(connections)), answered)
        if n:
            spent.append(time.thread_time() - started)
    getattr(fetcher, "close", lambda: None)()  # an older checkout's Fetcher (--source) may have none
    for connection in connections:
        connection.close()
    spent.sort()
    q1, median, q3 = (f"{spent[len(spent) * k // 4] * 1000:.1f}" for k in (1, 2, 3))
    print(f"fetches of {hosts} hosts, {rounds} rounds {interval:g} s apart: thread CPU a round "
          f"min {spent[0] * 1000:.1f} ms, quartiles {q1} / {median} / {q3} ms; failed fetches: {len(failed)}"
          + (f" ({failed[0]})" if failed else ""))  # fmt: skip
    return 1 if failed else 0


def json_rounds(extra: list[str], rounds: int) -> int:
    """``monitor --json --count N``: CPU of the process and wall time per round (no screen)."""
    argv = [sys.executable, "-m", "rocmtui", "monitor", *extra, "--json", "--count", str(rounds)]
    with tempfile.TemporaryFile() as out:
        started = time.perf_counter()
        process = psutil.Popen(argv, stdout=out, stderr=subprocess.PIPE)
        cpu = 0.0
        while process.poll() is None:
            try:
                times = process.cpu_times()
                cpu = times.user + times.system
            except psutil.NoSuchProcess:
                break
            time.sleep(0.05)
        wall = time.perf_counter() - started
        _, err = process.communicate()
        out.seek(0)
        lines = out.read().decode().splitlines()
    down = sum(line.count('"up":false') for line in lines)
    print(f"{len(lines)} rounds in {wall:.1f} s, CPU {cpu:.2f} s (about {cpu / max(1, len(lines)):.3f} s a round, "
          f"start-up included), hosts down over all rounds: {down}"
          + (f"; stderr: {err.decode()[-300:]}" if process.returncode else ""))  # fmt: skip
    return process.returncode or 0


if __name__ == "__main__":
    raise SystemExit(main())
