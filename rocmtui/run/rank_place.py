"""Where a process stands in a job of several ranks, as its launcher told it through the environment.

torchrun (and ``rocmtui train --nproc/--nnodes``) sets ``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``, ``GROUP_RANK``
(the node; Lightning's own launcher: ``NODE_RANK``), ``LOCAL_WORLD_SIZE``, ``TORCHELASTIC_RESTART_COUNT`` and
``TORCHELASTIC_RUN_ID``; Slurm's ``srun`` sets ``SLURM_PROCID``, ``SLURM_NTASKS``, ``SLURM_LOCALID``,
``SLURM_NODEID``, ``SLURM_NNODES`` and ``SLURM_JOB_ID``.
torchrun's names win where both are set (torchrun started under ``srun``: the ranks are torchrun's).
Torch-free: a viewer and ``track()`` read it too.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Mapping
from dataclasses import dataclass

from rocmtui.run.format import RankStarted


@dataclass(frozen=True)
class RankPlace:
    """One process's place: rank 0 of 1 on node 0 of 1 outside a launch."""

    rank: int = 0
    world: int = 1
    local_rank: int = 0
    node_rank: int = 0
    nodes: int = 1
    restart: int = 0
    job_id: str = ""


ALONE = RankPlace()

_TORCHRUN = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "GROUP_RANK", "LOCAL_WORLD_SIZE", "TORCHELASTIC_RUN_ID")
_SLURM = ("SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NODEID", "SLURM_NNODES", "SLURM_JOB_ID")


def rank_place(env: Mapping[str, str] = os.environ) -> RankPlace:
    """This process's place from torchrun's variables, else Slurm's, else ALONE (also when they are malformed:
    a rank count that is not a number, a rank outside the world)."""
    for names in (_TORCHRUN, _SLURM):
        if names[0] not in env or names[1] not in env:
            continue
        try:
            place = _place(env, names)
        except ValueError:
            return ALONE
        return place if 0 <= place.rank < place.world and 0 <= place.node_rank < place.nodes else ALONE
    return ALONE


def _place(env: Mapping[str, str], names: tuple[str, ...]) -> RankPlace:
    """The place from one launcher's six variables (rank, world, local rank, node, node count or ranks a node,
    job id)."""
    rank, world, local, node, nodes_or_per_node, job = names
    global_rank, size = int(env[rank]), int(env[world])
    local_rank = int(env.get(local, env[rank]))
    node_rank = int(env.get(node, env.get("NODE_RANK", "0") if node == "GROUP_RANK" else "0"))
    if nodes_or_per_node == "LOCAL_WORLD_SIZE":  # torchrun gives the ranks of a node, not the node count
        per_node = int(env.get(nodes_or_per_node, env[world]))
        nodes = max(1, -(-size // max(1, per_node)))
    else:
        nodes = int(env.get(nodes_or_per_node, "1"))
    restart = int(env.get("TORCHELASTIC_RESTART_COUNT", "0"))
    return RankPlace(global_rank, size, local_rank, node_rank, nodes, restart, env.get(job, "")[:128])


def gpu_ids(props: object) -> tuple[str | None, str | None]:
    """(UUID, PCI bus id) from a GPU's properties (``torch.cuda.get_device_properties``) as NVML and amd-smi spell
    them: how a viewer matches a rank to a GPU sample, never by index."""
    raw = str(getattr(props, "uuid", "") or "")
    uuid = (raw if raw.startswith("GPU-") else f"GPU-{raw}") if raw else None
    bus = getattr(props, "pci_bus_id", None)
    if bus is None:
        return uuid, None
    domain, slot = getattr(props, "pci_domain_id", 0), getattr(props, "pci_device_id", 0)
    return uuid, f"{domain:08X}:{bus:02X}:{slot:02X}.0"


def started_here(
    rank: int, world: int, device: str, device_name: str = "", *, uuid: str | None = None, pci: str | None = None
) -> RankStarted:
    """This process's ``RankStarted``: its rank and world, its device, and its host, pid and place in the job."""
    place = rank_place()
    return RankStarted(
        rank,
        world,
        os.getpid(),
        socket.gethostname(),
        device,
        device_name,
        uuid,
        pci,
        local_rank=place.local_rank,
        node_rank=place.node_rank,
        nodes=place.nodes,
        restart=place.restart,
        job_id=place.job_id,
        wall=time.time(),
    )
