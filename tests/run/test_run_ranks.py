"""Per-rank streams: one writer per rank, a tail that finds new ranks, keeps the latest state, skips junk."""

from __future__ import annotations

from pathlib import Path

from rocmtui.run.rank_streams import (
    RankFailed,
    RankProgress,
    RankStarted,
    RankTail,
    RankView,
    RankWriter,
    rank_path,
    stragglers,
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


def view(rank: int, *speeds: float) -> RankView:
    out = RankView(rank, started(rank))
    for speed in speeds:
        out.progress = RankProgress(rank, 0, 100, speed, 1.0)
        out.speeds.append(speed)
    return out


def test_a_straggler_is_a_rank_well_below_the_median_speed_for_several_reports() -> None:
    assert stragglers([view(0, 1000.0), view(1, 990.0), view(2, 700.0), view(3, 1010.0)]) == {2}
    assert stragglers([view(0, 1000.0), view(1, 950.0)]) == set()
    assert stragglers([view(0, 1000.0), view(1)]) == set()  # one reporting rank: nothing to compare
    # one slow report among steady ones is noise, not a straggler; a rank slow for long is one
    assert stragglers([view(0, 1000.0, 1000.0, 1000.0, 1000.0), view(1, 1000.0, 1000.0, 1000.0, 500.0)]) == set()
    assert stragglers([view(0, 1000.0, 1000.0, 1000.0), view(1, 600.0, 650.0, 700.0)]) == {1}
