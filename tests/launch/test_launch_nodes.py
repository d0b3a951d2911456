"""A job of several nodes (``--nnodes``): separate launchers on 127.0.0.1 join one c10d rendezvous port, gloo on
the CPU, and train into one job folder. A rank slowed is named the straggler, a rank stopped with SIGSTOP is named
stalled, a node killed with SIGKILL ends the job with that node named and nothing written lost, and a stop asked
of the folder (as ``watch`` and ``stop`` ask it) ends every node."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from waiting import wait_for

from rocmtui.events import RunFailed, RunFinished, RunStarted
from rocmtui.run.format import EVENTS
from rocmtui.run.rank_health import HealthRules, RankRow, rank_rows
from rocmtui.run.rank_streams import RankTail
from rocmtui.run.status import read_status
from rocmtui.run.stream import read_events

pytestmark = pytest.mark.slow  # functional tier: real launchers and ranks, one process each and its launcher

REPO = Path(__file__).resolve().parents[2]


RULES = HealthRules()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Job:
    """``nodes`` launchers of one job, each in a process group of its own (a node to kill whole)."""

    def __init__(
        self,
        tmp_path: Path,
        nodes: int,
        *args: str,
        endpoint: str = "",
        within: Sequence[Sequence[str]] = (),
        apart: bool = False,
        static_ranks: bool = False,
    ) -> None:
        """``within``: each node's command prefix (``ip netns exec NS ...``); none: all on this host's loopback."""
        self.runs = tmp_path / "runs"
        self.env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "OMP_NUM_THREADS": "1"}
        endpoint = endpoint or f"127.0.0.1:{free_port()}"
        command = [
            sys.executable, "-m", "rocmtui", "train", "cifar", "--headless", "--device", "cpu",
            "--runs-dir", str(self.runs), "--nnodes", str(nodes), "--rdzv-endpoint", endpoint,
            "--rdzv-id", "job7", "--batch-size", "64", *args,
        ]  # fmt: skip
        prefixes = list(within) or [[] for _ in range(nodes)]
        if static_ranks:  # each node's place fixed (--node-rank): node 0 hosts the rendezvous
            prefixes = [[*prefix, *command, "--node-rank", str(n)] for n, prefix in enumerate(prefixes)]
            command = []
        if apart:  # each node its own runs folder, as nodes that share no file system
            self.nodes = [
                self._node([*prefix, *command, "--runs-dir", str(self.runs / f"node{n}")])
                for n, prefix in enumerate(prefixes)
            ]
        else:
            self.nodes = [self._node([*prefix, *command]) for prefix in prefixes]
        self.folder = self.runs / "job-job7"

    def _node(self, command: list[str]) -> subprocess.Popen[str]:
        return subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO, env=self.env,
            start_new_session=True,
        )  # fmt: skip

    def rows(self, rules: HealthRules = RULES) -> dict[int, RankRow]:
        tail = RankTail(self.folder)
        tail.poll()
        tail.close()
        return {row.rank: row for row in rank_rows(tail.views.values(), time.time(), rules, live=True)}

    def pid_of(self, rank: int) -> int:
        wait_for(lambda: rank in self.rows() and self.rows()[rank].pid, 180, f"rank {rank}'s start", 0.5)
        pid = self.rows()[rank].pid
        assert pid is not None
        return pid

    def training(self) -> None:
        """Until every rank has reported steps."""
        every_rank_steps = lambda: len(rows := self.rows()) == self.world and all(r.step > 2 for r in rows.values())  # noqa: E731
        wait_for(every_rank_steps, 240, "every rank's steps", 0.5)

    @property
    def world(self) -> int:
        return len(self.nodes)

    def finish(self, timeout: float = 240) -> list[tuple[int, str, str]]:
        said = [p.communicate(timeout=timeout) for p in self.nodes]
        return [(p.returncode, out, err) for p, (out, err) in zip(self.nodes, said, strict=True)]

    def kill(self) -> None:
        for proc in self.nodes:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


@pytest.fixture
def job(tmp_path: Path):
    jobs: list[Job] = []

    def start(nodes: int, *args: str, **where: Any) -> Job:
        jobs.append(Job(tmp_path, nodes, *args, **where))
        return jobs[-1]

    yield start
    for started in jobs:
        started.kill()


def runs_ranks(job: Job) -> list[dict[str, object]]:
    out = subprocess.run(
        [sys.executable, "-m", "rocmtui", "runs", str(job.folder), "--ranks", "--json"],
        capture_output=True, text=True, cwd=REPO, env=job.env, timeout=60, check=True,
    )  # fmt: skip
    return json.loads(out.stdout)


def test_two_nodes_train_one_job_into_one_folder_and_every_rank_is_listed(job) -> None:
    started = job(2, "--epochs", "1")
    results = started.finish()
    assert [code for code, _, _ in results] == [0, 0], results
    assert all("completed: 1 epoch(s)" in out for _, out, _ in results)
    assert [p.name for p in started.runs.iterdir()] == ["job-job7"]
    events = read_events(started.folder)
    run_started = next(e for e in events if isinstance(e, RunStarted))
    assert run_started.world_size == 2 and isinstance(events[-1], RunFinished)
    ranks = runs_ranks(started)
    assert [(r["rank"], r["node"], r["state"]) for r in ranks] == [(0, 0, "ended"), (1, 1, "ended")]
    assert all(r["step"] == events[-1].epochs_completed * run_started.steps_per_epoch for r in ranks)
    assert len({r["pid"] for r in ranks}) == 2 and all(r["busy_s_median"] for r in ranks)


def slow_down(pid: int, stop: threading.Event) -> None:
    """Hold ``pid`` stopped for 0.3 s of every 0.5 s: a rank on a busy or throttled machine."""
    while not stop.is_set():
        os.kill(pid, signal.SIGSTOP)
        time.sleep(0.3)
        os.kill(pid, signal.SIGCONT)
        time.sleep(0.2)


def test_a_slowed_rank_is_the_straggler_and_a_stop_asked_of_the_folder_ends_every_node(job) -> None:
    started = job(3, "--epochs", "50")
    started.training()
    slowed = started.pid_of(2)
    stop = threading.Event()
    slower = threading.Thread(target=slow_down, args=(slowed, stop), daemon=True)
    slower.start()
    try:
        wait_for(lambda: started.rows()[2].state == "straggler", 90, "rank 2 named the straggler", 0.5)
        others = started.rows()
        assert others[0].state == others[1].state == "running"
        assert others[2].message.endswith("slower than the median rank")
    finally:
        stop.set()
        slower.join()
        os.kill(slowed, signal.SIGCONT)
    subprocess.run(
        [sys.executable, "-m", "rocmtui", "stop", str(started.folder), "--grace", "60"],
        cwd=REPO, env=started.env, timeout=120, check=True, capture_output=True,
    )  # fmt: skip
    results = started.finish()
    assert [code for code, _, _ in results] == [0, 0, 0], results
    events = read_events(started.folder)
    assert isinstance(events[-1], RunFinished) and events[-1].reason == "stopped"
    assert (started.folder / "checkpoint-last.pt").is_file()


def test_a_stopped_rank_is_named_stalled_and_a_killed_node_ends_the_job_named(job) -> None:
    started = job(2, "--epochs", "50")
    started.training()
    frozen = started.pid_of(1)
    os.kill(frozen, signal.SIGSTOP)
    frozen_at = time.monotonic()
    rules = HealthRules(stall_s=3.0)
    wait_for(lambda: started.rows(rules)[1].state == "stalled", 30, "rank 1 named stalled", 0.2)
    assert time.monotonic() - frozen_at < 3.0 + 2 * 2.0 + 2  # the set time, a beat's period, the poll
    row = started.rows(rules)[1]
    assert row.host == socket.gethostname() and row.node == 1 and f"since step {row.step:,}" in row.message
    assert started.rows(rules)[0].state == "running"  # it waits for rank 1, and says so with its heartbeat
    written = (started.folder / EVENTS).read_bytes()
    os.killpg(started.nodes[1].pid, signal.SIGKILL)  # node 1 gone, as a machine that lost power
    started.nodes[1].wait()
    out, err = started.nodes[0].communicate(timeout=240)
    assert started.nodes[0].returncode != 0
    events = read_events(started.folder)
    failed = events[-1]
    assert isinstance(failed, RunFailed), events[-3:]
    assert f"node 1 ({socket.gethostname()}, rank 1) stopped answering" in failed.message
    assert "node 1" in out + err
    assert (started.folder / EVENTS).read_bytes().startswith(written)  # nothing written before is lost
    status = read_status(started.folder)
    assert status is not None and status.state == "failed"


@pytest.fixture
def two_namespaces() -> Iterator[tuple[list[list[str]], str]]:
    """Two network namespaces joined by a veth pair (10.77.N.1 and .2): each node's command prefix, and the
    first's address. Skipped where the test cannot make them (not root, no ``ip``, no network namespaces)."""
    tag = f"{os.getpid() % 100_000}"
    names, links = [f"rt{tag}a", f"rt{tag}b"], [f"rt{tag}x", f"rt{tag}y"]
    subnet = f"10.77.{os.getpid() % 250}"
    steps = [
        *(["ip", "netns", "add", name] for name in names),
        ["ip", "link", "add", links[0], "type", "veth", "peer", "name", links[1]],
    ]
    for n, (name, link) in enumerate(zip(names, links, strict=True)):
        steps += [
            ["ip", "link", "set", link, "netns", name],
            ["ip", "-n", name, "addr", "add", f"{subnet}.{n + 1}/24", "dev", link],
            ["ip", "-n", name, "link", "set", link, "up"],
            ["ip", "-n", name, "link", "set", "lo", "up"],
        ]
    try:
        for step in steps:
            made = subprocess.run(step, check=False, capture_output=True, text=True, timeout=30)
            if made.returncode != 0:
                pytest.skip(f"cannot make network namespaces here: {' '.join(step)}: {made.stderr.strip()}")
        prefixes = [
            ["ip", "netns", "exec", name, "env", f"GLOO_SOCKET_IFNAME={link}"]
            for name, link in zip(names, links, strict=True)
        ]
        yield prefixes, f"{subnet}.1"
    except FileNotFoundError:
        pytest.skip("cannot make network namespaces here: no ip command")
    finally:
        for name in names:
            subprocess.run(["ip", "netns", "del", name], check=False, capture_output=True, timeout=30)


def test_two_nodes_in_network_namespaces_of_their_own_rendezvous_across_a_veth_pair(job, two_namespaces) -> None:
    prefixes, address = two_namespaces
    started = job(2, "--epochs", "1", endpoint=f"{address}:{free_port()}", within=prefixes)
    results = started.finish()
    assert [code for code, _, _ in results] == [0, 0], results
    ranks = runs_ranks(started)
    assert [(r["rank"], r["node"], r["state"]) for r in ranks] == [(0, 0, "ended"), (1, 1, "ended")]
    assert isinstance(read_events(started.folder)[-1], RunFinished)


def test_nodes_that_share_no_folder_keep_their_own_and_runs_ranks_joins_them(job) -> None:
    started = job(2, "--epochs", "1", apart=True)
    results = started.finish()
    assert [code for code, _, _ in results] == [0, 0], results
    folders = sorted(started.runs.glob("node*/job-job7"))
    assert len(folders) == 2
    with_stream = [f for f in folders if (f / EVENTS).exists()]
    assert len(with_stream) == 1  # rank 0's node
    [other] = [f for f in folders if f not in with_stream]
    elsewhere = [out for _, out, _ in results if "events are in rank 0's folder" in out]
    assert len(elsewhere) == 1 and "completed: 1 epoch(s)" in elsewhere[0]  # how the job ended, as its ranks know
    listed = subprocess.run(
        [sys.executable, "-m", "rocmtui", "runs", "--ranks", "--json", str(with_stream[0]), str(other)],
        capture_output=True, text=True, cwd=REPO, env=started.env, timeout=60, check=True,
    )  # fmt: skip
    ranks = json.loads(listed.stdout)
    assert [(r["rank"], r["node"], r["state"]) for r in ranks] == [(0, 0, "ended"), (1, 1, "ended")]


NO_SHARED_LOCK = """
# This "host" has a lock table of its own, as two NFS clients do: every flock here succeeds at once.
import fcntl
fcntl.flock = lambda fd, operation: None
"""


@pytest.fixture
def another_host(tmp_path: Path) -> list[str]:
    """A command prefix for a node that is another host as far as rocmtui can tell: its own host name (a UTS
    namespace) and no lock shared with this host's processes (``NO_SHARED_LOCK`` as its sitecustomize).
    Skipped where the test cannot make a UTS namespace (not root)."""
    if subprocess.run(["unshare", "--uts", "true"], check=False, capture_output=True).returncode != 0:
        pytest.skip("cannot make a UTS namespace here (unshare --uts)")
    site = tmp_path / "another-host"
    site.mkdir()
    (site / "sitecustomize.py").write_text(NO_SHARED_LOCK)
    rename = 'hostname rocmtui-node1 && exec "$@"'
    return ["unshare", "--uts", "sh", "-c", rename, "sh", "env", f"PYTHONPATH={site}", "GLOO_SOCKET_IFNAME=lo"]


def test_a_node_on_another_host_without_the_lock_follows_the_job_and_its_stop_ends_every_node(
    job, another_host: list[str]
) -> None:
    """The shared folder's rules without a shared lock: node 1 (another host name, every flock its own) follows
    the events rank 0 writes, and a stop asked from there ends both nodes with the checkpoint written."""
    here = ["env", "GLOO_SOCKET_IFNAME=lo"]
    started = job(2, "--epochs", "50", within=[here, another_host], static_ranks=True)
    started.training()
    assert started.rows()[1].host == "rocmtui-node1"
    stop = subprocess.run(
        [*another_host, sys.executable, "-m", "rocmtui", "stop", str(started.folder), "--grace", "60"],
        capture_output=True, text=True, cwd=REPO, env=started.env, timeout=120, check=False,
    )  # fmt: skip
    assert stop.returncode == 0, stop.stderr
    assert "stopped at epoch" in stop.stdout and "checkpoint saved" in stop.stdout
    results = started.finish()
    assert [code for code, _, _ in results] == [0, 0], results
    node1 = results[1][1]  # it followed the events rank 0 wrote, though it never saw the lock held
    assert "rocmtui: training simplecnn on cifar10" in node1 and "stopped: " in node1
    assert isinstance(read_events(started.folder)[-1], RunFinished)
