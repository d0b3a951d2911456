"""Everything a run needs, built once: device, data on it, model, optimizer, the step function."""

from __future__ import annotations

import math
import platform
from dataclasses import dataclass, fields, replace
from typing import Any

import torch
from torch import nn

from rocmtui.config import TrainConfig, train_options
from rocmtui.errors import UsageError
from rocmtui.gpu.host import read_cpu_name
from rocmtui.train import fused, models
from rocmtui.train.data import Arrays
from rocmtui.train.distributed import SINGLE, Ranks, shard_size, wrap
from rocmtui.train.fused import OFF as FUSED_OFF
from rocmtui.train.fused import Plan as FusedPlan
from rocmtui.train.gpudata import (
    Augmentation,
    DeviceData,
    Normalizer,
    alternating_flips,
    augment,
    batch_indices,
    permutation,
    to_device,
)
from rocmtui.train.optim import build_optimizer
from rocmtui.train.optimizer import FunctionalOptimizer
from rocmtui.train.stats import Stats
from rocmtui.train.step import EagerStep, GraphStep

FLIP_SEED_OFFSET = 0x5EED
"""The alternating flips are drawn from the seed plus this, apart from the data order's generator."""


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
    if config.nproc > 1:
        _check_ranks(config, device)
    if config.cuda_graph and config.amp == "fp16":
        raise UsageError("--cuda-graph cannot run with --amp fp16 (its GradScaler syncs); use --amp bf16")
    return device


def _check_ranks(config: TrainConfig, device: torch.device) -> None:
    if config.cuda_graph and "cuda_graph" in config.given:
        raise UsageError("--cuda-graph cannot run with --nproc above 1 (DDP's all-reduce is not captured); drop one")
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
    if config.cuda_graph and (device.type != "cuda" or config.nproc > 1):
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


@dataclass
class Engine:
    """The built run. ``gen`` draws the data order and augmentation; it is saved in checkpoints."""

    config: TrainConfig
    device: torch.device
    data: DeviceData
    model: nn.Module
    optimizer: FunctionalOptimizer
    eager: EagerStep
    step: EagerStep | GraphStep
    gen: torch.Generator
    stats: Stats
    steps_per_epoch: int
    full_batches: bool
    """Whether every batch has ``batch_size`` images (the CUDA graph needs fixed shapes)."""
    eval_model: nn.Module
    """What evaluation runs: the trained model (compiled if asked), never its DDP wrapper (no collectives)."""
    aug_gen: torch.Generator
    """Draws the augmentation: ``gen`` itself in a single-process run; one per rank in a DDP run, so that the
    ranks share the data order but not their crops and flips."""
    augmentation: Augmentation
    """What ``--augment`` does for this model."""
    flip_base: torch.Tensor | None
    """With alternating flips: whether each training image is mirrored in even epochs (drawn once from the
    seed, so a resumed run draws the same)."""
    ranks: Ranks = SINGLE
    train_count: int = 0
    """Images this rank trains on per epoch (its shard)."""
    data_print: dict[str, str | int] | None = None
    """The data's fingerprint for checkpoints (``state.data_fingerprint``), once taken."""
    fused: FusedPlan = FUSED_OFF
    """Whether the step runs compiled kernels from the cache (``train.fused``), and the run's line about it."""

    @property
    def scheduled(self) -> bool:
        """Whether the learning rates change during the run (a schedule, or a group with its own span)."""
        return self.config.schedule != "constant" or any(g.get("span") for g in self.optimizer.param_groups)

    @property
    def total_steps(self) -> int:
        return self.steps_per_epoch * self.config.epochs

    def augmented(self, x: torch.Tensor, idx: torch.Tensor, epoch: int) -> torch.Tensor:
        """The batch of training images ``idx`` as this epoch's augmentation shows them."""
        flips = None if self.flip_base is None else alternating_flips(self.flip_base, idx, epoch)
        return augment(x, self.aug_gen, self.augmentation, flips)

    def batch_size_at(self, epoch_step: int) -> int:
        """Images in batch ``epoch_step`` (known without a sync)."""
        if self.full_batches:
            return self.config.batch_size
        return min(self.config.batch_size, self.train_count - epoch_step * self.config.batch_size)


def build_engine(config: TrainConfig, arrays: Arrays, device: torch.device, ranks: Ranks = SINGLE) -> Engine:
    """Build the run on ``device``; with several ranks the model trains through DistributedDataParallel and
    each rank's epoch is its shard of the data (``--batch-size`` is per rank)."""
    torch.manual_seed(config.seed)
    if device.type == "cuda":
        torch.backends.cudnn.benchmark = config.cudnn_benchmark
        # the allocator's per-device statistics exist only once CUDA is up, and naming cuda:N does not start it
        torch.cuda.init()  # type: ignore[no-untyped-call]
        torch.cuda.reset_peak_memory_stats(device)
    data = to_device(arrays, device)
    model = models.build_model(config.model, data.channels, data.size, len(data.classes)).to(device)
    if config.channels_last:
        model = model.to(memory_format=torch.channels_last)
    normalizer = Normalizer(data.channels, device, plain=models.uses_plain_inputs(config.model))
    if isinstance(model, models.FastNet):
        model.init_whitening(normalizer(data.train_x[:5000]))

    def prepare(x: torch.Tensor) -> torch.Tensor:
        out = normalizer(x)
        return out.contiguous(memory_format=torch.channels_last) if config.channels_last else out

    trained: nn.Module = wrap(model, device) if ranks.several else model
    shape = (data.channels, data.size, data.size)
    fused_plan = FUSED_OFF if ranks.several else fused.plan(config, device, shape, len(data.classes))
    train_model: Any = torch.compile(trained) if config.compile else fused.compiled(trained, fused_plan)
    # evaluation stays eager with fused kernels: a compile for the test shapes would cost seconds per run
    eval_model: Any = (
        train_model if config.compile and not ranks.several else torch.compile(model) if config.compile else model
    )
    count = shard_size(int(data.train_y.shape[0]), ranks.world)
    steps = math.ceil(count / config.batch_size)
    if config.max_steps_per_epoch is not None:
        steps = min(steps, config.max_steps_per_epoch)
    optimizer = build_optimizer(
        model, config, device, config.cuda_graph, steps, images_per_step=config.batch_size * ranks.world
    )
    loss_fn = nn.CrossEntropyLoss(label_smoothing=config.label_smoothing)
    eager = EagerStep(train_model, optimizer, loss_fn, prepare, device, config.amp)
    augmentation = models.augmentation(config.model)
    flip_base = None
    if augmentation.alternating_flip:
        flip_gen = torch.Generator(device=device)
        flip_gen.manual_seed(config.seed + FLIP_SEED_OFFSET)
        flip_base = torch.rand(int(data.train_y.shape[0]), generator=flip_gen, device=device) < 0.5
    gen = torch.Generator(device=device)
    gen.manual_seed(config.seed)
    aug_gen = gen
    if ranks.several:
        aug_gen = torch.Generator(device=device)
        aug_gen.manual_seed(config.seed * 1_000_003 + ranks.rank)
    return Engine(
        config,
        device,
        data,
        model,
        optimizer,
        eager,
        eager,
        gen,
        Stats(device),
        steps,
        config.cuda_graph,
        eval_model,
        aug_gen,
        augmentation,
        flip_base,
        ranks,
        count,
        fused=fused_plan,
    )


def capture_graph(engine: Engine) -> None:
    """Swap the eager step for a captured one (after any resume, so it captures the restored tensors)."""
    cfg = engine.config
    probe = torch.Generator(device=engine.device)
    probe.manual_seed(cfg.seed)  # a throwaway order: the warm-up batch must not move the real generator
    idx = batch_indices(permutation(int(engine.data.train_y.shape[0]), probe), 0, cfg.batch_size, True)
    for group in engine.optimizer.param_groups:  # the graph reads its rates from device tensors
        lr = group["lr"]
        if not isinstance(lr, torch.Tensor) or lr.device != engine.device:
            group["lr"] = torch.tensor(float(lr), device=engine.device)
    x, y = engine.data.train_x[idx], engine.data.train_y[idx]
    engine.step = fused.capture(engine, lambda: GraphStep(engine.eager, x, y))


def resumed_config(config: TrainConfig, saved: TrainConfig) -> TrainConfig:
    """The saved run's ``keep`` settings (the option table in config.py), this invocation's others.

    ``--epochs`` and ``--data-dir`` left out (0 and None) mean the run's own.
    """
    kept = {name for name, option in train_options().items() if option.on_resume == "keep"}
    changes = {f.name: getattr(config, f.name) for f in fields(TrainConfig) if f.name not in kept}
    changes["epochs"] = config.epochs or saved.epochs
    changes["data_dir"] = config.data_dir or saved.data_dir
    return replace(saved, **changes)
