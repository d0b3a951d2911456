"""The device a run trains on, and its settings fitted to it: what this machine refuses, and what it would crawl at."""

from __future__ import annotations

import platform
from dataclasses import replace

import torch

from rocmtui.base.errors import UsageError
from rocmtui.base.ranges import NEWTON_SCHULZ_RANGE
from rocmtui.config import TrainConfig
from rocmtui.gpu.host import read_cpu_name
from rocmtui.train.data import SPECS


def settle(config: TrainConfig) -> tuple[torch.device, TrainConfig]:
    """The device ``config`` trains on and the settings it trains with there (``resolve_device``, then
    ``fit_to_device``); UsageError for settings this machine cannot run."""
    device = resolve_device(config)
    return device, fit_to_device(config, device)


def resolve_device(config: TrainConfig) -> torch.device:
    """``auto`` picks the first GPU if torch sees one; UsageError for settings this device cannot run."""
    if config.device == "auto":
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    else:
        device = torch.device(config.device)
    if device.type == "cuda":
        if not torch.cuda.is_available():
            raise UsageError(f"--device {config.device}: torch sees no GPU here (a CPU-only build?); use --device cpu")
        if device.index is not None and device.index >= torch.cuda.device_count():
            raise UsageError(f"--device {config.device}: only {torch.cuda.device_count()} GPU(s) are visible")
    if config.cuda_graph and device.type != "cuda" and "cuda_graph" in config.given:
        raise UsageError("--cuda-graph needs a GPU; drop it to train on the CPU")
    if config.optimizer == "muon" and config.model != "fastnet":
        given = "--optimizer muon" if "optimizer" in config.given else "the fast recipe's --optimizer muon"
        raise UsageError(f"{given} is tuned for fastnet's layers; with --model {config.model} give --optimizer sgd")
    if config.cuda_graph and config.compile:
        raise UsageError("choose one of --cuda-graph and --compile")
    _check_crops(config)
    _check_newton_schulz(config)
    if config.several_ranks:
        _check_ranks(config, device)
    return device


def _check_crops(config: TrainConfig) -> None:
    if not config.crop_sizes:
        return
    if not config.augment:
        raise UsageError("--crop-sizes crops as part of --augment; give --augment too")
    if config.model == "simplecnn":
        raise UsageError("--crop-sizes needs a model that takes any image size (fastnet or resnet18), not simplecnn")
    size = SPECS[config.dataset].size
    if max(config.crop_sizes) > size:
        raise UsageError(f"--crop-sizes: a crop cannot be larger than {config.dataset}'s {size}x{size} images")


def _check_newton_schulz(config: TrainConfig) -> None:
    """The range the option accepts, checked here too: a resumed run's settings come from its folder."""
    low, high = NEWTON_SCHULZ_RANGE
    if not low <= config.newton_schulz_steps <= high:
        raise UsageError(f"--newton-schulz-steps {config.newton_schulz_steps}: give {low} to {high} iterations")
    if "newton_schulz_steps" in config.given and config.optimizer != "muon":
        raise UsageError(f"--newton-schulz-steps is Muon's; with --optimizer {config.optimizer} leave it out")


def _check_ranks(config: TrainConfig, device: torch.device) -> None:
    if config.cuda_graph and "cuda_graph" in config.given:
        raise UsageError(
            "--cuda-graph cannot run with --nproc or --nnodes above 1 (DDP's all-reduce is not captured); drop one"
        )
    if device.type == "cuda":
        if device.index is not None:
            raise UsageError(
                f"--device {config.device} names one GPU; with --nproc use --device cuda (rank N uses GPU N)"
            )
        if config.nproc > torch.cuda.device_count():
            raise UsageError(f"--nproc {config.nproc}: only {torch.cuda.device_count()} GPU(s) are visible")


def fit_to_device(config: TrainConfig, device: torch.device) -> TrainConfig:
    """A recipe's settings where they cannot run or would crawl. A CUDA graph without a GPU or with several
    ranks: the run trains without it (typed on the command line, it is refused by ``resolve_device`` instead).
    Mixed precision on a CPU without bf16 instructions, where autocast is emulated (fastnet's forward pass
    about 25 times slower than in fp32): the run trains in fp32 (typed, it is kept)."""
    if config.cuda_graph and (device.type != "cuda" or config.several_ranks):
        config = replace(config, cuda_graph=False)
    if device.type == "cpu" and config.amp != "off" and "amp" not in config.given and not cpu_has_bf16():
        config = replace(config, amp="off")
    return config


def cpu_has_bf16() -> bool:
    """Whether this CPU runs bf16 matrix work natively (AVX512-BF16 or AMX), as oneDNN reports it."""
    try:
        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):  # a build without oneDNN: assume the slow path
        return False


def describe_device(device: torch.device) -> tuple[str, str]:
    """(human name, backend) e.g. ('NVIDIA H200', 'CUDA 13.0') or ('AMD Radeon ...', 'ROCm 6.2')."""
    if device.type != "cuda":
        return read_cpu_name() or platform.machine() or "CPU", "CPU"
    name = torch.cuda.get_device_name(device)
    hip = getattr(torch.version, "hip", None)
    return name, f"ROCm {hip}" if hip else f"CUDA {torch.version.cuda}"
