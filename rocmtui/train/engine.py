"""Everything a run needs, built once on its device: the data there, the model, the update, the batching and
the augmentation, each a named part of the ``Engine``."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn

from rocmtui.config import TrainConfig
from rocmtui.train import fused, models, tta
from rocmtui.train.dataset import Arrays
from rocmtui.train.distributed import SINGLE, Ranks, Waits, shard_size, wrap
from rocmtui.train.fused import OFF as FUSED_OFF
from rocmtui.train.fused import Plan as FusedPlan
from rocmtui.train.gpudata import (
    Augmentation,
    DeviceData,
    Normalizer,
    Placement,
    alternating_flips,
    batch_rows,
    epoch_images,
    permutation,
    to_device,
)
from rocmtui.train.learning_rates import build_optimizer, spanned_params, spent_from_epoch
from rocmtui.train.optimizer import FunctionalOptimizer
from rocmtui.train.stats import Stats
from rocmtui.train.step import EagerStep, GraphStep, GraphSteps, autocast, graph_keys
from rocmtui.train.tta import BatchLogits

FLIP_SEED_OFFSET = 0x5EED
"""The alternating flips are drawn from the seed plus this, apart from the data order's generator."""
RANK_SEED_FACTOR = 1_000_003
"""A rank's augmentation seed is the run's seed times this, plus the rank."""


@dataclass(frozen=True)
class Nets:
    """The model that trains, and the one evaluation runs."""

    model: nn.Module
    """The trained module: its state dict is the checkpoint's."""
    eval_model: nn.Module
    """The trained model (compiled if asked), never its DDP wrapper (evaluation runs no collectives)."""
    eager_test_logits: BatchLogits
    """The test pass's function of a batch over ``eval_model`` (``tta.batch_logits``)."""
    test_logits: BatchLogits
    """``eager_test_logits``, or it compiled from the fused cache (``warm_tests`` loads it before the clock)."""


@dataclass
class Optimisation:
    """The update: the optimizer, the eager step (inputs prepared, mixed precision, loss scaling) and the step
    the loop calls."""

    optimizer: FunctionalOptimizer
    eager: EagerStep
    step: EagerStep | GraphSteps
    """``eager``, or its CUDA graphs once ``capture_graph`` has captured them."""


@dataclass(frozen=True)
class Batching:
    """How an epoch is cut into batches on this rank."""

    gen: torch.Generator
    """Draws the data order (and, in a single-process run, the augmentation); saved in checkpoints."""
    batch_size: int
    train_count: int
    """Images this rank trains on per epoch (its shard)."""
    steps_per_epoch: int
    full_batches: bool
    """Whether every batch has ``batch_size`` images (the CUDA graph needs fixed shapes)."""

    def size_at(self, epoch_step: int) -> int:
        """Images in batch ``epoch_step`` (known without a sync)."""
        if self.full_batches:
            return self.batch_size
        return min(self.batch_size, self.train_count - epoch_step * self.batch_size)


@dataclass(frozen=True)
class Augmenter:
    """An epoch's training images as this run shows them: in the epoch's order, augmented (``--augment``) as
    its model's augmentation does."""

    augmentation: Augmentation | None
    """None without ``--augment``."""
    gen: torch.Generator
    """``Batching.gen`` itself in a single-process run; one per rank in a DDP run, so that the ranks share the
    data order but not their crops and flips."""
    flip_base: torch.Tensor | None
    """With alternating flips: whether each training image is mirrored in even epochs (drawn once from the
    seed, so a resumed run draws the same)."""
    crops: tuple[int, ...] = ()
    """``--crop-sizes``: the crop side of each of the first epochs; later epochs at the images' own size."""
    placement: Placement | None = None
    """With fused kernels, the crops, flips and jitter compiled into one kernel (``fused.compiled_placement``);
    None: eager kernels (a gather, and three passes for each part of the jitter)."""

    def crop_at(self, epoch: int) -> int | None:
        """The crop side epoch ``epoch`` trains on, or None for the images' own size."""
        return self.crops[epoch] if epoch < len(self.crops) else None

    def epoch(self, images: torch.Tensor, order: torch.Tensor, epoch: int) -> torch.Tensor:
        """``images[order]`` as epoch ``epoch`` shows them, drawn in one pass (its augmentation's draws follow
        the epoch's order on the same generator, so a resume that redraws the order redraws them too)."""
        flips = None if self.flip_base is None else alternating_flips(self.flip_base, order, epoch)
        return epoch_images(images, order, self.gen, self.augmentation, flips, self.crop_at(epoch), self.placement)

    def warm(self, images: torch.Tensor, epochs: range) -> None:
        """Compile (or load from the cache) the placement for each crop side of ``epochs``, on a throwaway
        order and generator, so that no epoch's draw compiles on the run's clock."""
        if self.placement is None or self.augmentation is None:
            return
        probe = _seeded(0, images.device)
        order = permutation(int(images.shape[0]), probe)
        flips = None if self.flip_base is None else alternating_flips(self.flip_base, order, 0)
        for crop in {self.crop_at(epoch) for epoch in epochs}:
            epoch_images(images, order, probe, self.augmentation, flips, crop, self.placement)


@dataclass
class Engine:
    """The built run, from its named parts."""

    config: TrainConfig
    device: torch.device
    data: DeviceData
    nets: Nets
    optimisation: Optimisation
    batching: Batching
    augmenter: Augmenter
    stats: Stats
    ranks: Ranks = SINGLE
    data_print: dict[str, str | int] | None = None
    """The data's fingerprint for checkpoints (``state.data_fingerprint``), once taken."""
    fused: FusedPlan = FUSED_OFF
    """Whether the step runs compiled kernels from the cache (``train.fused``), and the run's line about it."""
    waits: Waits = field(default_factory=Waits)
    """Seconds this rank waited for the others in collectives (a run of several ranks)."""

    @property
    def model(self) -> nn.Module:
        return self.nets.model

    @property
    def eval_model(self) -> nn.Module:
        return self.nets.eval_model

    @property
    def optimizer(self) -> FunctionalOptimizer:
        return self.optimisation.optimizer

    @property
    def eager(self) -> EagerStep:
        return self.optimisation.eager

    @property
    def scheduled(self) -> bool:
        """Whether the learning rates change during the run (a schedule, or a group with its own span)."""
        return self.config.schedule != "constant" or any(g.get("span") for g in self.optimizer.param_groups)

    @property
    def total_steps(self) -> int:
        return self.batching.steps_per_epoch * self.config.epochs

    @property
    def freezes_spent(self) -> bool:
        """Whether spent parameters stop taking gradients (``learning_rates.freeze_spent``): with eager kernels
        only. Not under DistributedDataParallel, which expects them, nor under ``--compile``, which would compile
        again; nor with fused kernels, whose compiled backward is no cheaper frozen (6.09 against 6.07 ms a step
        on an H200) and whose frozen graph would only add a compile and a capture before the first step."""
        return not self.ranks.several and not self.config.compile and self.fused.state != "ready"


def build_engine(
    config: TrainConfig,
    arrays: Arrays,
    device: torch.device,
    ranks: Ranks = SINGLE,
    fused_plan: FusedPlan | None = None,
) -> Engine:
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

    waits = Waits()
    trained: nn.Module = wrap(model, device, waits) if ranks.several else model
    shape = (data.channels, data.size, data.size)
    counts = len(data.classes), int(data.train_y.shape[0]), int(data.test_y.shape[0])
    count = shard_size(int(data.train_y.shape[0]), ranks.world)
    steps = math.ceil(count * config.epoch_share / config.batch_size)
    if config.max_steps_per_epoch is not None:
        steps = min(steps, config.max_steps_per_epoch)
    if fused_plan is None:  # a run's own; ``fused_build`` weighs a cache with a plan of its own
        fused_plan = FUSED_OFF if ranks.several else fused.plan(config, device, shape, *counts)
        fused_plan = fused.weighed(fused_plan, steps * config.epochs, config.epochs)
    if config.compile:
        fused.private_compile_cache()
    train_model: Any = (
        torch.compile(trained) if config.compile else fused.compiled(trained, fused_plan, config.fused_mode)
    )
    eval_model: Any = (
        train_model if config.compile and not ranks.several else torch.compile(model) if config.compile else model
    )
    eager_tests = tta.batch_logits(eval_model, prepare, config.tta_share)
    optimizer = build_optimizer(
        model, config, device, config.cuda_graph, steps, images_per_step=config.batch_size * ranks.world
    )
    loss_fn = nn.CrossEntropyLoss(label_smoothing=config.label_smoothing)
    eager = EagerStep(train_model, optimizer, loss_fn, prepare, device, config.amp)
    augmentation = models.augmentation(config.model, config.jitter) if config.augment else None
    placement = fused.compiled_placement(fused_plan, config.fused_mode) if augmentation is not None else None
    flips = augmentation is not None and augmentation.alternating_flip
    flip_base = _flip_base(config.seed, int(data.train_y.shape[0]), device) if flips else None
    gen = _seeded(config.seed, device)
    aug_gen = _seeded(config.seed * RANK_SEED_FACTOR + ranks.rank, device) if ranks.several else gen
    return Engine(
        config=config,
        device=device,
        data=data,
        nets=Nets(
            model=model,
            eval_model=eval_model,
            eager_test_logits=eager_tests,
            test_logits=fused.compiled(eager_tests, fused_plan, config.fused_mode),
        ),
        optimisation=Optimisation(optimizer=optimizer, eager=eager, step=eager),
        batching=Batching(gen, config.batch_size, count, steps, full_batches=config.cuda_graph),
        augmenter=Augmenter(augmentation, aug_gen, flip_base, config.crop_sizes, placement),
        stats=Stats(device),
        ranks=ranks,
        fused=fused_plan,
        waits=waits,
    )


def _seeded(seed: int, device: torch.device) -> torch.Generator:
    gen = torch.Generator(device=device)
    gen.manual_seed(seed)
    return gen


def _flip_base(seed: int, images: int, device: torch.device) -> torch.Tensor:
    """Whether each training image is mirrored in even epochs, drawn apart from the data order."""
    return torch.rand(images, generator=_seeded(seed + FLIP_SEED_OFFSET, device), device=device) < 0.5


def capture_graph(engine: Engine, from_epoch: int = 0) -> None:
    """Swap the eager step for captured ones, one a batch shape and state of the spent parameters the run trains
    with from epoch ``from_epoch`` (after any resume, so they capture the restored tensors and leave out the crop
    sides already done); with fused kernels, the epochs' compiled placement is loaded as well."""
    cfg, data = engine.config, engine.data
    probe = _seeded(cfg.seed, engine.device)  # a throwaway order: the warm-up batch must not move the real generator
    idx = batch_rows(permutation(int(data.train_y.shape[0]), probe), 0, cfg.batch_size, True)
    for group in engine.optimizer.param_groups:  # the graph reads its rates from device tensors
        lr = group["lr"]
        if not isinstance(lr, torch.Tensor) or lr.device != engine.device:
            group["lr"] = torch.tensor(float(lr), device=engine.device)
    x, y = data.train_x[idx], data.train_y[idx]

    def make() -> GraphSteps:
        # chosen here: a failed fused load falls back to eager kernels, which do freeze the spent parameters
        spanned = spanned_params(engine.optimizer) if engine.freezes_spent else []
        frozen_from = spent_from_epoch(cfg) if spanned else None
        keys = graph_keys(cfg.crop_sizes, data.size, cfg.epochs, frozen_from, from_epoch)
        steps = []
        for side, frozen in keys:
            batch = x if side == data.size else x[..., :side, :side].contiguous()
            with _gradients(spanned, not frozen):
                steps.append(GraphStep(engine.eager, batch, y, frozen=frozen))
        engine.augmenter.warm(data.train_x, range(from_epoch, cfg.epochs))
        warm_tests(engine)
        return GraphSteps(steps, spanned)

    engine.optimisation.step = capture_or_fall_back(engine, make)


def capture_or_fall_back(engine: Engine, make: Callable[[], GraphSteps]) -> GraphSteps:
    """``make()`` the captured step; if the compiled model fails there, train eagerly instead: the model's
    tensors as they were, the failure recorded in the folder and told in one line (``engine.fused``)."""
    if engine.fused.state != "ready" or not engine.fused.fallback:
        return make()
    saved = {key: value.clone() for key, value in engine.model.state_dict().items()}
    try:
        return make()
    except Exception as err:
        engine.model.load_state_dict(saved)
        engine.optimizer.zero_grad(set_to_none=True)
        engine.eager.model = engine.model
        engine.augmenter = dataclasses.replace(engine.augmenter, placement=None)
        engine.nets = dataclasses.replace(engine.nets, test_logits=engine.nets.eager_test_logits)
        engine.fused = fused.failed(engine.fused, err)
        return make()


@torch.no_grad()
def warm_tests(engine: Engine) -> None:
    """With fused kernels, load (or compile) the test pass's graphs, one a batch size with and without the
    test-time augmentation, on the first test images, so that no test pass loads them on the run's clock."""
    if engine.fused.state != "ready":
        return
    data, cfg, was_training = engine.data, engine.config, engine.model.training
    engine.model.eval()
    try:
        for size in tta.eval_batches(int(data.test_y.shape[0]), cfg.batch_size):
            for augmented in (False, True) if models.has_tta(cfg.model) else (False,):
                with autocast(engine.device, cfg.amp):
                    engine.nets.test_logits(data.test_x[:size], augmented)
    finally:
        engine.model.train(was_training)


@contextmanager
def _gradients(params: list[torch.Tensor], wanted: bool) -> Iterator[None]:
    """``params`` take gradients (or not) inside, as they did after."""
    before = [p.requires_grad for p in params]
    for param in params:
        param.requires_grad_(wanted)
    try:
        yield
    finally:
        for param, was in zip(params, before, strict=True):
            param.requires_grad_(was)
