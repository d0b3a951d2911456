"""``rocmtui_gpu_run_info``: which run, and which rank of it, uses each GPU, as an info series to join the GPU
series on (``* on(hostname, uuid) group_left(run, rank) rocmtui_gpu_run_info``), the way dcgm-exporter's pod
labels are joined: the GPU series keep their labels, and no new series starts when a run does.

A run uses a GPU when one of its processes is in the GPU's process list at the sample: the run's writer
(``status.json``'s pid: a single process, rank 0, a tracked script) and every rank that wrote its start
(``ranks/rank-N.jsonl``) on this host.
"""

from __future__ import annotations

import socket
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from prometheus_client.core import GaugeMetricFamily

from rocmtui.base.text import plain
from rocmtui.export.sample_collector import gpu_labels
from rocmtui.gpu.sample import SampleSet
from rocmtui.run.format import RunStatus
from rocmtui.run.rank_streams import RankView

RUN_INFO_LABELS = ["run", "run_name", "rank", "node"]


@dataclass(frozen=True)
class RunProcess:
    """A process of a live run on this host."""

    run: str
    run_name: str
    rank: int | None
    node: int | None


def run_processes(live: Iterable[tuple[str, RunStatus, Sequence[RankView]]], host: str) -> dict[int, RunProcess]:
    """The processes of the live runs on ``host``, by pid: each run's writer, and its ranks started here."""
    found: dict[int, RunProcess] = {}
    for run, status, ranks in live:
        for view in ranks:
            started = view.started
            if started is not None and started.host == host and view.failed is None:
                found[started.pid] = RunProcess(run, status.name, started.rank, started.node_rank)
        if status.host == host:
            found.setdefault(status.pid, RunProcess(run, status.name, None, None))
    return found


def gpu_run_family(sample: SampleSet, hostname: str, processes: dict[int, RunProcess]) -> GaugeMetricFamily:
    """1 for each (GPU, run process) pair where the process is in the GPU's process list."""
    gpus = {gpu.index: gpu for gpu in sample.gpus}
    rows = []
    for process in sample.processes:
        user, gpu = processes.get(process.pid), gpus.get(process.gpu_index)
        if user is not None and gpu is not None:
            rows.append((gpu_labels(gpu, hostname), user))
    names = sorted({key for labels, _ in rows for key in labels}) or ["gpu", "hostname", "name"]
    family = GaugeMetricFamily(
        "rocmtui_gpu_run_info", "1 where a process of a live run uses the GPU", labels=[*names, *RUN_INFO_LABELS]
    )
    for labels, user in rows:
        rank = "" if user.rank is None else str(user.rank)
        node = "" if user.node is None else str(user.node)
        values = [labels.get(k, "") for k in names]
        family.add_metric([*values, user.run, plain(user.run_name, limit=120), rank, node], 1.0)
    return family


def this_host() -> str:
    """The host name runs write into their status and rank files (``socket.gethostname()``)."""
    return socket.gethostname()
