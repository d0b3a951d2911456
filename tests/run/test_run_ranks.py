"""Per-rank streams: one writer per rank, a tail that finds new ranks, keeps the latest state, skips junk."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import msgspec

from rocmtui.run.rank_health import HealthRules, job_failure, nodes_summary, rank_rows, step_strip, strip_scale
from rocmtui.run.rank_streams import (
    RankBeat,
    RankEvent,
    RankFailed,
    RankProgress,
    RankStarted,
    RankTail,
    RankView,
    RankWriter,
    is_rank_folder,
    job_of,
    rank_path,
)


def started(rank: int) -> RankStarted:
    return RankStarted(rank, 2, 100 + rank, "host", f"cuda:{rank}", "NVIDIA H200", f"GPU-{rank}", None)


def test_the_tail_keeps_each_ranks_latest_progress_and_finds_late_ranks(tmp_path: Path) -> None:
    tail = RankTail(tmp_path)
    assert not tail.poll() and tail.views == {}  # no ranks folder yet
    zero = RankWriter(tmp_path, 0)
    zero.write(started(0))
    zero.write(RankProgress(0, 0, 10, 5000.0, 1.0))
    assert tail.poll()
    assert tail.views[0].progress is not None
    assert tail.views[0].started == started(0) and tail.views[0].progress.step == 10
    one = RankWriter(tmp_path, 1)
    one.write(started(1))
    zero.write(RankProgress(0, 0, 20, 5100.0, 2.0))
    assert tail.poll()
    assert tail.views[0].progress is not None
    assert tail.views[0].progress.step == 20 and tail.views[1].progress is None
    assert not tail.poll()  # nothing new
    one.write(RankFailed(1, "out of GPU memory", "oom"))
    tail.poll()
    assert tail.views[1].failed == RankFailed(1, "out of GPU memory", "oom")
    zero.close()
    one.close()
    tail.close()


def test_lines_this_version_cannot_read_are_skipped(tmp_path: Path) -> None:
    RankWriter(tmp_path, 0).close()
    path = rank_path(tmp_path, 0)
    path.write_bytes(b'{"event":"RankProgress","rank":0,"epoch":"x"}\nnot json\n{"event":"Future","rank":0}\n')
    with path.open("ab") as f:
        f.write(b'{"event":"RankProgress","rank":0,"epoch":1,"step":5,"images_per_s":1.0,"elapsed_s":0.5}\n')
    tail = RankTail(tmp_path)
    tail.poll()
    assert tail.views[0].progress == RankProgress(0, 1, 5, 1.0, 0.5)
    tail.close()


def progress(rank: int, step: int, *, speed: float = 1000.0, step_s: float = 0.1, busy_s: float = 0.0) -> RankProgress:
    return RankProgress(rank, 0, step, speed, 1.0, step_s=step_s, busy_s=busy_s, wall=NOW - 1)


NOW = 1_800_000_000.0


def view(rank: int, *busy: float, node: int = 0, speed: float = 1000.0) -> RankView:
    out = RankView(rank)
    out.take(msgspec.structs.replace(started(rank), node_rank=node, host=f"node{node}", wall=NOW - 5))
    for n, seconds in enumerate(busy):
        out.take(progress(rank, 10 * (n + 1), speed=speed, busy_s=seconds, step_s=0.5))
    return out


RULES = HealthRules()


def states(views: list[RankView], rules: HealthRules = RULES, live: bool = True) -> dict[int, str]:
    return {row.rank: row.state for row in rank_rows(views, NOW, rules, live=live)}


def test_the_straggler_is_the_rank_busy_longest_a_step_over_its_window() -> None:
    # every rank's wall time a step is the same (0.5 s): the straggler is told by its own work
    assert states([view(0, 0.30), view(1, 0.31), view(2, 0.45), view(3, 0.29)]) == {
        0: "running",
        1: "running",
        2: "straggler",
        3: "running",
    }
    assert states([view(0, 0.30), view(1, 0.33)]) == {0: "running", 1: "running"}  # within the 20% margin
    assert states([view(0, 0.30), view(1, 0.37)]) == {0: "running", 1: "straggler"}  # of two, against the faster
    assert states([view(0, 0.30), view(1, 0.33)], HealthRules(margin=0.05))[1] == "straggler"
    # one slow report among steady ones is noise; slow for most of the window is a straggler
    assert states([view(0, 0.3, 0.3, 0.3, 0.3), view(1, 0.3, 0.3, 0.3, 0.9)])[1] == "running"
    assert states([view(0, 0.3, 0.3, 0.3), view(1, 0.5, 0.45, 0.3)])[1] == "straggler"
    assert states([view(0, 0.3, 0.3, 0.3, 0.3), view(1, 0.9, 0.9, 0.3, 0.3)], HealthRules(window=2))[1] == "running"
    assert states([view(0, 0.3), view(1)]) == {0: "running", 1: "starting"}  # one reporting rank: nothing to compare


def test_without_busy_times_the_ranks_speeds_are_compared() -> None:
    slow = view(1, speed=600.0)
    slow.take(progress(1, 10, speed=600.0))
    fast = view(0)
    fast.take(progress(0, 10, speed=1000.0))
    assert states([fast, slow]) == {0: "running", 1: "straggler"}


def test_a_silent_rank_is_stalled_only_while_another_answers_and_the_run_goes_on() -> None:
    waiting = view(0, 0.3)
    waiting.take(RankBeat(0, 40, NOW - 1))
    stopped = view(1, 0.3)  # its newest line is from NOW - 1 too
    stopped.last_wall = NOW - 45
    rows = {r.rank: r for r in rank_rows([waiting, stopped], NOW, HealthRules(stall_s=30), live=True)}
    assert rows[1].state == "stalled" and rows[1].heartbeat_age_s == 45
    assert "since step 10" in rows[1].message and rows[0].state == "running" and rows[0].step == 40
    assert states([waiting, stopped], HealthRules(stall_s=60))[1] == "running"
    assert states([waiting, stopped], live=False) == {0: "ended", 1: "ended"}  # a finished run's ranks are quiet
    waiting.last_wall = NOW - 50  # every rank silent: none is named (the job as a whole has stopped)
    assert set(states([waiting, stopped], HealthRules(stall_s=30)).values()) == {"running"}


def test_rows_come_grouped_by_node_and_the_summary_names_who_and_where() -> None:
    views = [view(3, 0.3, node=1), view(0, 0.3), view(2, 0.6, node=1), view(1, 0.3)]
    views[1].take(RankFailed(0, "out of memory", wall=NOW))
    rows = rank_rows(views, NOW, HealthRules(), live=True)
    assert [(r.node, r.rank) for r in rows] == [(0, 0), (0, 1), (1, 2), (1, 3)]
    summary = nodes_summary(rows)
    assert summary.startswith("2 nodes, 4 ranks")
    assert "straggler: rank 2 (node 1, node1, step 10)" in summary and "failed: rank 0 (node 0, node0" in summary
    assert rows[0].message == "out of memory"


def test_the_heartbeat_is_written_while_the_rank_reports_nothing_else(tmp_path: Path) -> None:
    writer = RankWriter(tmp_path, 0, beat_s=0.05)
    writer.write(started(0))
    writer.write(RankProgress(0, 0, 7, 1.0, 1.0))  # written at wall 0
    deadline = time.monotonic() + 10
    tail = RankTail(tmp_path)
    while time.monotonic() < deadline:
        tail.poll()
        if tail.views[0].last_wall > 0:  # a beat, written with the time now
            break
        time.sleep(0.02)
    writer.close()
    lines = rank_path(tmp_path, 0).read_bytes().splitlines()
    assert b'"event":"RankBeat","rank":0,"step":7' in lines[-1]
    time.sleep(0.15)
    assert rank_path(tmp_path, 0).read_bytes().splitlines() == lines  # closed: no beat after
    tail.close()


def test_a_line_naming_another_rank_than_its_file_is_not_taken(tmp_path: Path) -> None:
    writer = RankWriter(tmp_path, 1)
    writer.write(started(1))
    writer.write(RankFailed(0, "not mine"))
    writer.close()
    tail = RankTail(tmp_path)
    tail.poll()
    assert set(tail.views) == {1} and tail.views[1].failed is None
    tail.close()


def test_a_strip_draws_every_rank_on_one_scale() -> None:
    views = [view(0, 0.1, 0.3), view(1, 0.4, 0.4)]
    scale = strip_scale(views, 8)
    assert scale == 0.4
    assert step_strip(views[1], 8, scale) == "██" and step_strip(views[0], 8, scale) == "▃▆"


def write_rank(folder: Path, rank: int, node: int, *lines: RankEvent) -> None:
    writer = RankWriter(folder, rank)
    writer.write(msgspec.structs.replace(started(rank), node_rank=node, host=f"node{node}"))
    for line in lines:
        writer.write(line)
    writer.close()


def test_a_failed_job_names_the_node_none_of_whose_ranks_said_why(tmp_path: Path) -> None:
    write_rank(tmp_path, 0, 0, progress(0, 120))
    write_rank(tmp_path, 1, 0, progress(1, 120), RankFailed(1, "Connection reset by peer", wall=NOW))
    write_rank(tmp_path, 2, 1, progress(2, 118))
    write_rank(tmp_path, 3, 1, progress(3, 120))
    said = job_failure(tmp_path, 0, wait_s=0.0)
    assert said == "node 1 (node1, ranks 2, 3) stopped answering after step 120"


def test_otherwise_the_rank_that_failed_first_is_named_with_its_message(tmp_path: Path) -> None:
    write_rank(tmp_path, 0, 0)
    write_rank(tmp_path, 1, 1, RankFailed(1, "Connection reset by peer", wall=NOW + 1))
    write_rank(tmp_path, 2, 2, RankFailed(2, "out of GPU memory\x1b[2J", "oom", wall=NOW))
    assert job_failure(tmp_path, 0, wait_s=0.0) == "rank 2 (node 2, node2) failed: out of GPU memory\\x1b[2J"
    alone = tmp_path / "alone"
    alone.mkdir()
    write_rank(alone, 0, 0)
    assert job_failure(alone, 0, wait_s=0.0) is None  # one node: no one else to name


def test_a_node_that_says_why_late_is_waited_for(tmp_path: Path) -> None:
    write_rank(tmp_path, 0, 0)
    write_rank(tmp_path, 1, 1)

    def late() -> None:
        time.sleep(0.3)
        writer = RankWriter(tmp_path, 1)
        writer.write(RankFailed(1, "NaN loss", "nan", wall=NOW))
        writer.close()

    thread = threading.Thread(target=late)
    thread.start()
    assert job_failure(tmp_path, 0, wait_s=10.0, poll_s=0.02) == "rank 1 (node 1, node1) failed: NaN loss"
    thread.join()


def test_the_folders_of_a_jobs_nodes_are_read_as_one(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    write_rank(first, 0, 0, progress(0, 5))
    write_rank(second, 1, 1, progress(1, 5))
    write_rank(second, 0, 1, progress(0, 99))  # a rank both folders hold: the first folder's
    tail = RankTail(first, second)
    tail.poll()
    assert sorted(tail.views) == [0, 1] and tail.views[0].step == 5
    tail.close()
    assert not is_rank_folder(tmp_path) and is_rank_folder(first)
    assert job_of(first) is None  # its ranks named no job
    job = tmp_path / "job"
    job.mkdir()
    writer = RankWriter(job, 3)
    writer.write(msgspec.structs.replace(started(3), job_id="exp42"))
    writer.close()
    assert job_of(job) == "exp42"
