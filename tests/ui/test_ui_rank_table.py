"""The rank table's lines: each rank's GPU found by UUID or PCI address (never by index), its speed, a
straggler and a failure marked."""

from __future__ import annotations

import msgspec

from rocmtui.gpu.sample import GpuSample
from rocmtui.run.rank_streams import RankFailed, RankProgress, RankStarted, RankView
from rocmtui.ui.widgets.rank_table import gpu_of, rank_lines


def gpu(index: int, uuid: str | None, pci: str | None) -> GpuSample:
    return GpuSample(index=index, name="NVIDIA H200", timestamp=0.0, uuid=uuid, pci_bus_id=pci)


def started(rank: int, uuid: str | None = None, pci: str | None = None, device: str = "cuda:0") -> RankStarted:
    return RankStarted(rank, 2, 10 + rank, "host", device, "NVIDIA H200", uuid, pci)


GPUS = [gpu(0, "GPU-aaaa", "00000000:1B:00.0"), gpu(1, "GPU-bbbb", "00000000:43:00.0")]


def test_a_rank_is_matched_by_uuid_whatever_its_device_index() -> None:
    # CUDA_VISIBLE_DEVICES=1: the rank calls its GPU cuda:0, but it is the host's GPU 1
    assert gpu_of(started(0, uuid="GPU-BBBB", device="cuda:0"), GPUS) is GPUS[1]


def test_without_a_uuid_the_pci_address_matches_in_any_spelling() -> None:
    assert gpu_of(started(0, pci="0000:43:00.0"), GPUS) is GPUS[1]  # sysfs / amd-smi spelling
    assert gpu_of(started(0, pci="00000000:1b:00.0"), GPUS) is GPUS[0]
    assert gpu_of(started(0, uuid="GPU-cccc", pci="0000:99:00.0"), GPUS) is None


NOW = 1_790_000_000.0


def view(rank: int, speed: float, node: int = 0) -> RankView:
    out = RankView(rank)
    out.take(msgspec.structs.replace(started(rank, uuid=GPUS[rank % 2].uuid), node_rank=node, host=f"h{node}"))
    out.take(RankProgress(rank, 0, 500, speed, 2.0, step_s=0.05, busy_s=0.05 * 50_000 / speed, wall=NOW))
    return out


def test_lines_name_the_gpu_and_mark_a_straggler_and_a_failure() -> None:
    text = rank_lines([view(0, 50_000.0), view(1, 30_000.0)], GPUS, now=NOW, live=True).plain.splitlines()
    assert text[0] == "1 node, 2 ranks; straggler: rank 1 (node 0, h0, step 500)"
    assert text[1].split() == ["rank", "device", "step", "step", "med/max", "speed", "beat", "recent", "state"]
    assert text[2].split()[:5] == ["rank", "0", "GPU", "0", "500"] and "50,000/s" in text[2]
    assert "straggler: 67% slower than the median rank" in text[3] and "GPU 1" in text[3]
    assert all(len(line) <= 78 for line in text[1:3])  # 80 columns, less the padding
    failed = RankView(1, started(1, uuid="GPU-bbbb"), None, RankFailed(1, "out of GPU memory", "oom"))
    assert "failed: out of GPU memory" in rank_lines([view(0, 1.0), failed], GPUS, now=NOW, live=True).plain
    starting = RankView(1, started(1, device="cpu"))
    line = rank_lines([starting], [], now=NOW, live=True).plain.splitlines()[2]
    assert line.split() == ["rank", "1", "cpu", "0", "-", "-", "-", "starting"]


def test_several_nodes_are_headed_by_their_host_and_a_finished_run_names_no_one() -> None:
    views = [view(2, 30_000.0, node=1), view(0, 50_000.0), view(1, 50_000.0), view(3, 50_000.0, node=1)]
    lines = rank_lines(views, GPUS, now=NOW, live=True).plain.splitlines()
    assert lines[0].startswith("2 nodes, 4 ranks; straggler: rank 2 (node 1, h1")
    assert [line.split()[:2] for line in lines[2:]] == [
        ["node", "0"],
        ["rank", "0"],
        ["rank", "1"],
        ["node", "1"],
        ["rank", "2"],
        ["rank", "3"],
    ]
    ended = rank_lines(views, GPUS, now=NOW + 3600, live=False).plain
    assert ended.splitlines()[0] == "2 nodes, 4 ranks" and "straggler" not in ended and "stalled" not in ended


def test_a_ranks_host_device_and_message_are_drawn_as_text() -> None:
    evil = "\x1b]52;c;ZXZpbA==\x07\x1b[2J[bold]x[/]"
    view = RankView(0)
    view.take(RankStarted(0, 2, 1, evil, f"cpu{evil}", node_rank=1, wall=NOW))
    view.take(RankFailed(0, f"boom {evil}", wall=NOW))
    shown = rank_lines([view], GPUS, now=NOW, live=True)
    assert "\x1b" not in shown.plain and "\x07" not in shown.plain
    assert "\\x1b]52;c;ZXZpbA==" in shown.plain and "[bold]x[/]" in shown.plain  # markup kept as text
    assert all(span.style in ("bold", "dim", "bold red", "") for span in shown.spans)
