"""``rocmtui export``: scraped over HTTP on 127.0.0.1 and parsed with prometheus_client's own parser.

The GPU readings are the real NVML samples of the H200 run, replayed; the runs are copies of that run
folder, made live (its lock held), lost (live status, nobody holds the lock) or finished.
"""

from __future__ import annotations

import dataclasses
import json
import socket
import threading
from pathlib import Path

import pytest
from export_runs import H200, copy_run, one, scrape

from rocmtui.base.text import plain
from rocmtui.cli.main import main
from rocmtui.export.metrics_server import serve
from rocmtui.gpu.replay import ReplaySource
from rocmtui.run.lock import RunLock


@pytest.fixture
def h200() -> ReplaySource:
    source = ReplaySource.from_jsonl(H200 / "gpu.jsonl")
    for _ in range(8):  # mid-run: the GPU under load
        source.step()
    return source


@pytest.fixture
def runs(tmp_path: Path):
    runs = tmp_path / "runs"
    live = copy_run(runs, "20261201-071828-cifar10-fastnet", lines=12, state="running")
    copy_run(runs, "20261130-090000-cifar10-fastnet", lines=12, state="running")  # nobody holds it: lost
    copy_run(runs, "20261129-090000-cifar10-fastnet", lines=23, state="finished")
    lock = RunLock.acquire(live)
    yield runs
    lock.release()


def test_gpu_metrics_carry_base_units_and_labels(h200, runs) -> None:
    endpoint = serve(lambda: h200.latest, host="127.0.0.1", port=0, runs_dir=runs, hostname="box")
    try:
        families = scrape(endpoint.port)
    finally:
        endpoint.close()
    gpu = h200.latest.gpus[0]
    labels = {"gpu": "0", "name": "NVIDIA H200", "hostname": "box"}
    assert one(families, "rocmtui_gpu_utilization_ratio", **labels) == pytest.approx(gpu.utilization_pct / 100)
    assert one(families, "rocmtui_gpu_memory_used_bytes", **labels) == gpu.memory_used_bytes
    assert one(families, "rocmtui_gpu_memory_total_bytes", **labels) == 150754820096
    assert one(families, "rocmtui_gpu_power_watts", **labels) == pytest.approx(gpu.power_w)
    assert one(families, "rocmtui_gpu_power_limit_watts", **labels) == 700.0
    assert one(families, "rocmtui_gpu_graphics_clock_hertz", **labels) == pytest.approx(gpu.sclk_mhz * 1e6)
    assert one(families, "rocmtui_gpu_memory_clock_hertz", **labels) == pytest.approx(3201e6)
    assert one(families, "rocmtui_gpu_temperature_celsius", sensor="gpu", **labels) == dict(gpu.temperatures_c)["gpu"]
    assert one(families, "rocmtui_gpu_up", **labels) == 1.0
    assert "rocmtui_gpu_fan_speed_rpm" not in families or not families["rocmtui_gpu_fan_speed_rpm"]  # N/A: absent
    assert one(families, "rocmtui_host_memory_total_bytes", hostname="box") == 135128870912
    assert one(families, "rocmtui_sample_timestamp_seconds", hostname="box") == h200.latest.timestamp
    info = one(families, "rocmtui_exporter_info", backend="nvml", hostname="box")
    assert info == 1.0


def test_live_and_lost_runs_are_exported_and_finished_ones_are_not(h200, runs) -> None:
    copy_run(runs, "20261203-090000-cifar10-fastnet", lines=23, state="finished")  # the newest: read past, each scrape
    endpoint = serve(lambda: h200.latest, host="127.0.0.1", port=0, runs_dir=runs, hostname="box")
    try:
        families = scrape(endpoint.port)
        again = scrape(endpoint.port)  # the second scrape reads from the cached tails: same values
    finally:
        endpoint.close()
    live = {"run": "20261201-071828-cifar10-fastnet", "name": "cifar10 fastnet"}
    assert one(families, "rocmtui_run_state", state="running", **live) == 1.0
    assert one(families, "rocmtui_run_state", state="paused", **live) == 0.0
    lost = {"run": "20261130-090000-cifar10-fastnet"}
    assert one(families, "rocmtui_run_state", state="lost", **lost) == 1.0
    runs_seen = {s.labels["run"] for s in families["rocmtui_run_state"]}
    assert "20261129-090000-cifar10-fastnet" not in runs_seen
    assert one(families, "rocmtui_run_epochs_completed", **live) == 4
    assert one(families, "rocmtui_run_epochs", **live) == 10
    assert one(families, "rocmtui_run_best_accuracy_ratio", **live) == 0.8
    stream = [json.loads(line) for line in (H200 / "metrics.jsonl").read_text().splitlines()[:12]]
    last_steps = [e for e in stream if e.get("event") == "StepsCompleted"][-1]
    assert one(families, "rocmtui_run_loss", **live) == pytest.approx(last_steps["losses"][-1])
    assert one(families, "rocmtui_run_images_per_second", **live) == pytest.approx(last_steps["images_per_s"])
    assert one(families, "rocmtui_run_step", **live) == last_steps["step"]
    last_epoch = [e for e in stream if e.get("event") == "EpochCompleted"][-1]
    assert one(families, "rocmtui_run_test_accuracy_ratio", **live) == pytest.approx(last_epoch["test_acc"])
    assert one(again, "rocmtui_run_loss", **live) == one(families, "rocmtui_run_loss", **live)
    for scraped in (families, again):
        assert {s.labels["run"] for s in scraped["rocmtui_run_state"]} == {live["run"], lost["run"]}


def test_a_live_run_of_a_newer_format_is_exported_by_its_status_and_the_scrape_goes_on(h200, runs) -> None:
    newer = copy_run(runs, "20261202-090000-cifar10-fastnet", lines=12, state="running")
    stream = (newer / "metrics.jsonl").read_text().splitlines()
    stream[0] = json.dumps({"seq": 0, "format": "rocmtui-events", "version": 99})
    (newer / "metrics.jsonl").write_text("\n".join(stream) + "\n")
    lock = RunLock.acquire(newer)
    endpoint = serve(lambda: h200.latest, host="127.0.0.1", port=0, runs_dir=runs, hostname="box")
    try:
        families = scrape(endpoint.port)  # an HTTP 500 raises here
    finally:
        endpoint.close()
        lock.release()
    assert one(families, "rocmtui_run_state", state="running", run=newer.name) == 1.0
    assert one(families, "rocmtui_run_epochs_completed", run=newer.name) == 4  # from its status
    assert not [s for s in families["rocmtui_run_step"] if s.labels["run"] == newer.name]  # its stream: unread
    live = {"run": "20261201-071828-cifar10-fastnet"}
    assert one(families, "rocmtui_run_step", **live) == 245
    assert one(families, "rocmtui_gpu_up", gpu="0") == 1.0


def test_nothing_is_exported_before_the_first_sample(tmp_path) -> None:
    endpoint = serve(lambda: None, host="127.0.0.1", port=0, runs_dir=tmp_path, hostname="box")
    try:
        families = scrape(endpoint.port)
    finally:
        endpoint.close()
    assert "rocmtui_gpu_utilization_ratio" not in families
    assert one(families, "rocmtui_exporter_info", backend="none") == 1.0


def test_uuid_and_bus_id_labels_where_the_sample_has_them(h200) -> None:
    """Two GPUs: one whose backend read its identity, one whose did not (the label is then empty)."""
    gpu = h200.latest.gpus[0]
    identified = dataclasses.replace(gpu, uuid="GPU-5d3e7a10-1b2c", pci_bus_id="00000000:1B:00.0")
    anonymous = dataclasses.replace(gpu, index=1)
    sample = dataclasses.replace(h200.latest, gpus=(identified, anonymous))
    endpoint = serve(lambda: sample, host="127.0.0.1", port=0, runs_dir=None, hostname="box")
    try:
        families = scrape(endpoint.port)
    finally:
        endpoint.close()
    labels = {"gpu": "0", "uuid": "GPU-5d3e7a10-1b2c", "pci_bus_id": "00000000:1B:00.0", "hostname": "box"}
    assert one(families, "rocmtui_gpu_up", **labels) == 1.0
    assert one(families, "rocmtui_gpu_power_watts", **labels) == pytest.approx(gpu.power_w)
    assert one(families, "rocmtui_gpu_temperature_celsius", sensor="gpu", **labels) == dict(gpu.temperatures_c)["gpu"]
    assert one(families, "rocmtui_gpu_up", gpu="1", uuid="", pci_bus_id="") == 1.0


def test_the_exporter_listens_on_the_port_asked_and_names_this_machine_by_default(h200) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    endpoint = serve(lambda: h200.latest, host="127.0.0.1", port=port, runs_dir=None)
    try:
        assert endpoint.port == port
        families = scrape(port)
    finally:
        endpoint.close()
    assert one(families, "rocmtui_exporter_info", backend="nvml", hostname=socket.gethostname()) == 1.0


def test_export_command_warns_beyond_localhost_and_refuses_a_taken_port(capsys, monkeypatch) -> None:
    from rocmtui.cli import export_command
    from rocmtui.gpu import detect

    monkeypatch.setattr(detect, "open_sampler", lambda config: ReplaySource([]))
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    try:
        assert main(["export", "--port", str(taken.getsockname()[1]), "--backend", "host"]) == 2
    finally:
        taken.close()
    assert "cannot listen on 127.0.0.1" in capsys.readouterr().err
    stop = threading.Event()
    stop.set()
    args = main.__globals__["build_parser"]().parse_args(["export", "--host", "0.0.0.0", "--port", "0"])
    assert export_command.run_export(args, stop) == 0
    err = capsys.readouterr().err
    assert "no authentication" in err.splitlines()[0]


def test_a_live_run_of_several_nodes_exports_each_rank_labelled_with_its_node_and_host(h200, runs) -> None:
    import time

    from rocmtui.run.rank_streams import RankBeat, RankProgress, RankStarted, RankWriter

    live = runs / "20261201-071828-cifar10-fastnet"
    now = time.time()
    long_host = "b\x1b]52;c;x\x07" + "y" * 100
    for rank, (node, host, busy) in enumerate([(0, "a", 0.30), (0, "a", 0.31), (1, long_host, 0.50)]):
        writer = RankWriter(live, rank)
        writer.write(RankStarted(rank, 3, 100 + rank, host, "cuda:0", node_rank=node, nodes=2, wall=now))
        for step in (10, 20, 30):
            writer.write(RankProgress(rank, 0, step, 500.0, 1.0, step_s=0.5, busy_s=busy, wall=now))
        writer.write(RankBeat(rank, 30, now))
        writer.close()
    endpoint = serve(lambda: h200.latest, host="127.0.0.1", port=0, runs_dir=runs, hostname="box")
    try:
        families = scrape(endpoint.port)
    finally:
        endpoint.close()
    run = {"run": live.name, "name": "cifar10 fastnet"}
    assert one(families, "rocmtui_rank_step", node="1", rank="2", **run) == 30
    assert one(families, "rocmtui_rank_busy_seconds", node="0", rank="1", rank_host="a", **run) == pytest.approx(0.31)
    assert one(families, "rocmtui_rank_step_seconds", node="0", rank="0", **run) == pytest.approx(0.5)
    assert one(families, "rocmtui_rank_state", rank="2", state="straggler", **run) == 1.0
    assert one(families, "rocmtui_rank_state", rank="0", state="running", **run) == 1.0
    assert one(families, "rocmtui_rank_state", rank="0", state="straggler", **run) == 0.0  # one state a rank
    assert one(families, "rocmtui_rank_state", rank="2", state="running", **run) == 0.0
    hosts = {s.labels["rank_host"] for s in families["rocmtui_rank_step"]}
    assert hosts == {"a", plain(long_host, limit=64)}  # a host read from a rank's file: its escapes as text, cut
    assert plain(long_host, limit=64).startswith("b\\x1b]52;c;x\\x07yyy") and len(max(hosts, key=len)) == 64
    assert 0 <= one(families, "rocmtui_rank_heartbeat_age_seconds", rank="2", **run) < 60
    lost = {s.labels["run"] for s in families["rocmtui_rank_step"]}
    assert lost == {live.name}  # the runs without ranks export none


def test_the_gpu_a_runs_rank_uses_is_named_by_an_info_series(h200, runs) -> None:
    import time

    from rocmtui.gpu.sample import GpuProcess
    from rocmtui.run.rank_streams import RankStarted, RankWriter

    live = runs / "20261201-071828-cifar10-fastnet"
    writer = RankWriter(live, 1)
    writer.write(RankStarted(1, 2, 4242, socket.gethostname(), "cuda:1", node_rank=1, wall=time.time()))
    writer.close()
    elsewhere = RankWriter(live, 2)  # a rank of another host with the same pid: not this host's GPU
    elsewhere.write(RankStarted(2, 2, 777, "another-host", "cuda:0", node_rank=2, wall=time.time()))
    elsewhere.close()
    sample = dataclasses.replace(h200.latest, processes=(GpuProcess(0, 4242), GpuProcess(0, 777)))
    endpoint = serve(lambda: sample, host="127.0.0.1", port=0, runs_dir=runs, hostname="box")
    try:
        families = scrape(endpoint.port)
    finally:
        endpoint.close()
    info = families["rocmtui_gpu_run_info"]
    assert [(s.labels["gpu"], s.labels["run"], s.labels["rank"], s.labels["node"]) for s in info] == [
        ("0", live.name, "1", "1")
    ]
    assert info[0].labels["run_name"] == "cifar10 fastnet" and info[0].labels["hostname"] == "box"
