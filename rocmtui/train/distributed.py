"""One rank of a data-parallel run: its place in the group, its device, its share of the data, and the few
collectives the loop needs beside DDP's own gradient all-reduce.

A rank learns its place from the environment torch.distributed's elastic launcher (``torchrun``) sets:
``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``. The backend is ``nccl`` on GPUs (RCCL on ROCm builds, under the
same name) and ``gloo`` on the CPU.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch
import torch.distributed as dist
from torch import nn

from rocmtui.run.rank_place import gpu_ids


@dataclass(frozen=True)
class Ranks:
    """This process's place in the run: rank 0 of 1 for a single-process run."""

    rank: int = 0
    world: int = 1
    local_rank: int = 0

    @property
    def leader(self) -> bool:
        """Rank 0 writes the run folder's stream, status and checkpoints."""
        return self.rank == 0

    @property
    def several(self) -> bool:
        return self.world > 1


SINGLE = Ranks()


def ranks_from_env(env: Mapping[str, str] = os.environ) -> Ranks:
    """The place torchrun (or ``rocmtui train --nproc``) gave this process; SINGLE outside a launch."""
    try:
        return Ranks(int(env["RANK"]), int(env["WORLD_SIZE"]), int(env.get("LOCAL_RANK", env["RANK"])))
    except (KeyError, ValueError):
        return SINGLE


def rank_device(device: torch.device, ranks: Ranks) -> torch.device:
    """Each rank trains on the GPU of its local rank (within what ``*_VISIBLE_DEVICES`` exposes)."""
    return torch.device("cuda", ranks.local_rank) if device.type == "cuda" else device


def join_group(ranks: Ranks, device: torch.device) -> None:
    """Join the process group: nccl (RCCL) for GPUs, gloo for the CPU. Blocks until every rank has joined."""
    if device.type == "cuda":
        torch.cuda.set_device(device)
        dist.init_process_group("nccl", rank=ranks.rank, world_size=ranks.world, device_id=device)
    else:
        dist.init_process_group("gloo", rank=ranks.rank, world_size=ranks.world)


def leave_group() -> None:
    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()


def shard_size(n: int, world: int) -> int:
    """Images each rank trains on per epoch (DistributedSampler: the last few repeat to even the shares)."""
    return math.ceil(n / world)


def shard(perm: torch.Tensor, ranks: Ranks) -> torch.Tensor:
    """This rank's part of an epoch's order, as ``DistributedSampler(shuffle=True, drop_last=False)`` takes it:
    the order padded by its own start to a multiple of the world size, then every ``world``-th index."""
    if not ranks.several:
        return perm
    total = shard_size(int(perm.numel()), ranks.world) * ranks.world
    padding = total - int(perm.numel())
    if padding:
        perm = torch.cat((perm, perm[:padding]))
    return perm[ranks.rank : total : ranks.world]


class Waits:
    """Seconds this rank spent waiting for the others in collectives, since last taken: what tells a straggler
    (busy the whole step) from the ranks it holds up (``rocmtui.run.rank_health``). Measured on the CPU (gloo),
    where a collective's future completes when its data has arrived; 0 on GPUs, whose collectives the host only
    queues."""

    def __init__(self) -> None:
        self.seconds = 0.0

    def take(self) -> float:
        seconds, self.seconds = self.seconds, 0.0
        return seconds


def wrap(model: nn.Module, device: torch.device, waits: Waits | None = None) -> nn.Module:
    """The model as DistributedDataParallel: gradients are averaged across ranks during backward. With ``waits``
    (on the CPU), the gradient all-reduce is DDP's own, timed from this rank's last bucket to its completion."""
    from torch.nn.parallel import DistributedDataParallel

    ids = [device.index] if device.type == "cuda" else None
    ddp = DistributedDataParallel(model, device_ids=ids)
    if waits is not None and device.type != "cuda":
        # DDP checks a hook's ``bucket`` annotation against the class itself; ours is a string (PEP 563)
        ddp.register_comm_hook(waits, lambda state, bucket: _timed_allreduce(state, bucket))  # noqa: PLW0108
    return ddp


def _timed_allreduce(waits: Waits, bucket: Any) -> Any:
    """DDP's default all-reduce of ``bucket``; the last bucket of a step (this rank's backward is done) timed
    until every rank's share has arrived."""
    from torch.distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook

    future = allreduce_hook(None, bucket)  # type: ignore[arg-type]  # None: the default process group
    if not bucket.is_last():
        return future
    start = time.perf_counter()

    def arrived(done: Any) -> Any:
        waits.seconds += time.perf_counter() - start
        return done.value()

    return future.then(arrived)


def agree(flags: Sequence[int], device: torch.device, waits: Waits | None = None) -> list[int]:
    """Each flag's maximum over all ranks: how the ranks decide together to stop, pause, save or report.

    One small all-reduce and one sync; the loop calls it every few steps, never more than once a step. Its
    time is added to ``waits`` (on the CPU: on a GPU the sync also waits for the rank's own queued work).
    """
    start = time.perf_counter()
    values = torch.tensor(list(flags), dtype=torch.int64, device=device)
    dist.all_reduce(values, op=dist.ReduceOp.MAX)
    out = [int(v) for v in values.tolist()]
    if waits is not None and device.type != "cuda":
        waits.seconds += time.perf_counter() - start
    return out


def sum_all(values: Sequence[float], device: torch.device) -> list[float]:
    """Each value's sum over all ranks (float64)."""
    tensor = torch.tensor(list(values), dtype=torch.float64, device=device)
    dist.all_reduce(tensor)
    return [float(v) for v in tensor.tolist()]


def gpu_identity(device: torch.device) -> tuple[str | None, str | None]:
    """(UUID, PCI bus id) of ``device`` as NVML and amd-smi spell them, to match a rank to a GPU sample."""
    if device.type != "cuda":
        return None, None
    return gpu_ids(torch.cuda.get_device_properties(device))
