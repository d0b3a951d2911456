"""The cluster screen's lines, history and totals kept by host from one round to the next: a host whose GPUs are
the very objects of the last round keeps its lines and figures, and they still show what is new."""

from __future__ import annotations

from dataclasses import replace

from cluster_rounds import synthetic_round

from rocmtui.gpu.cluster.cluster_summary import totals
from rocmtui.gpu.cluster.reading import ClusterRound
from rocmtui.ui.state.cluster_rows import ClusterQuery, GroupMemo, UtilHistory, lines


def again(cluster: ClusterRound, *, changed: int) -> ClusterRound:
    """The next round: every host as it was (its GPUs the same objects) but host ``changed``, read anew."""
    fresh = synthetic_round(7)
    hosts = tuple(fresh.hosts[i] if i == changed else replace(h, timestamp=h.timestamp + 2) for i, h in
                  enumerate(cluster.hosts))  # fmt: skip
    return replace(cluster, timestamp=cluster.timestamp + 2, hosts=hosts)


def test_a_host_unchanged_keeps_its_lines_and_they_show_the_new_history() -> None:
    first = synthetic_round(0)
    second = again(first, changed=1)
    memo: GroupMemo = {}
    history, query = UtilHistory(), ClusterQuery()
    history.add(first)
    before = lines(first, query, history, memo)
    spark_before = before[1].text.plain
    history.add(second)
    after = lines(second, query, history, memo)
    fresh = lines(second, query, history)  # no memo: made anew
    assert [line.text.plain for line in after] == [line.text.plain for line in fresh]
    assert after[1] is before[1] and after[1].text.plain != spark_before  # kept, drawn with two points now
    changed_at = next(i for i, line in enumerate(after) if line.target == second.hosts[1].target)
    assert after[changed_at + 1] is not before[changed_at + 1]


def test_a_new_query_makes_the_lines_again() -> None:
    cluster = synthetic_round(0)
    memo: GroupMemo = {}
    history = UtilHistory()
    history.add(cluster)
    by_host = lines(cluster, ClusterQuery(), history, memo)
    by_util = lines(cluster, ClusterQuery(sort_by="util"), history, memo)
    assert [line.key for line in by_util] == [
        line.key for line in lines(cluster, ClusterQuery(sort_by="util"), history)
    ]
    assert [line.key for line in by_util] != [line.key for line in by_host]


def test_totals_kept_by_host_are_the_totals_made_anew() -> None:
    memo: dict = {}
    first = synthetic_round(0)
    second = again(first, changed=3)
    assert totals(first, memo) == totals(first)
    assert totals(second, memo) == totals(second) != totals(first)


def test_a_host_read_anew_keeps_the_history_of_its_gpus() -> None:
    history = UtilHistory()
    rounds = [synthetic_round(step) for step in range(3)]  # every host's GPUs new objects each round
    for cluster in rounds:
        history.add(cluster)
    host = rounds[-1].hosts[0]
    spark = history.spark((host.target, 0, host.gpus[0].uuid))
    assert len(spark.strip()) == 3
