"""Every rank of a job as rows grouped by node: where it runs, how long its steps take, how old its heartbeat is,
and which rank holds the others up (the straggler) or stopped answering (stalled).

Ranks of a data-parallel job step together: each step's gradient all-reduce waits for the slowest rank, so every
rank's wall time a step is the same. What tells the straggler is the share a rank spends on its own work
(``RankProgress.busy_s``): the straggler is busy all the step, the ranks it holds up wait. Where that is not
measured (a script's ``track()``), the ranks' speeds are compared instead.
"""

from __future__ import annotations

import itertools
import statistics
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import msgspec

from rocmtui.base.text import plain
from rocmtui.run.rank_streams import RankView, read_ranks

RankState = Literal["starting", "running", "straggler", "stalled", "failed", "ended"]


@dataclass(frozen=True)
class HealthRules:
    """When a rank is named: the user's to set (``watch``/``runs --ranks``: ``--straggler-margin``,
    ``--straggler-window``, ``--stall-s``)."""

    margin: float = 0.2
    """A rank whose step takes this share longer than the ranks' median (of its own work) is a straggler."""
    window: int = 8
    """Reports each rank's step time is taken over (the median of them: one slow report is noise)."""
    stall_s: float = 30.0
    """A rank with no line for this long, while another rank's heartbeat is fresh, is stalled."""


class RankRow(msgspec.Struct, frozen=True):
    """One rank as ``runs RUN --ranks --json`` prints it."""

    rank: int
    node: int
    local_rank: int
    host: str
    device: str
    pid: int | None
    restart: int
    step: int
    step_s_median: float | None
    """Seconds a step, the median over the window (None before a report)."""
    step_s_worst: float | None
    busy_s_median: float | None
    """Of a step, the seconds spent on the rank's own work (None where not measured)."""
    speed: float | None
    """Images/s of this rank (steps/s for a script), over the window."""
    heartbeat_age_s: float | None
    """Seconds since the rank's newest line, by the viewer's clock against the rank host's."""
    state: RankState
    message: str = ""
    """Why: the failure, the margin over the median, the silence."""


def rank_rows(views: Iterable[RankView], now: float, rules: HealthRules, *, live: bool) -> list[RankRow]:
    """The rows of ``views`` in (node, rank) order; ``now``: time.time(); ``live``: whether the run is still
    going (a finished run's ranks are quiet, not stalled)."""
    views = sorted(views, key=lambda v: (_node(v), v.rank))
    fresh = {v.rank for v in views if v.last_wall and now - v.last_wall <= rules.stall_s and v.failed is None}
    ages = {v.rank: max(0.0, now - v.last_wall) if v.last_wall else None for v in views}
    states = {
        v.rank: _state(v, ages[v.rank], rules, live=live, others_alive=len(fresh) > (v.rank in fresh)) for v in views
    }
    # compared: the ranks still stepping (a stalled or failed rank's old step times say nothing of now)
    costs = {v.rank: c for v in views if states[v.rank][0] == "running" and (c := _cost(v, rules.window)) is not None}
    # the median rank; of two, the faster (the median of two is their mean, and would halve the margin)
    median = None if len(costs) < 2 else min(costs.values()) if len(costs) == 2 else statistics.median(costs.values())
    rows = []
    for view in views:
        state, message = states[view.rank]
        if state == "running" and median is not None and view.rank in costs:
            over = costs[view.rank] / median - 1 if median > 0 else 0.0
            if over > rules.margin:
                state, message = "straggler", f"{over:.0%} slower than the median rank"
        rows.append(_row(view, ages[view.rank], state, message, rules.window))
    return rows


def _node(view: RankView) -> int:
    return view.started.node_rank if view.started is not None else 0


def _recent(values: Sequence[float], window: int) -> list[float]:
    return list(values)[-window:] if window > 0 else []


def _cost(view: RankView, window: int) -> float | None:
    """What the straggler is compared by: the median seconds of own work a step, else the inverse of its speed."""
    busy = _recent(view.busy_times, window)
    if busy:
        return statistics.median(busy)
    speeds = [s for s in _recent(view.speeds, window) if s > 0]
    return 1.0 / statistics.median(speeds) if speeds else None


def _state(
    view: RankView, age: float | None, rules: HealthRules, *, live: bool, others_alive: bool
) -> tuple[RankState, str]:
    if view.failed is not None:
        return "failed", view.failed.message
    if not live or view.ended is not None:
        return "ended", ""
    if age is not None and age > rules.stall_s and others_alive:
        return "stalled", f"no heartbeat for {age:.0f} s, since step {view.step:,}"
    if view.progress is None:
        return "starting", ""
    return "running", ""


def _row(view: RankView, age: float | None, state: RankState, message: str, window: int) -> RankRow:
    started = view.started
    steps = _recent(view.step_times, window)
    busy = _recent(view.busy_times, window)
    speeds = _recent(view.speeds, window)
    return RankRow(
        rank=view.rank,
        node=started.node_rank if started else 0,
        local_rank=started.local_rank if started else 0,
        host=started.host if started else "",
        device=started.device if started else "",
        pid=started.pid if started else None,
        restart=started.restart if started else 0,
        step=view.step,
        step_s_median=statistics.median(steps) if steps else None,
        step_s_worst=max(steps) if steps else None,
        busy_s_median=statistics.median(busy) if busy else None,
        speed=statistics.fmean(speeds) if speeds else None,
        heartbeat_age_s=age,
        state=state,
        message=message,
    )


STRIP = "▁▂▃▄▅▆▇█"


def step_strip(view: RankView, window: int, scale_s: float) -> str:
    """The rank's latest ``window`` step times (its own work where measured) as bars, ``scale_s`` the full bar:
    the same scale on every rank's strip, so a straggler's is the tall one."""
    values = _recent(view.busy_times or view.step_times, window)
    if scale_s <= 0:
        return ""
    top = len(STRIP) - 1
    return "".join(STRIP[min(top, max(0, round(v / scale_s * top)))] for v in values)


def strip_scale(views: Iterable[RankView], window: int) -> float:
    """The longest step time any rank's strip shows."""
    return max((max(_recent(v.busy_times or v.step_times, window), default=0.0) for v in views), default=0.0)


def nodes_summary(rows: Sequence[RankRow]) -> str:
    """``2 nodes, 4 ranks; straggler: rank 3 (node 1, b, step 1,200)``: the job at a glance, the named ranks."""
    nodes = len({r.node for r in rows})
    parts = [f"{nodes} node{'s' if nodes != 1 else ''}, {len(rows)} rank{'s' if len(rows) != 1 else ''}"]
    for state in ("straggler", "stalled", "failed"):
        if named := [r for r in rows if r.state == state]:
            parts.append(f"{state}: " + ", ".join(_where(r) for r in named))
    return "; ".join(parts)


def _where(row: RankRow) -> str:
    return f"rank {row.rank} (node {row.node}, {_host(row)}, step {row.step:,})"


def _host(row: RankRow) -> str:
    """The rank's host as text to print (read from its file: control characters shown, bounded)."""
    return plain(row.host, limit=64) if row.host else "host unknown"


def _times(median: float | None, worst: float | None) -> str:
    """``111/224ms`` or ``1.2/3.4s``: a step's median and worst seconds in one unit."""
    if median is None or worst is None:
        return "-"
    if worst < 1:
        return f"{median * 1000:.0f}/{worst * 1000:.0f}ms"
    return f"{median:.1f}/{worst:.1f}s"


RANK_HEADER = f"{'rank':<8} {'device':<8} {'step':>7} {'step med/max':>12} {'speed':>8} {'beat':>4} {'recent':<8} state"
"""The column names over ``rank_line``'s lines."""


def rank_line(row: RankRow, device: str, strip: str) -> str:
    """One rank as a line of text (the watch screen's rank table, ``runs RUN --ranks``), under ``RANK_HEADER``: its
    device (a GPU named by the caller), step, step time median/worst, speed (images or steps a second), heartbeat
    age, strip of recent step times, state. 79 columns before a message."""
    speed = "-" if row.speed is None else f"{row.speed:,.0f}/s" if row.speed >= 100 else f"{row.speed:,.1f}/s"
    age = "-" if row.heartbeat_age_s is None else f"{min(row.heartbeat_age_s, 9999):.0f}s"
    state = f"{row.state}: {plain(row.message)}" if row.message else row.state
    where = plain(device, limit=8)
    times = _times(row.step_s_median, row.step_s_worst)
    return f"rank {row.rank:<3} {where:<8} {row.step:>7,} {times:>12} {speed:>8} {age:>4} {strip:<8} {state}"


def table_lines(
    views: Sequence[RankView], rows: Sequence[RankRow], window: int, where: Callable[[RankView], str], *, heads: bool
) -> list[tuple[str, str]]:
    """The rank table as (kind, line): the job's line ("summary"), the column names ("header"), then each node's
    ranks, headed by the node's host ("node") where ``heads``, a rank's kind being its state. ``where``: the
    device a rank is shown on (a GPU named by the caller's samples, or the device it reported)."""
    by_rank, scale = {v.rank: v for v in views}, strip_scale(views, window)
    lines = [("summary", nodes_summary(rows)), ("header", RANK_HEADER)]
    for _node, members in itertools.groupby(rows, key=lambda r: r.node):
        group = list(members)
        if heads:
            lines.append(("node", node_line(group)))
        for row in group:
            view = by_rank[row.rank]
            lines.append((row.state, rank_line(row, where(view), step_strip(view, window, scale))))
    return lines


def node_line(rows: Sequence[RankRow]) -> str:
    """The header of one node's ranks: ``node 1  host-b  2 ranks``."""
    first = rows[0]
    return f"node {first.node}  {_host(first)}  {len(rows)} rank{'s' if len(rows) != 1 else ''}"


def _ranks_text(ranks: Sequence[int]) -> str:
    return f"rank{'s' if len(ranks) != 1 else ''} {', '.join(str(r) for r in ranks)}"


def job_failure(run_dir: Path, node: int, *, wait_s: float, poll_s: float = 0.1) -> str | None:
    """Who ended a job whose collective failed on this node, as the ranks' files tell: the nodes none of whose
    ranks wrote a failure within ``wait_s`` (killed, cut off: ``node 1 (b, ranks 2, 3) stopped answering after
    step 120``), else the other rank that failed first and why; None when the files name no one."""
    deadline = time.monotonic() + wait_s
    while True:
        views = sorted(read_ranks(run_dir).values(), key=lambda v: (_node(v), v.rank))
        others = [v for v in views if v.started is not None and _node(v) != node]
        nodes = [list(group) for _, group in itertools.groupby(others, key=_node)]
        silent = [group for group in nodes if not any(v.failed is not None for v in group)]
        if not silent or time.monotonic() >= deadline:
            break
        time.sleep(poll_s)
    if silent:
        return "; ".join(_silent_node(group) for group in silent)
    said = sorted(((v.failed, v) for v in others if v.failed is not None), key=lambda pair: pair[0].wall)
    if not said:
        return None
    failure, first = said[0]
    return f"rank {first.rank} (node {_node(first)}, {_view_host(first)}) failed: {plain(failure.message)}"


def _silent_node(group: Sequence[RankView]) -> str:
    step = max(v.step for v in group)
    ranks = _ranks_text([v.rank for v in group])
    return f"node {_node(group[0])} ({_view_host(group[0])}, {ranks}) stopped answering after step {step:,}"


def _view_host(view: RankView) -> str:
    host = view.started.host if view.started is not None else ""
    return plain(host, limit=64) if host else "host unknown"
