"""Frozen run settings shared by the CLI, the engine and the UI; plain values only."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rocmtui.codec import convert, to_builtins

DATASETS: dict[str, str] = {
    "cifar": "cifar10",
    "cifar10": "cifar10",
    "mnist": "mnist",
    "fashionmnist": "fashionmnist",
    "fashion-mnist": "fashionmnist",
}
"""Names accepted on the command line, mapped to the engine's canonical dataset name."""

MODELS: tuple[str, ...] = ("simplecnn", "fastnet", "resnet18")
OPTIMIZERS: tuple[str, ...] = ("adam", "adamw", "sgd")
SCHEDULES: tuple[str, ...] = ("constant", "onecycle", "linear")
AMP_MODES: tuple[str, ...] = ("off", "bf16", "fp16")
BACKENDS: tuple[str, ...] = ("auto", "rocm", "sysfs", "nvml", "host")


@dataclass(frozen=True)
class TrainConfig:
    """One training run. Defaults reproduce the ROCm guide's CIFAR-10 reference workload."""

    dataset: str = "cifar10"
    """Canonical dataset name, a value of ``DATASETS``."""
    model: str = "simplecnn"
    """One of ``MODELS``."""
    epochs: int = 5
    """Epochs to train (counted from 0, including any already done when resuming); 0 with ``resume``:
    the saved run's own."""
    batch_size: int = 64
    """Images per optimizer step."""
    lr: float = 1e-3
    """Peak learning rate."""
    optimizer: str = "adam"
    """One of ``OPTIMIZERS``; ``sgd`` uses Nesterov momentum 0.9."""
    schedule: str = "constant"
    """Learning-rate schedule, one of ``SCHEDULES``."""
    weight_decay: float = 0.0
    """Decoupled (adamw) or L2 (adam, sgd) weight decay."""
    label_smoothing: float = 0.0
    """Cross-entropy label smoothing, 0 to <1."""
    augment: bool = False
    """Random crop (pad 4 or translate) and horizontal flip, on the GPU."""
    amp: str = "off"
    """Autocast dtype, one of ``AMP_MODES``; fp16 adds a GradScaler."""
    channels_last: bool = False
    """Use the channels_last memory format for model and batches."""
    compile: bool = False
    """Wrap the model in ``torch.compile``."""
    cuda_graph: bool = False
    """Capture the whole training step in a CUDA/HIP graph where that is safe."""
    seed: int = 0
    """Seed for torch, the data order and augmentation."""
    data_dir: Path | None = None
    """A torchvision-layout data folder; None searches the cache, then the bundled sample."""
    download: bool = False
    """Allow torchvision to download the dataset into ``data_dir`` or the cache."""
    runs_dir: Path = Path("runs")
    """Where run folders are created."""
    resume: Path | None = None
    """A run folder or checkpoint file to continue from."""
    device: str = "auto"
    """``auto``, ``cpu``, ``cuda`` or ``cuda:N`` (ROCm builds of PyTorch also use ``cuda``)."""
    emit_interval_s: float = 0.25
    """Seconds between StepsCompleted events (the only moments the loop syncs with the GPU)."""
    checkpoint_every_epoch: bool = True
    """Write ``checkpoint-last.pt`` at the end of every epoch."""
    max_steps_per_epoch: int | None = None
    """Cap on optimizer steps per epoch (None: the whole training split). For tests and quick benches;
    not a command-line flag."""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready copy: paths as strings."""
        out: dict[str, Any] = to_builtins(self)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TrainConfig:
        """Inverse of ``to_dict``, validated (CodecError names a bad field); unknown keys are ignored so older
        run folders still load."""
        return convert(data, cls, what="bad run settings")


@dataclass(frozen=True)
class MonitorConfig:
    """Telemetry settings shared by ``monitor``, the training screen and ``bench``."""

    interval_s: float = 1.0
    """Seconds between samples, 0.1 to 60."""
    history_len: int = 600
    """Samples kept per device (600 at 1 s is 10 minutes); memory stays flat."""
    backend: str = "auto"
    """One of ``BACKENDS``; ``auto`` tries rocm, sysfs, nvml in that order, then the host alone."""
    sysfs_root: Path = Path("/sys")
    """Root of the sysfs tree (tests point it at a fake tree)."""
    proc_root: Path = Path("/proc")
    """Root of procfs, where per-process GPU memory is read from DRM fdinfo (tests point it at a fake)."""
    theme: str = "textual-dark"
    """Textual theme name."""

    MIN_INTERVAL_S = 0.1
    MAX_INTERVAL_S = 60.0
