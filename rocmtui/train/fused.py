"""Fused kernels for the training step: ``torch.compile``'s Triton kernels, loaded from an on-disk cache.

Compiling fastnet's step, its epochs' draw and its test pass takes 30 to 45 s (Inductor's default mode, H200)
and a run's engine and captures from a warm cache still take 5 to 8 s, so a run never compiles in its own
time: until a cache is ready it trains with eager kernels, and at its end starts ``python -m
rocmtui.train.fused_build FOLDER`` in a session of its own to build it for later runs. The folder's name is a
hash of everything that shapes the compiled graphs (torch, CUDA and Triton versions, the GPU, the model, its
input and the test set's size, the code of the model, of the draw and of the test pass), so a different torch,
GPU or recipe never loads a stale one. ``ready.json`` lists every file with its SHA-256: a damaged cache is
found before it is used, and the run trains eagerly with one line in its log; so does a run that starts while
a build runs (it shares the GPU with the build's compiles and benchmarks, and its steps are slower). A build
that failed leaves ``failed.json``, and no run tries again until the folder is removed. After a build, all but
the most recently used few caches are removed (``fused_prune``). On ROCm the lever is skipped (not measured
there).

Never a net loss: once built, the cache is weighed (``fused_build --weigh``, fresh processes, each kind twice:
what a run's engine build and captures take, and a step, with the cached kernels and with eager ones) into
``costs.json``; weighings disturbed by other work on the GPU record nothing and are taken again. A run loads
the kernels only where the steps they save over the epochs asked pay for their longer start (``weighed``);
otherwise it trains eagerly and says so in one line. A cache not weighed yet is not loaded.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import torch

from rocmtui.base.errors import UsageError, first_line
from rocmtui.base.files import read_small
from rocmtui.base.private_dir import UnsafeFolderError, first_private, private_dir, tree_problem
from rocmtui.codec import CodecError, decode_json, encode_json
from rocmtui.config import FusedMode, TrainConfig
from rocmtui.run.format import write_record
from rocmtui.run.lock import lock_held
from rocmtui.train.data import cache_dir
from rocmtui.train.gpudata import Placement, place_images
from rocmtui.train.step import graph_keys

if TYPE_CHECKING:
    pass

FORMAT = 1
READY, FAILED, REQUEST, LOG, LOCK = "ready.json", "failed.json", "request.json", "build.log", "build.lock"
COSTS = "costs.json"
"""What loading the cache costs and saves, measured after the build (``Costs``)."""
CODE = ("models.py", "gpudata.py", "tta.py")
"""The modules (beside this one) whose source is part of the key: they define the compiled graphs."""
State = Literal["off", "skipped", "ready", "missing", "building", "broken", "failed", "unweighed", "not worth it"]


@dataclass(frozen=True)
class Plan:
    """What a run does about fused kernels; ``notice``: one line for the run's log, or None."""

    state: State
    folder: Path | None = None
    notice: str | None = None
    request: dict[str, Any] | None = None
    """What the background build needs (the run's settings and input shape), for ``missing`` and ``broken``."""
    fallback: bool = True
    """With ``ready``: a compiled step that fails to load falls back to eager kernels (the build's own does not:
    its failure is the build's)."""


OFF = Plan("off")


def cache_root() -> Path:
    """The private folder of every fused-kernel cache (``private_dir``: 0700, this user's alone)."""
    return private_dir(cache_dir() / "compiled")


def identity(  # noqa: PLR0917 - the data's shapes, each its own argument
    config: TrainConfig, device: torch.device, shape: tuple[int, ...], classes: int, images: int, tests: int
) -> dict[str, Any]:
    """Everything the compiled graphs depend on, as plain values: ``shape`` is an image's (channels, height,
    width), ``images`` the training images an epoch's draw places, ``tests`` the test images (the test pass
    is compiled for its batches' sizes)."""
    here = Path(__file__).parent
    code = hashlib.sha256(b"".join((here / name).read_bytes() for name in CODE)).hexdigest()
    return {
        "format": FORMAT,
        "torch": str(torch.__version__),
        "cuda": torch.version.cuda,
        "triton": _version("triton"),
        "gpu": torch.cuda.get_device_name(device),
        "capability": list(torch.cuda.get_device_capability(device)),
        "model": config.model,
        "batch_size": config.batch_size,
        "amp": config.amp,
        "channels_last": config.channels_last,
        "augment": config.augment,
        "jitter": config.jitter > 0,  # the amount is a draw's, outside the compiled placement
        "mode": config.fused_mode,
        "input": list(shape),
        "images": images,
        # every step a run with fused kernels captures (one a crop side; it freezes no spent parameter, see
        # ``Engine.freezes_spent``): the build compiles them all
        "graphs": [list(key) for key in graph_keys(config.crop_sizes, shape[-1], config.epochs, None)],
        "classes": classes,
        "tests": tests,
        "tta_share": config.tta_share,
        "code": code,
    }


def cache_key(parts: dict[str, Any]) -> str:
    return hashlib.sha256(encode_json(parts, sort_keys=True)).hexdigest()[:20]


def plan(  # noqa: PLR0917 - identity's arguments
    config: TrainConfig, device: torch.device, shape: tuple[int, ...], classes: int, images: int, tests: int
) -> Plan:
    """Whether this run loads fused kernels (``ready``), and what it tells the user when it cannot (``identity``
    says what ``shape``, ``images`` and ``tests`` are)."""
    if not config.fused_kernels or not config.cuda_graph or device.type != "cuda":
        return OFF
    if getattr(torch.version, "hip", None):
        return Plan("skipped", notice="fused kernels: not used on ROCm (measured on CUDA only); eager kernels")
    parts = identity(config, device, shape, classes, images, tests)
    try:
        root = cache_root()
    except (UnsafeFolderError, OSError) as err:
        return Plan("skipped", notice=f"fused kernels: no private cache folder ({first_line(err)}); eager kernels")
    return _folder_plan(root / cache_key(parts), parts, {"identity": parts, "config": config.to_dict()})


def _folder_plan(folder: Path, parts: dict[str, Any], request: dict[str, Any]) -> Plan:
    """The plan from what the cache folder holds: a failure, a build under way, nothing yet, damage, or ready."""
    if (folder / FAILED).exists():
        why = _read_json(folder / FAILED).get("error", "unknown error")
        return Plan("failed", folder, f"fused kernels: the build failed ({why}); eager kernels (see {folder})")
    if lock_held(folder / LOCK):  # a build shares the GPU: this run's steps are slower until it ends
        note = f"fused kernels: being built in {folder} now; eager kernels, and slower steps while the build runs"
        return Plan("building", folder, note)
    if not (folder / READY).exists():
        note = (
            f"fused kernels: none cached for this GPU and recipe yet; eager kernels, built after this run in {folder}"
        )
        return Plan("missing", folder, note, request)
    problem = damage(folder, parts)
    if problem:
        note = f"fused kernels: the cache in {folder} is damaged ({problem}); eager kernels, rebuilt after this run"
        return Plan("broken", folder, note, request)
    _mark_used(folder)
    return Plan("ready", folder, request=request)


@dataclass(frozen=True)
class Costs:
    """A weighed cache: seconds from CUDA up to the captured steps (engine build, captures, the test pass's
    load) and seconds a step, with the cached kernels (``fused_*``) and with eager ones (``eager_*``)."""

    fused_setup_s: float
    eager_setup_s: float
    fused_step_s: float
    eager_step_s: float

    def net_s(self, steps: int) -> float:
        """Seconds a run of ``steps`` steps gains by loading the kernels (negative: it loses)."""
        return steps * (self.eager_step_s - self.fused_step_s) - (self.fused_setup_s - self.eager_setup_s)


def read_costs(folder: Path) -> Costs | None:
    """The cache's measured costs; None when it has not been weighed or the record is not four sane numbers."""
    record = _read_json(folder / COSTS)
    try:
        values = {name: float(record[name]) for name in Costs.__dataclass_fields__}
    except (KeyError, TypeError, ValueError):
        return None
    if not all(0.0 < value < 3600.0 for value in values.values()):  # NaN fails too
        return None
    return Costs(**values)


def weighed(plan: Plan, steps: int, epochs: int) -> Plan:
    """``plan`` where loading its ready kernels pays for itself over a run of ``steps`` steps in ``epochs``
    epochs; otherwise eager kernels, with the one line that says why."""
    if plan.state != "ready" or plan.folder is None:
        return plan
    costs = read_costs(plan.folder)
    if costs is None:
        note = f"fused kernels: cached in {plan.folder} but not weighed yet; eager kernels, weighed after this run"
        return Plan("unweighed", plan.folder, note, plan.request)
    if costs.net_s(steps) < 0:
        note = (
            f"fused kernels: loading them takes {costs.fused_setup_s - costs.eager_setup_s:.1f} s more than eager "
            f"kernels and saves {steps * (costs.eager_step_s - costs.fused_step_s):.2f} s over {epochs} epoch(s); "
            "eager kernels"
        )
        return Plan("not worth it", plan.folder, note)
    return plan


def damage(folder: Path, parts: dict[str, Any]) -> str | None:
    """Why the cache in ``folder`` cannot be used, or None: every file and folder in it must be this user's
    and writable by nobody else (checked before anything in it is read: ``ready.json`` lives in the folder it
    vouches for, so only the files' owner and mode can vouch for it), ``ready.json`` must name these ``parts``
    and every file it lists must be there with its SHA-256."""
    problem = tree_problem(folder, _is_lock_file)
    if problem:
        return problem
    ready = _read_json(folder / READY)
    if ready.get("identity") != parts or not isinstance(ready.get("files"), dict):
        return "its ready.json does not match"
    for name, digest in ready["files"].items():
        path = folder / str(name)
        if not path.is_file() or path.is_symlink() or _digest(path) != digest:
            return f"{name} is missing or changed"
    return None


def manifest(folder: Path) -> dict[str, str]:
    """Every cached file under ``folder`` with its SHA-256: the build's own files aside, and the lock files
    Inductor and Triton take and drop as they load (no kernel is in them)."""
    skip = {READY, FAILED, REQUEST, LOG, LOCK, COSTS}
    return {
        str(path.relative_to(folder)): _digest(path)
        for path in sorted(folder.rglob("*"))
        if path.is_file() and not path.is_symlink() and path.name not in skip and not _is_lock(path, folder)
    }


def _is_lock(path: Path, folder: Path) -> bool:
    return _is_lock_file(path.relative_to(folder))


def _is_lock_file(relative: Path) -> bool:
    """A lock Inductor or Triton takes (``x.lock``, or anything in a ``locks`` folder): no kernel in it."""
    return relative.suffix == ".lock" or "locks" in relative.parts


def use_cache(folder: Path) -> None:
    """Point Inductor and Triton at ``folder`` (read when they first compile or load)."""
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(folder / "inductor")
    os.environ["TRITON_CACHE_DIR"] = str(folder / "triton")


def private_compile_cache() -> None:
    """For ``--compile``: Inductor's and Triton's caches in a private folder of rocmtui's cache, not Inductor's
    default ``/tmp/torchinductor_<user>``, which another user can make first and fill with pickles. A cache
    folder the user set (``TORCHINDUCTOR_CACHE_DIR``, ``TRITON_CACHE_DIR``) is theirs to keep."""
    if "TORCHINDUCTOR_CACHE_DIR" in os.environ and "TRITON_CACHE_DIR" in os.environ:
        return
    root = first_private([cache_dir() / "compile"], what="compile cache folder refused")
    os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", str(root / "inductor"))
    os.environ.setdefault("TRITON_CACHE_DIR", str(root / "triton"))


INDUCTOR_MODES: dict[FusedMode, str | None] = {"default": None, "max-autotune": "max-autotune-no-cudagraphs"}
"""``torch.compile``'s mode for each ``--fused-mode``: never Inductor's own CUDA graphs, the run captures the step."""


Compiled = TypeVar("Compiled", bound=Callable[..., Any])


def compile_for(target: Compiled, mode: FusedMode) -> Compiled:
    """``target`` (the model, or ``gpudata.place_images``) through ``torch.compile`` as a build for ``mode``
    compiles it (and a run loads it)."""
    return torch.compile(target, dynamic=False, mode=INDUCTOR_MODES[mode])  # type: ignore[return-value]


def compiled(target: Compiled, fused: Plan, mode: FusedMode = "default") -> Compiled:
    """``target`` (the model, or the test pass's ``tta.batch_logits``) through ``torch.compile`` over the ready
    cache, or ``target`` itself."""
    return compile_for(target, mode) if _loads(fused) else target


def compiled_placement(fused: Plan, mode: FusedMode = "default") -> Placement | None:
    """The epochs' crops, flips and jitter (``gpudata.place_images``) as one compiled kernel over the ready
    cache (an epoch's draw: 0.2 ms against about 5 ms in a gather and the jitter's passes), or None."""
    return compile_for(place_images, mode) if _loads(fused) else None


def _loads(fused: Plan) -> bool:
    """Whether the run loads compiled code from a ready cache: Inductor and Triton pointed at it."""
    if fused.state != "ready" or fused.folder is None:
        return False
    use_cache(fused.folder)
    os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")  # a warm cache needs no pool of compilers
    # what Inductor and Triton add to the cache as they load stays writable by this user alone (under umask 002
    # it would not, and the next run would find the cache loose and rebuild it); only narrows the umask
    os.umask(os.umask(0o077) | 0o022)
    return True


def failed(fused: Plan, err: BaseException) -> Plan:
    """Record a failure in the cache folder so no later run tries it again; the plan's one line."""
    why = first_line(err, with_type=True)
    if fused.folder is not None:
        try:
            write_record(fused.folder / FAILED, {"error": why})
            (fused.folder / READY).unlink(missing_ok=True)
        except OSError:
            pass
    return Plan("failed", fused.folder, f"fused kernels failed ({why}); eager kernels")


def build_later(fused: Plan) -> subprocess.Popen[bytes] | None:
    """Start the background build for a ``missing`` or ``broken`` cache (the weighing alone for an
    ``unweighed`` one), in a session of its own (it outlives the run); None when there is nothing to build or it
    could not start."""
    if fused.state not in ("missing", "broken", "unweighed") or fused.folder is None or fused.request is None:
        return None
    try:
        if fused.state == "broken":
            shutil.rmtree(fused.folder, ignore_errors=True)
        private_dir(fused.folder)
        write_record(fused.folder / REQUEST, fused.request)
        log_fd = os.open(fused.folder / LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        with os.fdopen(log_fd, "ab") as log:
            return subprocess.Popen(
                [sys.executable, "-m", "rocmtui.train.fused_build", str(fused.folder)],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=True,
                close_fds=True,
            )
    except OSError:
        return None


def _mark_used(folder: Path) -> None:
    """Stamp the cache as used now, so that pruning (``fused_prune``) keeps the caches in use."""
    with contextlib.suppress(OSError):
        os.utime(folder / READY)


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


MANIFEST_BYTES = 64 << 20
"""The most a cache's own records are read up to: max-autotune's kernels list thousands of files."""


def _read_json(path: Path) -> dict[str, Any]:
    try:
        value = decode_json(read_small(path, MANIFEST_BYTES), Any)
    except (OSError, CodecError, UsageError):
        return {}
    return value if isinstance(value, dict) else {}


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None
