"""The mapping table against exporters' real pages (tests/data/exporters, README there), rocmtui's own
exporter round-tripped through its collector, and pages that are not well formed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from rocmtui.gpu.cluster import exposition
from rocmtui.gpu.cluster.cluster_summary import format_round, totals
from rocmtui.gpu.cluster.exposition import parse_page
from rocmtui.gpu.cluster.mapping import MIB, TABLE, Names, fold
from rocmtui.gpu.cluster.reading import ClusterRound, HostReading
from rocmtui.gpu.sample_codec import loads

EXPORTERS = Path(__file__).resolve().parents[1] / "data" / "exporters"
H200 = Path(__file__).resolve().parents[1] / "data" / "h200-fastnet-run" / "gpu.jsonl"


def read(text: str):
    names = Names()
    page = parse_page(text, names.wanted)
    return page, fold(page.samples, 1.0, names)


def page_of(name: str) -> str:
    return (EXPORTERS / name).read_text()


def test_dcgm_exporter_l40s_page_maps_to_the_values_it_serves() -> None:
    page, found = read(page_of("dcgm-exporter-l40s.prom"))
    assert page.malformed == 0
    assert found.exporter == "dcgm-exporter" and found.hostname == "gpu1-wl8sg"
    (gpu,) = found.gpus
    assert (gpu.index, gpu.name, gpu.uuid, gpu.pci_bus_id) == (
        0, "NVIDIA L40S", "GPU-5b4e07f6-3a86-4340-039d-25f2a83cdc43", "00000000:00:07.0"
    )  # fmt: skip
    assert gpu.utilization_pct == 0.0
    assert gpu.memory_used_bytes == 0
    assert gpu.memory_total_bytes == (0 + 45459 + 608) * MIB  # used + free + reserved, MiB
    assert gpu.temperatures_c == (("gpu", 32.0),)
    assert gpu.power_w == pytest.approx(35.686)
    assert (gpu.sclk_mhz, gpu.mclk_mhz) == (210.0, 405.0)


def test_dcgm_exporter_t4_page_under_load() -> None:
    _, found = read(page_of("dcgm-exporter-t4.prom"))
    (gpu,) = found.gpus
    assert found.hostname == "cp-bm14r7" and gpu.name == "Tesla T4"
    assert (gpu.utilization_pct, gpu.memory_busy_pct) == (91.0, 73.0)
    assert gpu.memory_used_bytes == 5120 * MIB and gpu.memory_total_bytes == (5120 + 9791 + 447) * MIB
    assert gpu.temperature_c == 74.0 and gpu.power_w == pytest.approx(68.244) and gpu.sclk_mhz == 660.0


def test_amd_device_metrics_exporter_mi300x_page() -> None:
    page, found = read(page_of("amd-device-metrics-exporter-mi300x.prom"))
    assert page.malformed == 0
    assert found.exporter == "amd-device-metrics-exporter" and found.hostname == "tw038"
    busy, idle = found.gpus
    assert (busy.index, idle.index) == (0, 2)
    assert busy.uuid == "3dff74a1-0000-1000-80d3-0c4c1df1df58" and busy.name == "AMD Instinct MI300X OAM"
    assert (busy.utilization_pct, idle.utilization_pct) == (100.0, 0.0)
    assert busy.memory_used_bytes == 142336 * MIB and busy.memory_total_bytes == 196592 * MIB
    assert busy.temperature_c == 71.0 and dict(busy.temperatures_c)["mem"] == 58.0
    assert busy.power_w == 612.0
    assert (busy.sclk_mhz, busy.mclk_mhz) == (2100.0, 1300.0)  # clock_type system and memory, not the others
    assert (idle.sclk_mhz, idle.mclk_mhz) == (132.0, 900.0)


def test_amd_names_under_a_configured_prefix_read_the_same() -> None:
    plain_page = page_of("amd-device-metrics-exporter-mi300x.prom")
    lines = [("amd_" + line if line.startswith("gpu_") else line) for line in plain_page.splitlines()]
    _, prefixed = read("\n".join(lines) + "\n")
    _, unprefixed = read(plain_page)
    assert prefixed.gpus == unprefixed.gpus and len(prefixed.gpus) == 2


def test_a_prefix_is_not_allowed_on_names_of_other_exporters() -> None:
    _, found = read('x_DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-1"} 50\n')
    assert found.gpus == ()


def test_mi200_edge_temperature_and_average_power() -> None:
    text = 'gpu_edge_temperature{gpu_id="1",card_model="MI210"} 41\ngpu_average_package_power{gpu_id="1"} 93\n'
    _, found = read(text)
    (gpu,) = found.gpus
    assert gpu.temperatures_c == (("edge", 41.0),) and gpu.power_w == 93.0 and gpu.name == "MI210"


def test_the_first_row_wins_where_two_fill_one_field() -> None:
    text = 'gpu_average_package_power{gpu_id="0"} 90\ngpu_package_power{gpu_id="0"} 500\n'
    _, found = read(text)
    assert found.gpus[0].power_w == 500.0  # gpu_package_power is listed first


def test_dcgm_blank_values_are_not_readings() -> None:
    text = (
        'DCGM_FI_DEV_GPU_TEMP{gpu="0",UUID="GPU-1"} 9223372036854775794\nDCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-1"} 5\n'
    )
    _, found = read(text)
    assert found.gpus[0].temperatures_c == () and found.gpus[0].utilization_pct == 5.0


def h200_sample():
    return loads(H200.read_text().splitlines()[-1])


def test_rocmtui_exports_own_page_reads_back_as_the_sample_it_served() -> None:
    from prometheus_client import CollectorRegistry, generate_latest

    from rocmtui.export.sample_collector import SampleCollector

    sample = h200_sample()
    registry = CollectorRegistry(auto_describe=False)
    registry.register(SampleCollector(lambda: sample, "h200-box"))
    _, found = read(generate_latest(registry).decode())
    assert found.exporter == "rocmtui-export" and found.hostname == "h200-box"
    (gpu,) = found.gpus
    served = sample.gpus[0]
    for name in ("index", "name", "uuid", "pci_bus_id", "memory_used_bytes", "memory_total_bytes", "power_w",
                 "power_cap_w", "temperatures_c", "temp_crit_c", "temp_emergency_c"):  # fmt: skip
        assert getattr(gpu, name) == getattr(served, name), name
    for name in ("utilization_pct", "memory_busy_pct", "sclk_mhz", "mclk_mhz"):
        assert getattr(gpu, name) == pytest.approx(getattr(served, name)), name
    assert found.host is not None and found.host.ram_total_bytes == sample.host.ram_total_bytes


def test_a_gpu_its_exporter_could_not_read_is_shown_with_an_error() -> None:
    _, found = read('rocmtui_gpu_up{gpu="0",hostname="h",name="X"} 0\n')
    assert found.gpus[0].error is not None


def test_every_row_names_a_field_of_the_sample_types() -> None:
    from dataclasses import fields

    from rocmtui.gpu.sample import GpuSample, HostSample

    gpu_fields = {f.name for f in fields(GpuSample)} | {"up", "memory_free_bytes", "memory_reserved_bytes"}
    host_fields = {f.name for f in fields(HostSample)}
    for row in TABLE:
        if row.target.startswith("host:"):
            assert row.target[5:] in host_fields
        elif not row.target.startswith("temperature:"):
            assert row.target in gpu_fields, row


def test_a_bad_line_costs_that_line_only() -> None:
    good = page_of("dcgm-exporter-t4.prom").splitlines()
    broken = [*good[:5], 'DCGM_FI_DEV_GPU_UTIL{gpu="0" 12', "DCGM_FI_DEV_FB_USED{gpu=} x", *good[5:]]
    page, found = read("\n".join(broken) + "\n")
    assert page.malformed == 2
    assert found.gpus[0].utilization_pct == 91.0 and found.gpus[0].memory_used_bytes == 5120 * MIB


def test_hostile_label_text_is_plain_when_printed() -> None:
    text = (
        'DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-1",modelName="\\u001b]52;c;bad\\u0007",Hostname="evil\\u001b[2J"} 5\n'
    )
    text = text.replace("\\u001b", "\x1b").replace("\\u0007", "\x07")
    _, found = read(text)
    host = HostReading("10.0.0.1:9400", up=True, timestamp=1.0, gpus=found.gpus, hostname=found.hostname,
                       exporter=found.exporter)  # fmt: skip
    printed = format_round(ClusterRound(1.0, "scrape", (host,)))
    assert "\x1b" not in printed and "\x07" not in printed and "\\x1b" in printed


def test_totals_count_only_gpus_read() -> None:
    _, found = read(page_of("amd-device-metrics-exporter-mi300x.prom"))
    up = HostReading("a:1", up=True, timestamp=1.0, gpus=found.gpus)
    down = HostReading("b:1", up=False, timestamp=1.0, error="connection refused")
    t = totals(ClusterRound(1.0, "scrape", (up, down)))
    assert (t.hosts_up, t.hosts_down, t.gpus) == (1, 1, 2)
    assert t.mean_util_pct == 50.0 and t.power_w == 612.0 + 132.0


METRIC_NAMES = st.sampled_from([row.metric for row in TABLE] + ["amd_gpu_gfx_activity", "other"])
LINE = st.one_of(
    st.text(max_size=80),
    st.builds(
        lambda name, labels, value: f"{name}{{{labels}}} {value}",
        METRIC_NAMES,
        st.text(max_size=40),
        st.one_of(st.floats(allow_nan=True), st.text(max_size=8)),
    ),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(LINE, max_size=20))
def test_no_page_makes_the_reader_raise(lines) -> None:
    page, found = read("\n".join(lines))
    assert page.malformed >= 0
    for gpu in found.gpus:
        assert gpu.index >= 0


TAIL = st.one_of(st.floats(allow_nan=True).map(repr), st.text(max_size=8), st.just(""))


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(sorted(p.name for p in EXPORTERS.glob("*.prom"))),
    st.lists(st.tuples(st.integers(0, 400), TAIL, st.sampled_from([" ", "  ", "\t", " 1 ", ""])), max_size=10),
)
def test_a_line_read_from_the_cache_of_lines_read_whole_reads_as_a_fresh_reader_reads_it(
    name: str, changes: list[tuple[int, str, str]]
) -> None:
    """Lines of a real page with new values, odd blanks and junk after their ``name{labels}``: a reader whose
    LabelCache has read that page (so takes most of them from ``LabelCache.lines``) reads what a new one reads."""
    from rocmtui.gpu.cluster import exposition

    names = Names()
    lines = page_of(name).splitlines()
    warm = exposition.LabelCache()
    parse_page("\n".join(lines), names.wanted, warm)
    for at, tail, blank in changes:
        i = at % len(lines)
        head = lines[i].rsplit(" ", 1)[0]
        lines[i] = f"{head}{blank}{tail}"
    text = "\n".join(lines)
    warmed, fresh = parse_page(text, names.wanted, warm), parse_page(text, names.wanted, exposition.LabelCache())
    assert [(s.name, s.labels, s.value) for s in warmed.samples] == [(s.name, s.labels, s.value) for s in fresh.samples]
    assert warmed.malformed == fresh.malformed


def test_docs_show_every_row_of_the_table() -> None:
    docs = (Path(__file__).resolve().parents[2] / "docs" / "cluster.md").read_text()
    for row in TABLE:
        assert f"`{row.metric}" in docs and f"`{row.target}`" in docs, row


@pytest.mark.parametrize("name", sorted(p.name for p in EXPORTERS.glob("*.prom")))
def test_the_label_cache_reads_what_the_official_parser_reads(name: str) -> None:
    from prometheus_client.parser import text_string_to_metric_families

    from rocmtui.gpu.cluster.exposition import LabelCache

    text, names = page_of(name), Names()
    official = [(s.name, s.labels, s.value) for f in text_string_to_metric_families(text) for s in f.samples
                if names.wanted(s.name)]  # fmt: skip
    cache = LabelCache()
    for _ in range(2):  # the second time from the cache
        page = parse_page(text, names.wanted, cache)
        assert [(s.name, s.labels, s.value) for s in page.samples] == official


@pytest.mark.parametrize(
    "line",
    [
        'm{a="b"} 1_000',
        'm{a="b"} 1 2 3',
        'm{a="b"}',
        'm{a="b" 1',
        "m 1 x",
        "m{a=b} 1",
        'm{__a="b"} 1',
        'm{x="y",__="b"} 1',
    ],
)
def test_values_and_labels_the_official_parser_refuses_are_malformed(line: str) -> None:
    page = parse_page(line + "\n", lambda _: True)
    assert (page.samples, page.malformed) == ((), 1)


def _count_lines_read(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """From now on, every line the exposition reader reads (one by one), listed."""
    read: list[str] = []
    real = exposition._read_line

    def counted(text: str, *rest: Any) -> Any:
        read.append(text)
        return real(text, *rest)

    monkeypatch.setattr(exposition, "_read_line", counted)
    return read


@pytest.mark.parametrize("name", sorted(p.name for p in EXPORTERS.glob("*.prom")))
def test_a_page_read_with_the_last_ones_lines_reads_the_same_and_reads_only_changed_lines(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rocmtui.gpu.cluster import exposition

    text, names = page_of(name), Names()
    first = parse_page(text, names.wanted, exposition.LabelCache())
    first_line = next(line for line in text.splitlines() if first.lines.get(line) is not None)
    changed = text.replace(first_line, first_line.rsplit(" ", 1)[0] + " 7", 1)
    fresh = read(changed)[0]
    read_lines = _count_lines_read(monkeypatch)
    again = parse_page(changed, names.wanted, exposition.LabelCache(), first.lines)
    assert [(s.name, s.labels, s.value) for s in again.samples] == [(s.name, s.labels, s.value) for s in fresh.samples]
    assert again.malformed == fresh.malformed
    assert read_lines == [first_line.rsplit(" ", 1)[0] + " 7"]  # the one changed line, no other
    kept = [s for s in again.samples if s in first.samples]
    assert len(kept) == len(again.samples) - 1 and all(any(s is f for f in first.samples) for s in kept)


def test_a_malformed_line_is_counted_at_every_page_not_only_the_first() -> None:
    names = Names()
    text = 'DCGM_FI_DEV_GPU_UTIL{gpu="0"} 3\nDCGM_FI_DEV_GPU_TEMP{gpu="0" 40\n'
    first = parse_page(text, names.wanted)
    second = parse_page(text.replace("} 3", "} 4"), names.wanted, None, first.lines)
    assert (first.malformed, second.malformed) == (1, 1)
    assert [s.value for s in second.samples] == [4.0]


def test_fold_works_out_a_samples_fields_once_for_the_same_labels_and_again_for_others() -> None:
    from rocmtui.gpu.cluster.exposition import Sample

    labels = {"gpu": "0", "UUID": "GPU-1", "modelName": "T4"}
    names = Names()
    first = fold([Sample("DCGM_FI_DEV_GPU_UTIL", labels, 5.0)], 1.0, names)
    assert names.steps("DCGM_FI_DEV_GPU_UTIL", labels) is names.steps("DCGM_FI_DEV_GPU_UTIL", labels)
    second = fold([Sample("DCGM_FI_DEV_GPU_UTIL", labels, 6.0)], 2.0, names)
    other = fold([Sample("DCGM_FI_DEV_GPU_UTIL", {**labels, "gpu": "1"}, 7.0)], 3.0, names)
    assert [(g.index, g.name, g.utilization_pct) for g in first.gpus + second.gpus + other.gpus] == [
        (0, "T4", 5.0), (0, "T4", 6.0), (1, "T4", 7.0)
    ]  # fmt: skip
    unkept = Names(labels_reused=False)
    assert unkept.steps("DCGM_FI_DEV_GPU_UTIL", labels) is not unkept.steps("DCGM_FI_DEV_GPU_UTIL", labels)


VALUES = st.sampled_from([0.0, -0.0, 7.0, 91.0, 1e3, 9.3e18, -9.3e18, float("nan")]) | st.floats(-1e6, 1e6)


@settings(max_examples=200, deadline=None)
@given(
    name=st.sampled_from(sorted(p.name for p in EXPORTERS.glob("*.prom"))),
    rounds=st.lists(st.dictionaries(st.integers(0, 400), VALUES, max_size=12), min_size=1, max_size=4),
)
def test_folding_again_with_the_last_fold_at_hand_gives_what_a_fold_anew_gives(
    name: str, rounds: list[dict[int, float]]
) -> None:
    """Pages of the same exporter, some values new (blank sentinels and NaN among them): folded with the last fold
    at hand, they give the GPUs a fold from nothing gives; a GPU none of whose values changed is the same object."""
    from rocmtui.gpu.cluster import exposition
    from rocmtui.gpu.cluster.mapping import fold_again

    names, labels = Names(), exposition.LabelCache()
    lines = page_of(name).splitlines()
    page = parse_page("\n".join(lines), names.wanted, labels)
    found, folded = fold_again(page.samples, 1.0, names, None)
    values = [i for i, line in enumerate(lines) if page.lines.get(line) is not None]
    for changes in rounds:
        for at, value in changes.items():
            i = values[at % len(values)]
            lines[i] = f"{lines[i].rsplit(' ', 1)[0]} {value!r}"
        page = parse_page("\n".join(lines), names.wanted, labels, page.lines)
        found, folded = fold_again(page.samples, 1.0, names, folded)
        assert repr(found) == repr(fold(page.samples, 1.0, Names()))  # repr: -0.0 and 0.0 apart


def test_folding_again_makes_only_the_gpu_whose_value_changed() -> None:
    from rocmtui.gpu.cluster import exposition
    from rocmtui.gpu.cluster.mapping import fold_again

    names, labels = Names(), exposition.LabelCache()
    text = page_of("amd-device-metrics-exporter-mi300x.prom")
    page = parse_page(text, names.wanted, labels)
    first, folded = fold_again(page.samples, 1.0, names, None)
    line = next(x for x in text.splitlines() if x.startswith("gpu_gfx_activity{") and 'gpu_id="2"' in x)
    again = parse_page(text.replace(line, line.rsplit(" ", 1)[0] + " 42"), names.wanted, labels, page.lines)
    second, _ = fold_again(again.samples, 2.0, names, folded)
    assert second.gpus[0] is first.gpus[0]
    assert (second.gpus[1].utilization_pct, second.gpus[1].timestamp) == (42.0, 2.0)


LABEL_NAME = st.from_regex(r"[a-zA-Z_][a-zA-Z0-9_]{0,6}", fullmatch=True) | st.text(max_size=4)
LABEL_VALUE = st.text(max_size=12) | st.sampled_from(["", "a b", "x=y", "{}", ",", "é", "\t", "\x00", "\\"])
HEAD = st.builds(
    lambda name, pairs, sep, close: name + ("{" + sep.join(f'{k}="{v}"' for k, v in pairs) + close if pairs else ""),
    st.from_regex(r"[a-zA-Z_:][a-zA-Z0-9_:]{0,8}", fullmatch=True) | st.text(max_size=6),
    st.lists(st.tuples(LABEL_NAME, LABEL_VALUE), max_size=4),
    st.sampled_from([",", ", ", ",,"]),
    st.sampled_from(["}", ",}", ""]),
)


@settings(max_examples=500, deadline=None)
@given(HEAD)
def test_a_head_read_without_the_official_parser_reads_as_it_reads_it(head: str) -> None:
    """``name{labels}`` heads in and near the plainest form: the short way reads one as the official parser does,
    or leaves it to the official parser."""
    from prometheus_client.parser import text_string_to_metric_families

    from rocmtui.gpu.cluster.exposition import _plain_head

    short = _plain_head(head)
    if short is None:
        return
    samples = [s for family in text_string_to_metric_families(head + " 0\n") for s in family.samples]
    assert len(samples) == 1 and (samples[0].name, samples[0].labels) == short


PIECE_CHANGE = st.one_of(
    VALUES.map(repr),  # a new value
    st.sampled_from(["NaN", "x", "1 2 3", "", "7\r", "7\x0c8", "\udcff"]),  # no sample, malformed, odd
    st.sampled_from(
        [
            "+5",
            "-0",
            "5.",
            ".5",
            "1E5",
            "1e",
            "e",
            "+-1",
            "1.2.3",
            "-",
            "1e400",
            "1" * 400,
            "1" * 5000,
            "0" * 70_000,
            "1_0",
            "\u0661",  # an Arabic-Indic digit: int() reads it in text
            "0x1f",
            "inf",
            "-Inf",
        ]
    ),  # digits, signs, points and exponents: numbers or not
    st.text("0123456789.eE+-", max_size=6),
    st.sampled_from(["\x0b", "\x0c", "\x1e", "\x85", "\u2028", "\r"]).map(
        lambda brk: f'7{brk}DCGM_FI_DEV_GPU_UTIL{{gpu="0"}} 9'  # a line break other than a newline, then a sample
    ),
)


SHAPES = ["same", "line added", "line dropped", "no last newline", "a line after the last newline", "invalid UTF-8"]


@settings(max_examples=200, deadline=None)
@given(
    name=st.sampled_from(sorted(p.name for p in EXPORTERS.glob("*.prom"))),
    rounds=st.lists(
        st.tuples(
            st.dictionaries(st.integers(0, 400), PIECE_CHANGE, max_size=12),
            st.sampled_from(SHAPES),
        ),
        min_size=1,
        max_size=4,
    ),
)
def test_a_page_read_by_its_changed_pieces_reads_as_the_page_read_whole(
    name: str, rounds: list[tuple[dict[int, str], str]]
) -> None:
    """Pages of the same exporter as bytes, some lines with new values, values that are none or malformed, other
    line breaks, invalid UTF-8, a line more or less: read with the last page at hand (``read_page``), each gives
    the samples and the count of malformed lines that the page decoded and read whole gives; the samples it says
    are unchanged are the last page's own; and folded with the positions it names, the GPUs of a fold anew."""
    from rocmtui.gpu.cluster import exposition
    from rocmtui.gpu.cluster.mapping import fold_again

    names, labels = Names(), exposition.LabelCache()
    lines = page_of(name).encode().split(b"\n")
    page, changed = exposition.read_page(b"\n".join(lines), names.wanted, labels)
    found, folded = fold_again(page.samples, 1.0, names, None, changed)
    for changes, shape in rounds:
        for at, tail in changes.items():
            i = at % len(lines)
            lines[i] = lines[i].rsplit(b" ", 1)[0] + b" " + tail.encode("utf-8", errors="surrogateescape")
        if shape == "line added":
            lines.insert(len(lines) // 2, b"# a comment")
        elif shape == "line dropped" and len(lines) > 1:
            del lines[len(lines) // 2]
        elif shape == "invalid UTF-8":
            lines[len(lines) // 3] += b"\xe2\x80"
        raw = b"\n".join(lines) + (b"" if shape == "no last newline" else b"\n")
        if shape == "a line after the last newline":  # as many pieces, the last one not blank
            raw += b'DCGM_FI_DEV_GPU_UTIL{gpu="0"} 5'
        last = page
        page, changed = exposition.read_page(raw, names.wanted, labels, last)
        whole = parse_page(raw.decode("utf-8", errors="replace"), names.wanted, exposition.LabelCache())
        assert [(s.name, s.labels, s.value) for s in page.samples] == [
            (s.name, s.labels, s.value) for s in whole.samples
        ]
        assert page.malformed == whole.malformed
        if changed is not None:
            assert len(page.samples) == len(last.samples)
            assert all(page.samples[i] is last.samples[i] for i in range(len(page.samples)) if i not in changed)
        found, folded = fold_again(page.samples, 1.0, names, folded, changed)
        assert repr(found) == repr(fold(page.samples, 1.0, Names()))  # repr: -0.0 and 0.0 apart


@settings(max_examples=300, deadline=None)
@given(
    name=st.sampled_from(sorted(p.name for p in EXPORTERS.glob("*.prom"))),
    rounds=st.lists(st.dictionaries(st.integers(0, 400), PIECE_CHANGE, max_size=6), min_size=1, max_size=5),
)
@example(name="dcgm-exporter-t4.prom", rounds=[{0: "0" * 70_000}])  # a line too long to read: malformed
def test_a_changed_line_read_by_its_head_as_bytes_reads_as_the_page_read_whole(
    name: str, rounds: list[dict[int, str]]
) -> None:
    """The lines of a real page that hold samples, each changed twice first (so that its head is known as bytes),
    then given new tails (plain numbers, numbers out of range, text near a number, no value, junk, other line
    breaks): read with the last page at hand, each page gives what it gives decoded and read whole."""
    from rocmtui.gpu.cluster import exposition

    names, labels = Names(), exposition.LabelCache()
    lines = page_of(name).encode().split(b"\n")
    page, _ = exposition.read_page(b"\n".join(lines), names.wanted, labels)
    values = [i for i, kind in enumerate(page.kinds) if kind >= 0]
    warm = [dict.fromkeys(range(len(values)), value) for value in ("0", "1")]
    for changes in [*warm, *rounds]:
        for at, tail in changes.items():
            i = values[at % len(values)]
            lines[i] = lines[i].rsplit(b" ", 1)[0] + b" " + tail.encode("utf-8", errors="surrogateescape")
        raw = b"\n".join(lines)
        page, _ = exposition.read_page(raw, names.wanted, labels, page)
        whole = parse_page(raw.decode("utf-8", errors="replace"), names.wanted, exposition.LabelCache())
        assert [(s.name, s.labels, s.value) for s in page.samples] == [
            (s.name, s.labels, s.value) for s in whole.samples
        ]
        assert page.malformed == whole.malformed
    assert labels.raw_lines


def test_a_changed_line_whose_head_was_read_from_bytes_before_is_not_decoded_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from rocmtui.gpu.cluster import exposition

    names, labels = Names(), exposition.LabelCache()
    raw = (EXPORTERS / "dcgm-exporter-t4.prom").read_bytes()
    line = next(x for x in raw.split(b"\n") if x.startswith(b"DCGM_FI_DEV_GPU_UTIL{"))
    head = line.rsplit(b" ", 1)[0]
    first, _ = exposition.read_page(raw, names.wanted, labels)
    second, _ = exposition.read_page(raw.replace(line, head + b" 7"), names.wanted, labels, first)
    read = _count_lines_read(monkeypatch)
    third, changed = exposition.read_page(raw.replace(line, head + b" 8.5"), names.wanted, labels, second)
    assert read == []  # the head known as bytes, the value plain: read without the line decoded
    assert changed is not None and [third.samples[i].value for i in changed] == [8.5]
    assert third.samples[changed[0]].labels is second.samples[changed[0]].labels
    exposition.read_page(raw.replace(line, head + b" 9 1700000000"), names.wanted, labels, third)
    assert read == [head.decode() + " 9 1700000000"]  # a value and a timestamp: read as text


def test_a_changed_page_is_read_by_its_changed_lines_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    from rocmtui.gpu.cluster import exposition

    names, labels = Names(), exposition.LabelCache()
    raw = (EXPORTERS / "dcgm-exporter-t4.prom").read_bytes()
    first, _ = exposition.read_page(raw, names.wanted, labels)
    line = next(x for x in raw.split(b"\n") if x.startswith(b"DCGM_FI_DEV_GPU_UTIL{"))
    read = _count_lines_read(monkeypatch)
    monkeypatch.setattr(exposition, "parse_page", None)  # the page is not read whole
    again, changed = exposition.read_page(raw.replace(line, line.rsplit(b" ", 1)[0] + b" 7"), names.wanted, labels,
                                          first)  # fmt: skip
    assert read == [line.rsplit(b" ", 1)[0].decode() + " 7"]
    assert changed is not None and len(changed) == 1 and again.samples[changed[0]].value == 7.0
