"""The cluster view against real processes on 127.0.0.1: a real ``rocmtui export`` (serving the live H200
run's recorded samples), two servers of the recorded dcgm-exporter and AMD exporter pages, and a real
Prometheus (Debian's ``prometheus``) scraping all three every second. ``monitor --json --count 1`` must give
back the values they serve, and a killed exporter must turn its host down without disturbing the others."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
from export_runs import H200, copy_run
from exporter_pages import EXPORTERS, free_port
from prometheus_client.parser import text_string_to_metric_families
from waiting import wait_for

from rocmtui.gpu.cluster.prom_query import PrometheusReader
from rocmtui.gpu.sample_codec import loads
from rocmtui.run.lock import RunLock

pytestmark = pytest.mark.slow
PROMETHEUS = Path("/usr/bin/prometheus")
PAGES = Path(__file__).resolve().parents[1] / "exporter_pages.py"
MIB = 1 << 20
LINES = (H200 / "gpu.jsonl").read_text().splitlines()[:10]
DCGM_PAGE = EXPORTERS / "dcgm-exporter-t4.prom"
AMD_PAGE = EXPORTERS / "amd-device-metrics-exporter-mi300x.prom"


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return b"gpu" in response.read().lower() or url.endswith("ready")
    except OSError:
        return False


class Cluster:
    """The exporters, started; their addresses and processes by name."""

    def __init__(self, stack: ExitStack, tmp_path: Path) -> None:
        self.stack = stack
        self.tmp_path = tmp_path
        self.address: dict[str, str] = {}
        self.process: dict[str, subprocess.Popen[bytes]] = {}

    def start(self, name: str, argv: list[str], port: int, ready_url: str | None = None) -> None:
        log = (self.tmp_path / f"{name}.log").open("wb")
        self.stack.callback(log.close)
        process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
        self.stack.callback(_end, process)
        self.address[name] = f"127.0.0.1:{port}"
        self.process[name] = process
        wait_for(lambda: answers(ready_url or f"http://127.0.0.1:{port}/metrics"), 30, f"{name} to answer")

    def kill(self, name: str) -> None:
        self.process[name].send_signal(signal.SIGKILL)
        self.process[name].wait()


def _end(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    runs = tmp_path / "runs"
    run_dir = copy_run(runs, "20261201-071828-cifar10-fastnet", lines=12, state="running")
    (run_dir / "gpu.jsonl").write_text("\n".join(LINES) + "\n")
    lock = RunLock.acquire(run_dir)  # live: the exporter serves its recorded samples
    with ExitStack() as stack:
        stack.callback(lock.release)
        found = Cluster(stack, tmp_path)
        port = free_port()
        export = [sys.executable, "-m", "rocmtui", "export", "--port", str(port), "--runs-dir", str(runs)]
        found.start("rocmtui", [*export, "--backend", "host"], port)
        for name, page in (("dcgm", DCGM_PAGE), ("amd", AMD_PAGE)):
            port = free_port()
            found.start(name, [sys.executable, str(PAGES), str(page), str(port)], port)
        yield found


def page_values(page: Path, metric: str) -> dict[str, float]:
    """``metric``'s value by GPU index (dcgm ``gpu``, AMD ``gpu_id``), read straight from the page."""
    values: dict[str, float] = {}
    for family in text_string_to_metric_families(page.read_text()):
        for sample in family.samples:
            if sample.name == metric:
                values[sample.labels.get("gpu") or sample.labels["gpu_id"]] = sample.value
    return values


def check_values(round_: dict, address: dict[str, str]) -> None:
    """Each host's GPUs carry the values its exporter serves."""
    hosts = {h["target"]: h for h in round_["hosts"]}
    for host in hosts.values():
        assert host["up"], host

    served = loads(LINES[-1]).gpus[0]  # rocmtui export: the run's newest recorded sample
    (gpu,) = hosts[address["rocmtui"]]["gpus"]
    assert (gpu["name"], gpu["uuid"], gpu["memory_used_bytes"], gpu["memory_total_bytes"]) == (
        served.name, served.uuid, served.memory_used_bytes, served.memory_total_bytes)  # fmt: skip
    assert gpu["power_w"] == served.power_w and gpu["temperatures_c"] == [list(t) for t in served.temperatures_c]
    assert gpu["utilization_pct"] == pytest.approx(served.utilization_pct)
    assert gpu["sclk_mhz"] == pytest.approx(served.sclk_mhz)

    (gpu,) = hosts[address["dcgm"]]["gpus"]
    assert gpu["utilization_pct"] == page_values(DCGM_PAGE, "DCGM_FI_DEV_GPU_UTIL")["0"]
    assert gpu["memory_used_bytes"] == page_values(DCGM_PAGE, "DCGM_FI_DEV_FB_USED")["0"] * MIB
    assert gpu["power_w"] == page_values(DCGM_PAGE, "DCGM_FI_DEV_POWER_USAGE")["0"]
    assert gpu["sclk_mhz"] == page_values(DCGM_PAGE, "DCGM_FI_DEV_SM_CLOCK")["0"]
    assert gpu["temperatures_c"] == [["gpu", page_values(DCGM_PAGE, "DCGM_FI_DEV_GPU_TEMP")["0"]]]

    amd = {str(g["index"]): g for g in hosts[address["amd"]]["gpus"]}
    assert set(amd) == {"0", "2"}
    for index, gpu in amd.items():
        assert gpu["utilization_pct"] == page_values(AMD_PAGE, "gpu_gfx_activity")[index]
        assert gpu["memory_used_bytes"] == page_values(AMD_PAGE, "gpu_used_vram")[index] * MIB
        assert gpu["memory_total_bytes"] == page_values(AMD_PAGE, "gpu_total_vram")[index] * MIB
        assert gpu["power_w"] == page_values(AMD_PAGE, "gpu_package_power")[index]
        assert dict(gpu["temperatures_c"])["junction"] == page_values(AMD_PAGE, "gpu_junction_temperature")[index]


def monitor(*args: str) -> subprocess.Popen[str]:
    argv = [sys.executable, "-m", "rocmtui", "monitor", *args, "--json"]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def one_round(*args: str) -> dict:
    process = monitor(*args, "--count", "1")
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    (line,) = out.splitlines()
    return json.loads(line)


def test_hosts_give_back_the_values_served(cluster: Cluster) -> None:
    check_values(one_round("--hosts", ",".join(cluster.address.values())), cluster.address)


def test_a_killed_exporter_is_down_within_two_rounds_and_the_others_stay_up(cluster: Cluster) -> None:
    process = monitor("--hosts", ",".join(cluster.address.values()), "--interval", "1")
    try:
        assert process.stdout is not None
        first = json.loads(process.stdout.readline())
        assert all(h["up"] for h in first["hosts"])
        cluster.kill("amd")
        rounds = [json.loads(process.stdout.readline()) for _ in range(2)]
    finally:
        process.terminate()
        process.communicate(timeout=30)
    amd = cluster.address["amd"]
    assert not next(h for h in rounds[1]["hosts"] if h["target"] == amd)["up"]
    down = next(h for h in rounds[1]["hosts"] if h["target"] == amd)
    assert down["error"].startswith("connection refused")
    for round_ in rounds:
        assert all(h["up"] and h["gpus"] for h in round_["hosts"] if h["target"] != amd)


@pytest.fixture
def prometheus(cluster: Cluster, tmp_path: Path) -> str:
    if not PROMETHEUS.is_file():
        pytest.skip("Debian's prometheus package is not installed (apt-get install prometheus)")
    config = tmp_path / "prometheus.yml"
    targets = json.dumps(list(cluster.address.values()))
    config.write_text(
        "global: {scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1s}\n"
        f"scrape_configs:\n  - job_name: gpus\n    static_configs:\n      - targets: {targets}\n"
    )
    port = free_port()
    argv = [str(PROMETHEUS), f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
            f"--web.listen-address=127.0.0.1:{port}"]  # fmt: skip
    cluster.start("prometheus", argv, port, ready_url=f"http://127.0.0.1:{port}/-/ready")
    url = f"http://127.0.0.1:{port}"
    reader = PrometheusReader(url)
    wait_for(lambda: sum(1 for h in reader.round().hosts if h.gpus) == 3, 60, "Prometheus to hold every GPU")
    return url


def test_prometheus_gives_back_the_values_served(cluster: Cluster, prometheus: str) -> None:
    round_ = one_round("--prometheus", prometheus)
    assert round_["source"] == "prometheus"
    assert {h["target"] for h in round_["hosts"]} == set(cluster.address.values()) - {cluster.address["prometheus"]}
    check_values(round_, cluster.address)


def test_through_prometheus_a_killed_exporter_goes_down_and_the_others_stay(cluster: Cluster, prometheus: str) -> None:
    process = monitor("--prometheus", prometheus, "--interval", "1")
    amd = cluster.address["amd"]
    try:
        assert process.stdout is not None
        json.loads(process.stdout.readline())
        cluster.kill("amd")
        rounds = [json.loads(process.stdout.readline()) for _ in range(3)]  # Prometheus's own scrape adds one
    finally:
        process.terminate()
        process.communicate(timeout=30)
    last = {h["target"]: h for h in rounds[-1]["hosts"]}
    assert not last[amd]["up"] and "Prometheus could not scrape it" in last[amd]["error"]
    for round_ in rounds:
        assert all(h["up"] and h["gpus"] for h in round_["hosts"] if h["target"] != amd)
