"""The exporter from one scrape to the next: runs that change, turn unreadable, end, come back or go away.

The run collector is scraped in-process (``collect``, as prometheus_client's registry calls it); the HTTP side's
quiet hang-ups are checked on the server itself.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from export_runs import copy_run, one, scrape
from prometheus_client import generate_latest

import rocmtui
from rocmtui.export import run_metrics
from rocmtui.export.metrics_server import build_registry, serve
from rocmtui.export.run_metrics import RunCollector
from rocmtui.run import format as fmt
from rocmtui.run.status import read_status

LOST = "20261130-090000-cifar10-fastnet"
OTHER = "20261130-100000-cifar10-fastnet"


def _values(collector: RunCollector, metric: str) -> dict[str, float]:
    """Each run's value of ``metric`` (for ``rocmtui_run_state``: the state that is 1)."""
    families = {family.name: family for family in collector.collect()}
    if metric == "rocmtui_run_state":
        return {s.labels["run"]: s.labels["state"] for s in families[metric].samples if s.value == 1.0}  # type: ignore[misc]
    return {s.labels["run"]: s.value for s in families[metric].samples}


def _set_status(run_dir: Path, **fields: object) -> None:
    path = run_dir / fmt.STATUS
    status = json.loads(path.read_text())
    status.update(fields)
    path.write_text(json.dumps(status))


def test_a_run_whose_stream_turns_unreadable_keeps_the_values_read_before(tmp_path: Path) -> None:
    run = copy_run(tmp_path, LOST, lines=12, state="running")  # nobody holds it: lost, exported until resumed
    collector = RunCollector(tmp_path)
    steps = _values(collector, "rocmtui_run_step")
    assert steps and steps[LOST] > 0
    stream = run / fmt.EVENTS
    stream.rename(tmp_path / "moved-away")
    stream.symlink_to(tmp_path / "moved-away")  # a link is never read
    assert _values(collector, "rocmtui_run_step") == steps
    assert _values(collector, "rocmtui_run_state") == {LOST: "lost"}


def test_a_run_folder_removed_between_scrapes_is_dropped_and_the_scrape_goes_on(tmp_path: Path) -> None:
    copy_run(tmp_path, LOST, lines=12, state="running")
    copy_run(tmp_path, OTHER, lines=12, state="running")
    collector = RunCollector(tmp_path)
    assert set(_values(collector, "rocmtui_run_state")) == {LOST, OTHER}
    shutil.rmtree(tmp_path / LOST)
    assert _values(collector, "rocmtui_run_state") == {OTHER: "lost"}
    assert set(_values(collector, "rocmtui_run_step")) == {OTHER}


def test_a_finished_run_is_exported_again_once_resumed(tmp_path: Path) -> None:
    run = copy_run(tmp_path, LOST, lines=12, state="finished")
    collector = RunCollector(tmp_path)
    assert _values(collector, "rocmtui_run_state") == {}
    assert _values(collector, "rocmtui_run_state") == {}  # still ended: its status unchanged
    _set_status(run, state="running", heartbeat=time.time() + 1)  # resumed (and lost: no lock held here)
    assert _values(collector, "rocmtui_run_state") == {LOST: "lost"}


def test_the_epochs_asked_for_come_from_the_stream_when_the_status_has_none(tmp_path: Path) -> None:
    """An older writer's status.json has no ``epochs``: the run's RunStarted says how many it was started for."""
    older = copy_run(tmp_path, LOST, lines=12, state="running")
    status = json.loads((older / fmt.STATUS).read_text())
    started = json.loads((older / fmt.EVENTS).read_text().splitlines()[1])
    assert started["event"] == "RunStarted"
    del status["epochs"]
    (older / fmt.STATUS).write_text(json.dumps(status))
    bare = copy_run(tmp_path, OTHER, lines=1, state="running")  # its stream: the header alone
    _set_status(bare, epochs=0)
    assert _values(RunCollector(tmp_path), "rocmtui_run_epochs") == {LOST: started["config"]["epochs"]}


def _reported(endpoint_server: object, error: BaseException) -> None:
    try:
        raise error
    except type(error):
        endpoint_server.handle_error(None, ("127.0.0.1", 4321))  # type: ignore[attr-defined]


def test_a_client_that_hangs_up_prints_nothing_and_a_fault_is_reported(capsys: pytest.CaptureFixture[str]) -> None:
    endpoint = serve(lambda: None, host="127.0.0.1", port=0, runs_dir=None, hostname="box")
    try:
        for hang_up in (ConnectionResetError(), BrokenPipeError(), TimeoutError()):
            _reported(endpoint.server, hang_up)
        assert capsys.readouterr().err == ""
        _reported(endpoint.server, ValueError("a fault of the exporter's"))
        err = capsys.readouterr().err
        assert "('127.0.0.1', 4321)" in err and "ValueError: a fault of the exporter's" in err
        assert endpoint.thread.daemon  # an exporter in a process never keeps it from exiting
    finally:
        endpoint.close()


def test_a_finished_runs_status_is_read_once_until_it_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A runs folder of many finished runs costs one status read each, not one a scrape."""
    run = copy_run(tmp_path, LOST, lines=12, state="finished")
    reads: list[Path] = []
    real = read_status

    def counted(run_dir: Path) -> Any:
        reads.append(run_dir)
        return real(run_dir)

    monkeypatch.setattr(run_metrics, "read_status", counted)
    collector = RunCollector(tmp_path)
    for _ in range(3):
        assert _values(collector, "rocmtui_run_state") == {}
    assert reads == [run]
    _set_status(run, message="resumed later", heartbeat=time.time() + 1)
    assert _values(collector, "rocmtui_run_state") == {}
    assert reads == [run, run]  # changed: read again


def test_the_exporter_listens_on_the_address_asked_for_and_names_its_version() -> None:
    endpoint = serve(lambda: None, host="127.0.0.1", port=0, runs_dir=None, hostname="box")
    try:
        assert endpoint.server.server_address[0] == "127.0.0.1"  # never every interface
        families = scrape(endpoint.port)
    finally:
        endpoint.close()
    assert one(families, "rocmtui_exporter_info", version=rocmtui.__version__, backend="none", hostname="box") == 1


RUN_HELP = {
    "rocmtui_exporter_info": "The exporter's version and telemetry backend",
    "rocmtui_run_epochs_completed": "Epochs the run has completed",
    "rocmtui_run_epochs": "Epochs the run was started for",
    "rocmtui_run_step": "Optimizer steps taken",
    "rocmtui_run_loss": "Training loss at the newest step",
    "rocmtui_run_images_per_second": "Training throughput at the newest report",
    "rocmtui_run_test_accuracy_ratio": "Test accuracy at the newest epoch, 0 to 1",
    "rocmtui_run_best_accuracy_ratio": "Best test accuracy so far, 0 to 1",
    "rocmtui_run_elapsed_seconds": "Training time so far",
    "rocmtui_run_heartbeat_timestamp_seconds": "The writer's newest heartbeat (Unix time)",
    "rocmtui_run_state": "1 for the run's state",
    "rocmtui_rank_step": "The rank's newest step",
    "rocmtui_rank_step_seconds": "Seconds a step of the rank, the median of its latest reports",
    "rocmtui_rank_busy_seconds": "Of a step, the seconds the rank spent on its own work, not waiting for the others",
    "rocmtui_rank_heartbeat_age_seconds": "Seconds since the rank's newest line",
    "rocmtui_rank_state": "1 for the rank's state",
}
"""What Prometheus shows beside each of the exporter's own and its runs' metrics (its ``# HELP`` line)."""


def test_each_run_metric_and_the_exporters_info_is_described_on_the_page(tmp_path: Path) -> None:
    copy_run(tmp_path, LOST, lines=12, state="running")
    page = generate_latest(build_registry(lambda: None, tmp_path, "host")).decode()
    described = dict(line.removeprefix("# HELP ").split(" ", 1) for line in page.splitlines() if line[:6] == "# HELP")
    assert {name: text for name, text in described.items() if name in RUN_HELP} == RUN_HELP
