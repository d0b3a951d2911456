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


def texts(made: list) -> list[str]:
    return [line.text.plain for line in made]


def test_a_host_read_again_with_the_same_gpus_keeps_its_lines_and_they_show_what_is_new() -> None:
    first = synthetic_round(0)
    second = again(first, changed=1)
    memo = GroupMemo()
    history, query = UtilHistory(), ClusterQuery()
    history.add(first)
    before = lines(first, query, history, memo)
    drawn_before = texts(before)
    history.add(second)
    after = lines(second, query, history, memo)
    assert texts(after) == texts(lines(second, query, history))  # what lines made anew show
    assert after is before  # every host kept its lines: the very list
    changed_at = next(i for i, line in enumerate(after) if line.target == second.hosts[1].target)
    assert after[changed_at + 1].text.plain != drawn_before[changed_at + 1]  # the host read anew: its new values
    assert after[1].text.plain != drawn_before[1]  # a host unchanged: drawn with two points of history now


def _two_rounds(first: ClusterRound, second: ClusterRound) -> tuple[list, list, list]:
    """The lines of two rounds made with one memo, and the second round's lines made anew."""
    memo = GroupMemo()
    history, query = UtilHistory(), ClusterQuery()
    history.add(first)
    before = lines(first, query, history, memo)
    history.add(second)
    return before, lines(second, query, history, memo), lines(second, query, history)


def test_a_host_whose_gpus_are_others_gets_new_lines_and_the_others_keep_theirs() -> None:
    first = synthetic_round(0)
    host = first.hosts[2]
    second = replace(first, hosts=(*first.hosts[:2], replace(host, gpus=host.gpus[:-1]), *first.hosts[3:]))
    before, after, fresh = _two_rounds(first, second)
    assert after is not before and len(after) == len(before) - 1
    assert texts(after) == texts(fresh)
    assert after[1] is before[1]


def test_a_host_gone_from_the_round_takes_its_lines_with_it() -> None:
    first = synthetic_round(0)
    second = replace(first, hosts=first.hosts[:4] + first.hosts[5:])  # an instance Prometheus no longer knows
    before, after, fresh = _two_rounds(first, second)
    assert len(after) == len(before) - 9 and texts(after) == texts(fresh)


def test_lines_ordered_by_their_readings_are_made_again_each_round() -> None:
    first = synthetic_round(0)
    second = again(first, changed=1)
    memo = GroupMemo()
    history, query = UtilHistory(), ClusterQuery(sort_by="util")
    history.add(first)
    lines(first, query, history, memo)
    history.add(second)
    after = lines(second, query, history, memo)
    assert [line.key for line in after] == [line.key for line in lines(second, query, history)]
    assert texts(after) == texts(lines(second, query, history))


def test_find_matches_a_name_as_it_is_drawn() -> None:
    cluster = synthetic_round(0)
    host = cluster.hosts[0]
    evil = replace(host, gpus=tuple(replace(g, name="\x1b[2J" + g.name) for g in host.gpus))
    cluster = replace(cluster, hosts=(evil, *cluster.hosts[1:]))
    history = UtilHistory()
    history.add(cluster)
    found = lines(cluster, ClusterQuery(text="\\x1b[2J"), history)
    assert len(found) == 9 and found[0].target == evil.target and "\\x1b[2J" in found[1].text.plain


def test_a_new_query_makes_the_lines_again() -> None:
    cluster = synthetic_round(0)
    memo = GroupMemo()
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


def test_a_gpu_missing_from_a_round_starts_its_history_again_and_one_moved_keeps_it() -> None:
    history = UtilHistory()
    rounds = [synthetic_round(step) for step in range(4)]
    down = replace(rounds[1].hosts[0], up=False, gpus=())
    moved = replace(rounds[3].hosts[1], gpus=rounds[3].hosts[1].gpus[::-1])
    rounds[1] = replace(rounds[1], hosts=(down, *rounds[1].hosts[1:]))
    rounds[3] = replace(rounds[3], hosts=(rounds[3].hosts[0], moved, *rounds[3].hosts[2:]))
    for cluster in rounds:
        history.add(cluster)
    first, second = rounds[-1].hosts[0], rounds[-1].hosts[1]
    assert len(history.spark((first.target, 0, first.gpus[0].uuid), 0).strip()) == 2  # read again 2 rounds
    gpu = second.gpus[0]  # the host's GPU 7 now first
    spark = history.spark((second.target, gpu.index, gpu.uuid), 0)
    assert len(spark.strip()) == 4 and spark == history.spark((second.target, gpu.index, gpu.uuid), 7)
