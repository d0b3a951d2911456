"""The rank table's lines: each rank's GPU found by UUID or PCI address (never by index), its speed, a
straggler and a failure marked."""

from __future__ import annotations

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


def view(rank: int, speed: float) -> RankView:
    out = RankView(rank, started(rank, uuid=GPUS[rank].uuid), RankProgress(rank, 0, 500, speed, 2.0))
    out.speeds.append(speed)
    return out


def test_lines_name_the_gpu_and_mark_a_straggler_and_a_failure() -> None:
    text = rank_lines([view(0, 50_000.0), view(1, 30_000.0)], GPUS).plain.splitlines()
    assert text[0].split() == ["rank", "0", "GPU", "0", "step", "500", "50,000", "img/s"]
    assert text[1].endswith("slow") and "GPU 1" in text[1]
    failed = RankView(1, started(1, uuid="GPU-bbbb"), None, RankFailed(1, "out of GPU memory", "oom"))
    assert "failed: out of GPU memory" in rank_lines([view(0, 1.0), failed], GPUS).plain
    starting = RankView(1, started(1, device="cpu"))
    assert rank_lines([starting], []).plain.split() == ["rank", "1", "cpu", "starting"]
