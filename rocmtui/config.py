"""Frozen run settings shared by the CLI, the engine and the UI; plain values only."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Literal, get_args

from rocmtui.base.ranges import INT_LIMIT, RANGES
from rocmtui.codec import convert, to_builtins

DATASETS: dict[str, str] = {
    "cifar": "cifar10",
    "cifar10": "cifar10",
    "mnist": "mnist",
    "fashionmnist": "fashionmnist",
    "fashion-mnist": "fashionmnist",
}
"""Names accepted on the command line, mapped to the engine's canonical dataset name."""

ModelName = Literal["simplecnn", "fastnet", "resnet18"]
OptimizerName = Literal["adam", "adamw", "sgd", "muon"]
ScheduleName = Literal["constant", "onecycle", "linear"]
AmpMode = Literal["off", "bf16", "fp16"]
FusedMode = Literal["default", "max-autotune"]
BackendName = Literal["auto", "rocm", "sysfs", "nvml", "host"]
MODELS: tuple[str, ...] = get_args(ModelName)
BACKENDS: tuple[str, ...] = get_args(BackendName)


OnResume = Literal["keep", "may change"]
"""With ``--resume``: ``keep`` takes the saved run's value (refused when given and different);
``may change`` takes this invocation's (``--epochs`` and ``--data-dir`` left out: the run's own)."""
ParseAs = Literal[
    "dataset",
    "choice",
    "switch",
    "output_dir",
    "device",
    "existing_dir",
    "existing_path",
    "positive_int",
    "non_negative_int",
    "positive_float",
    "non_negative_float",
    "fraction",
    "share",
    "crop_sizes",
    "newton_schulz_steps",
    "endpoint",
    "job_id",
    "node_rank",
]
"""How the CLI reads an option: a function of ``rocmtui.cli.argtypes`` by name, ``choice`` (the field's
``Literal`` values), or ``switch`` (a flag without a value)."""


@dataclass(frozen=True)
class Option:
    """A TrainConfig field as a ``rocmtui train`` option: flag, parsing, help and resume rule, defined once."""

    parse: ParseAs
    help: str
    """Help text; ``{default}`` and ``{choices}`` are filled in."""
    on_resume: OnResume
    metavar: str | None = None
    what: str | None = None
    """The noun in a bad choice's error (default: the field's name)."""


def option(
    parse: ParseAs, help: str, on_resume: OnResume, *, metavar: str | None = None, what: str | None = None
) -> dict[str, Option]:
    """Field metadata that makes a TrainConfig field a command-line option: ``--`` and its name with dashes."""
    return {"option": Option(parse, help, on_resume, metavar, what)}


def train_options() -> dict[str, Option]:
    """The option table: each TrainConfig field that is a ``rocmtui train`` option, in declaration order."""
    return {f.name: f.metadata["option"] for f in fields(TrainConfig) if "option" in f.metadata}


@dataclass(frozen=True)
class TrainConfig:
    """One training run. Defaults reproduce the ROCm guide's CIFAR-10 reference workload."""

    dataset: str = field(
        default="cifar10", metadata=option("dataset", "dataset to train on: {choices}", "keep", metavar="DATASET")
    )
    """Canonical dataset name, a value of ``DATASETS``."""
    model: ModelName = field(
        default="simplecnn",
        metadata=option("choice", "model: {choices} (default: {default}, the ROCm guide's CNN)", "keep"),
    )
    """One of ``MODELS``."""
    epochs: int = field(
        default=5,
        metadata=option(
            "positive_int",
            "epochs to train, a positive integer (default: {default}; with --resume, the run's own)",
            "may change",
        ),
    )
    """Epochs to train (counted from 0, including any already done when resuming); 0 with ``resume``:
    the saved run's own."""
    batch_size: int = field(
        default=64, metadata=option("positive_int", "images per step, a positive integer (default: {default})", "keep")
    )
    """Images per optimizer step."""
    lr: float = field(
        default=1e-3,
        metadata=option("positive_float", "peak learning rate, a positive number (default: {default})", "keep"),
    )
    """Peak learning rate."""
    optimizer: OptimizerName = field(
        default="adam",
        metadata=option(
            "choice",
            "optimizer: {choices} (sgd is Nesterov, momentum 0.9; muon, for fastnet, orthogonalises its conv "
            "updates and trains the rest with Nesterov SGD; default: {default})",
            "keep",
        ),
    )
    """One of ``OptimizerName``; ``sgd`` uses Nesterov momentum 0.9; ``muon`` (fastnet only) follows
    airbench94_muon: Muon at ``lr`` on the conv filters, Nesterov SGD on the biases and the head."""
    newton_schulz_steps: int = field(
        default=3,
        metadata=option(
            "newton_schulz_steps",
            "with --optimizer muon: the Newton-Schulz iterations that orthogonalise each filter's update, "
            "1 to 10 (default: {default}, airbench94_muon's; Muon's own default is 5)",
            "keep",
            metavar="N",
        ),
    )
    """Muon's quintic iterations per update (``optimizer.orthogonalized``): more bring the update's singular
    values nearer 1; each costs fastnet 0.02 to 0.04 ms a step on an H200 (BENCHMARKS.md)."""
    schedule: ScheduleName = field(
        default="constant", metadata=option("choice", "learning-rate schedule: {choices} (default: {default})", "keep")
    )
    """Learning-rate schedule, one of ``ScheduleName``."""
    weight_decay: float = field(
        default=0.0,
        metadata=option(
            "non_negative_float",
            "weight decay, 0 or more (muon: the peak rate times the biases' and head's L2 decay, as airbench94_muon "
            "gives it; default: {default})",
            "keep",
        ),
    )
    """Decoupled (adamw) or L2 (adam, sgd) weight decay; with muon, the peak rate times the L2 decay of the
    SGD-trained parameters, the same in each of their groups (the filters are renormalised instead)."""
    label_smoothing: float = field(
        default=0.0,
        metadata=option("fraction", "cross-entropy label smoothing, 0 to below 1 (default: {default})", "keep"),
    )
    """Cross-entropy label smoothing, 0 to <1."""
    augment: bool = field(
        default=False, metadata=option("switch", "random crop and horizontal flip, computed on the GPU", "keep")
    )
    """Random crop (pad 4 or translate) and horizontal flip, on the GPU."""
    jitter: float = field(
        default=0.0,
        metadata=option(
            "fraction",
            "with --augment: brightness and contrast jitter, each image's brightness shifted by up to this many "
            "standard deviations and its contrast scaled by up to 1 +- this, 0 to below 1 (default: {default})",
            "keep",
        ),
    )
    """Per-image brightness and contrast jitter of ``--augment`` (``gpudata.jittered``); 0 is none."""
    epoch_share: float = field(
        default=1.0,
        metadata=option(
            "share",
            "the share of the training images each epoch trains on, a fresh random subset each epoch, rounded "
            "up to whole batches (above 0, at most 1; default: {default})",
            "keep",
        ),
    )
    """Each epoch's steps cover this share of the (rank's) training split: the first steps of its order."""
    crop_sizes: tuple[int, ...] = field(
        default=(),
        metadata=option(
            "crop_sizes",
            "with --augment: the first epochs train on smaller square crops, one side an epoch, comma-separated "
            "(24,28: epoch 1 on 24x24 crops, epoch 2 on 28x28, the rest at full size; fewer pixels a step, the "
            "objects at their own scale; default: none)",
            "keep",
            metavar="SIDES",
        ),
    )
    """Crop side for each of the first epochs (``gpudata.augment``'s ``size``); later epochs at full size."""
    amp: AmpMode = field(
        default="off",
        metadata=option(
            "choice",
            "mixed precision: {choices} (fp16 adds a gradient scaler, a fixed one in a CUDA graph; default: {default})",
            "keep",
            what="amp mode",
        ),
    )
    """Autocast dtype, one of ``AmpMode``; fp16 adds a GradScaler (``step.STATIC_LOSS_SCALE`` in a CUDA graph)."""
    channels_last: bool = field(default=False, metadata=option("switch", "use the channels_last memory format", "keep"))
    """Use the channels_last memory format for model and batches."""
    cudnn_benchmark: bool = field(
        default=True,
        metadata=option(
            "switch",
            "time cuDNN's (MIOpen's) algorithms for each new convolution shape before using it (on by default): "
            "a search before the first step (0.6 to 0.9 s for fastnet on an H200) for faster epochs; the fast recipe "
            "turns it off",
            "may change",
        ),
    )
    """Let cuDNN (MIOpen on ROCm) benchmark its convolution algorithms; off, it picks by heuristics."""
    fused_kernels: bool = field(
        default=False,
        metadata=option(
            "switch",
            "with --cuda-graph on an NVIDIA GPU: train with torch.compile's fused kernels once a background build "
            "has cached them for this GPU, torch and recipe (eager kernels until then; the fast recipe turns it on)",
            "may change",
        ),
    )
    """Load the model's compiled (Inductor/Triton) kernels from the on-disk cache ``train.fused`` keeps; a run
    without a usable cache trains eagerly and starts the build for later runs."""
    fused_mode: FusedMode = field(
        default="default",
        metadata=option(
            "choice",
            "with --fused-kernels: how their build picks them: {choices} (max-autotune times each convolution's "
            "and matrix product's candidate kernels: steps 4% faster on an H200 for a build of about 5 minutes and "
            "a load of about 34 s before the first step, against 45 s and 5 to 8 s; default: {default})",
            "may change",
            what="fused mode",
        ),
    )
    """Inductor's mode for the fused kernels (``max-autotune`` is compiled without Inductor's own CUDA graphs:
    the run captures its step itself); part of the cache's key."""
    tta_share: float = field(
        default=1.0,
        metadata=option(
            "share",
            "the share of test images, the least certain first, that the final test-time-augmented pass sees in "
            "all its views; the rest keep their plain prediction (above 0, at most 1; default: {default})",
            "may change",
        ),
    )
    """Selective test-time augmentation: the final pass predicts every test image once, then re-runs the views
    for this share of each batch, the images whose two best logits are closest (fastnet only)."""
    compile: bool = field(default=False, metadata=option("switch", "compile the model with torch.compile", "keep"))
    """Wrap the model in ``torch.compile``."""
    cuda_graph: bool = field(
        default=False,
        metadata=option("switch", "capture the training step in a CUDA/HIP graph (GPU only; fastest)", "keep"),
    )
    """Capture the whole training step in a CUDA/HIP graph where that is safe."""
    seed: int = field(
        default=0, metadata=option("non_negative_int", "random seed, 0 or more (default: {default})", "keep")
    )
    """Seed for torch, the data order and augmentation."""
    data_dir: Path | None = field(
        default=None,
        metadata=option(
            "existing_dir",
            "an existing folder with the dataset in torchvision's layout (default: the cache, then the bundled "
            "sample; with --resume, the run's own)",
            "may change",
        ),
    )
    """A torchvision-layout data folder; None searches the cache, then the bundled sample."""
    download: bool = field(
        default=False,
        metadata=option("switch", "let torchvision download the dataset into --data-dir or the cache", "may change"),
    )
    """Allow torchvision to download the dataset into ``data_dir`` or the cache."""
    runs_dir: Path = field(
        default=Path("runs"),
        metadata=option(
            "output_dir", "where run folders are written (default: {default}, or $ROCMTUI_RUNS_DIR)", "may change"
        ),
    )
    """Where run folders are created."""
    shared_runs_dir: bool = field(
        default=False,
        metadata=option(
            "switch",
            "use a --runs-dir that other users own or can write (a team folder), on purpose: its group (and "
            "whoever can write it) may then rename or remove your run folders unless it has the sticky bit; "
            "your run folders are made 0750, readable by the folder's group, never writable by it "
            "(default: such a folder is refused; also $ROCMTUI_SHARED_RUNS_DIR=1)",
            "may change",
        ),
    )
    """Accept a runs folder another user owns or can write; run folders 0750 instead of 0700."""
    resume: Path | None = field(
        default=None,
        metadata=option(
            "existing_path",
            "continue a run from its folder (or its checkpoint-last.pt); any other checkpoint, such as "
            "checkpoint-best.pt, starts a new run folder branched from it",
            "may change",
            metavar="RUN_OR_CHECKPOINT",
        ),
    )
    """A run folder or checkpoint file to continue from; in a resumed run, the checkpoint file it came from."""
    device: str = field(
        default="auto",
        metadata=option(
            "device",
            "auto, cpu, cuda or cuda:N; ROCm builds of PyTorch use cuda too (default: {default})",
            "may change",
        ),
    )
    """``auto``, ``cpu``, ``cuda`` or ``cuda:N`` (ROCm builds of PyTorch also use ``cuda``)."""
    nproc: int = field(
        default=1,
        metadata=option(
            "positive_int",
            "train with N processes, one per GPU, through torch.distributed (DDP: nccl, RCCL on ROCm; gloo on "
            "the CPU); --batch-size is per process (default: {default})",
            "keep",
            metavar="N",
        ),
    )
    """Ranks of a data-parallel run, started by torch.distributed's elastic launcher; 1 trains in one process."""
    nnodes: int = field(
        default=1,
        metadata=option(
            "positive_int",
            "nodes of the job: start the same command on each, with the same --rdzv-endpoint and --rdzv-id; "
            "each runs --nproc ranks (default: {default}; under Slurm: SLURM_NNODES)",
            "keep",
            metavar="N",
        ),
    )
    """Machines the job spans, joined by torch.distributed's c10d rendezvous; world size is ``nproc * nnodes``."""
    rdzv_endpoint: str | None = field(
        default=None,
        metadata=option(
            "endpoint",
            "HOST:PORT of the rendezvous every node joins (torchrun's c10d store, hosted by the node whose "
            "address it is); needed with --nnodes above 1",
            "may change",
            metavar="HOST:PORT",
        ),
    )
    rdzv_id: str | None = field(
        default=None,
        metadata=option(
            "job_id",
            "the job's id, the same on every node: names the run folder they share (under Slurm: SLURM_JOB_ID)",
            "may change",
            metavar="ID",
        ),
    )
    node_rank: int | None = field(
        default=None,
        metadata=option(
            "node_rank",
            "this node's place, where a scheduler fixes it (a static rendezvous: node 0 hosts it at "
            "--rdzv-endpoint); default: the c10d rendezvous gives each node its place (under Slurm: SLURM_NODEID)",
            "may change",
            metavar="N",
        ),
    )
    emit_interval_s: float = 0.25
    """Seconds between StepsCompleted events (the only moments the loop syncs with the GPU)."""
    checkpoint_every_epoch: bool = True
    """Write ``checkpoint-last.pt`` at the end of every epoch."""
    max_steps_per_epoch: int | None = None
    """Cap on optimizer steps per epoch (None: the whole training split). For tests and quick benches;
    not a command-line flag."""
    given: tuple[str, ...] = ()
    """Names of the options given explicitly (on the command line); on resume, a ``keep`` option named here
    that differs from the saved run's is refused, and one not named takes the saved run's value."""

    @property
    def several_ranks(self) -> bool:
        """Whether the run trains through torch.distributed's launcher: several ranks here, or several nodes."""
        return self.nproc > 1 or self.nnodes > 1

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready copy: paths as strings."""
        out: dict[str, Any] = to_builtins(self)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TrainConfig:
        """Inverse of ``to_dict``, validated by type (CodecError names a bad field) and by range as the command
        line checks it (``check_ranges``); unknown keys are ignored so older run folders still load."""
        config = convert(data, cls, what="bad run settings")
        config.check_ranges()
        return config

    def check_ranges(self) -> None:
        """ValueError naming the first field outside its range (``RANGES``, by the field's kind of option)."""
        for name, option in train_options().items():
            rule = RANGES.get(option.parse)
            value = getattr(self, name)
            if name == "epochs" and value == 0:
                continue  # with a resume: the run's own
            if rule is not None and not rule[0](value):
                raise ValueError(f"bad run settings: {name} {value!r} is out of range; {rule[1]}")
        if not (math.isfinite(self.emit_interval_s) and self.emit_interval_s >= 0):
            raise ValueError(f"bad run settings: emit_interval_s {self.emit_interval_s!r} is out of range")
        if self.max_steps_per_epoch is not None and not 0 < self.max_steps_per_epoch < INT_LIMIT:
            raise ValueError(f"bad run settings: max_steps_per_epoch {self.max_steps_per_epoch!r} is out of range")


@dataclass(frozen=True)
class MonitorConfig:
    """Telemetry settings shared by ``monitor``, the training screen and ``bench``."""

    interval_s: float = 1.0
    """Seconds between samples, 0.1 to 60."""
    history_len: int = 600
    """Samples kept per device (600 at 1 s is 10 minutes); memory stays flat."""
    backend: BackendName = "auto"
    """One of ``BACKENDS``; ``auto`` tries rocm, sysfs, nvml in that order, then the host alone."""
    sysfs_root: Path = Path("/sys")
    """Root of the sysfs tree (tests point it at a fake tree)."""
    proc_root: Path = Path("/proc")
    """Root of procfs, where per-process GPU memory is read from DRM fdinfo (tests point it at a fake)."""
    theme: str = "textual-dark"
    """Textual theme name."""
    fast_start_s: float = 0.0
    """Seconds at the start sampled every ``FAST_INTERVAL_S`` before ``interval_s`` applies: a run's first
    minutes, so that a short, fast run shows its real load. 0 (the monitor's) samples at ``interval_s`` only."""

    MIN_INTERVAL_S = 0.1
    MAX_INTERVAL_S = 60.0
    FAST_INTERVAL_S = 0.25
    RUN_FAST_START_S = 600.0
    """A run's default ``fast_start_s``: 10 minutes at 4 Hz, then ``interval_s``, so that the folder's bounded
    sample log still holds hours of a long run."""

    def recorder_settings(self) -> dict[str, object]:
        """What a trainer process needs to record samples (JSON-ready; ``MonitorConfig(**settings)`` reads it)."""
        return {"interval_s": self.interval_s, "backend": self.backend, "fast_start_s": self.fast_start_s}
