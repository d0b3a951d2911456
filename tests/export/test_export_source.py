"""The exporter's GPU source: a live run's recorded samples when there is one on this host, else its own sampler.

The runs are copies of the real H200 run folder with the first lines of its real NVML ``gpu.jsonl``; a run is
live while this test holds its lock. The exporter's own sampler is a ManualReplay of the same recording,
shifted an hour later so its samples cannot be mistaken for the run's.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from export_runs import H200, copy_run, one, scrape
from second_user import stranger

from rocmtui.cli import export_command
from rocmtui.cli.parser import build_parser
from rocmtui.export.gpu_source import ExportSamples
from rocmtui.export.metrics_server import serve
from rocmtui.gpu import detect
from rocmtui.gpu.replay import ManualReplay, ReplaySource, shifted
from rocmtui.run.lock import RunLock

__all__ = ["stranger"]
LINES = (H200 / "gpu.jsonl").read_text().splitlines()
NEWER = "20261201-071828-cifar10-fastnet"
OLDER = "20261201-060000-cifar10-fastnet"


def recording(runs: Path, name: str, *, samples: int | None = 10, host: str | None = None) -> Path:
    """A copy of the H200 run recording its first ``samples`` GPU samples (None: no gpu.jsonl)."""
    run_dir = copy_run(runs, name, lines=12, state="running")
    if host is not None:
        status = json.loads((run_dir / "status.json").read_text())
        (run_dir / "status.json").write_text(json.dumps({**status, "host": host}))
    if samples is not None:
        (run_dir / "gpu.jsonl").write_text("\n".join(LINES[:samples]) + "\n")
    return run_dir


def timestamp(line: str) -> float:
    return float(json.loads(line)["timestamp"])


class Samplers:
    """The exporter's ``open_sampler``: each call opens (and records) a sampler of its own."""

    def __init__(self) -> None:
        self.opened: list[ManualReplay] = []
        self.recorded = ReplaySource.from_jsonl(H200 / "gpu.jsonl").samples

    def __call__(self) -> ManualReplay:
        sampler = ManualReplay([shifted(s, 3600.0) for s in self.recorded[:20]])
        sampler.step()
        self.opened.append(sampler)
        return sampler


@pytest.fixture
def samplers() -> Samplers:
    return Samplers()


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    return tmp_path / "runs"


@pytest.fixture
def source(runs: Path, samplers: Samplers) -> Iterator[ExportSamples]:
    samples = ExportSamples(runs, samplers)
    yield samples
    samples.stop()


def test_a_live_run_s_samples_are_served_and_no_sampler_is_opened(runs, samplers, source) -> None:
    run_dir = recording(runs, NEWER)
    lock = RunLock.acquire(run_dir)
    try:
        source.check()
        assert source.run_dir == run_dir and not source.sampling
        assert samplers.opened == []
        latest = source.latest()
        assert latest is not None and latest.timestamp == timestamp(LINES[9])
        with (run_dir / "gpu.jsonl").open("a") as gpu:  # the trainer records its next sample
            gpu.write(LINES[10] + "\n")
        endpoint = serve(source.latest, host="127.0.0.1", port=0, runs_dir=runs, hostname="box")
        try:
            families = scrape(endpoint.port)
        finally:
            endpoint.close()
    finally:
        lock.release()
    newest = json.loads(LINES[10])
    assert one(families, "rocmtui_sample_timestamp_seconds", hostname="box") == newest["timestamp"]
    assert one(families, "rocmtui_gpu_power_watts", gpu="0") == pytest.approx(newest["gpus"][0]["power_w"])
    assert samplers.opened == []


def test_the_sampler_opens_when_the_run_ends_and_stops_when_another_starts(runs, samplers, source) -> None:
    older = recording(runs, OLDER)
    lock = RunLock.acquire(older)
    source.check()
    assert source.run_dir == older
    lock.release()  # the trainer exits (or dies): nobody holds the lock
    source.check()
    (sampler,) = samplers.opened
    assert source.sampling and source.run_dir is None
    assert source.latest() is sampler.latest and not sampler.stopped
    source.check()  # nothing changed: the same sampler, not a second one
    assert samplers.opened == [sampler]
    newer = recording(runs, NEWER, samples=3)
    lock = RunLock.acquire(newer)
    try:
        source.check()
        assert source.run_dir == newer and sampler.stopped and not source.sampling
        latest = source.latest()
        assert latest is not None and latest.timestamp == timestamp(LINES[2])
        relocked = RunLock.acquire(older)  # both live: the newer one is served
        try:
            source.check()
            assert source.run_dir == newer
        finally:
            relocked.release()
    finally:
        lock.release()
    assert len(samplers.opened) == 1


@pytest.mark.parametrize(
    "make",
    [
        lambda runs: (recording(runs, NEWER, host="another-machine"), True),  # its GPUs are not ours
        lambda runs: (recording(runs, NEWER, samples=None), True),  # records no samples
        lambda runs: (recording(runs, NEWER), False),  # lost: live status, nobody holds the lock
    ],
    ids=["another-host", "no-gpu-jsonl", "lost"],
)
def test_runs_that_do_not_record_this_machine_s_gpus_leave_the_sampler_on(runs, samplers, source, make) -> None:
    run_dir, held = make(runs)
    lock = RunLock.acquire(run_dir) if held else None
    try:
        source.check()
    finally:
        if lock is not None:
            lock.release()
    assert source.sampling and source.run_dir is None and len(samplers.opened) == 1


def test_another_users_live_run_or_their_file_in_ours_is_never_served(runs, samplers, source, stranger) -> None:
    """A live-looking run another user planted in the runs folder, newer than ours, and a gpu.jsonl of theirs in a
    run folder of ours: neither is served as this machine's GPU readings."""
    theirs = recording(runs, NEWER)
    for path in [theirs, *theirs.rglob("*")]:
        os.chown(path, stranger.uid, stranger.gid)
    mine = recording(runs, OLDER)
    locks = [RunLock.acquire(theirs), RunLock.acquire(mine)]
    try:
        source.check()
        assert source.run_dir == mine
        os.chown(mine / "gpu.jsonl", stranger.uid, stranger.gid)
        source.check()
        assert source.run_dir is None and source.sampling
    finally:
        for lock in locks:
            lock.release()


def test_no_runs_folder_at_all_samples(tmp_path, samplers) -> None:
    source = ExportSamples(tmp_path / "missing", samplers)
    source.check()
    assert source.sampling
    source.stop()
    assert samplers.opened[0].stopped


def test_export_command_opens_no_sampler_beside_a_live_run(runs, monkeypatch) -> None:
    run_dir = recording(runs, NEWER)
    opened: list[object] = []

    def open_sampler(config: object) -> ManualReplay:
        opened.append(config)
        return ManualReplay([])

    monkeypatch.setattr(detect, "open_sampler", open_sampler)
    stop = threading.Event()
    stop.set()
    args = build_parser().parse_args(["export", "--port", "0", "--runs-dir", str(runs)])
    lock = RunLock.acquire(run_dir)
    try:
        assert export_command.run_export(args, stop) == 0
    finally:
        lock.release()
    assert opened == []
    shutil.rmtree(run_dir)
    assert export_command.run_export(args, stop) == 0
    assert len(opened) == 1
