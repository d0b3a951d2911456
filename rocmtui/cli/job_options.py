"""``--nnodes``, ``--rdzv-endpoint``, ``--rdzv-id`` and ``--node-rank``: Slurm's values where not given, and the
combinations a job of several nodes needs, refused in one line before anything starts."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping

from rocmtui.base.errors import UsageError
from rocmtui.base.ranges import job_id_ok
from rocmtui.config import TrainConfig


def with_job_defaults(config: TrainConfig, env: Mapping[str, str] = os.environ) -> TrainConfig:
    """``config`` with what Slurm says of the job (``SLURM_NNODES``, ``SLURM_NODEID``, ``SLURM_JOB_ID``) where the
    command line said nothing, then checked: several nodes need a rendezvous endpoint and a job id."""
    if "SLURM_JOB_ID" in env:
        config = _from_slurm(config, env)
    if config.nnodes > 1:
        if config.rdzv_endpoint is None:
            raise UsageError(
                f"--nnodes {config.nnodes}: give --rdzv-endpoint HOST:PORT, an address of one of the nodes that "
                "every node can reach (the same on every node)"
            )
        if config.rdzv_id is None:
            raise UsageError(f"--nnodes {config.nnodes}: give --rdzv-id ID, the same on every node (it names the job)")
    if config.node_rank is not None and config.node_rank >= config.nnodes:
        raise UsageError(f"--node-rank {config.node_rank}: the job has {config.nnodes} node(s), numbered from 0")
    if config.node_rank is not None and config.rdzv_endpoint is None:
        raise UsageError("--node-rank: give --rdzv-endpoint HOST:PORT too (node 0 hosts the rendezvous there)")
    return config


def _from_slurm(config: TrainConfig, env: Mapping[str, str]) -> TrainConfig:
    changes: dict[str, object] = {}
    try:
        if "nnodes" not in config.given and "SLURM_NNODES" in env:
            changes["nnodes"] = max(1, int(env["SLURM_NNODES"]))
            # the node's place in Slurm's allocation, where the job is the allocation's (not a part of it)
            if "node_rank" not in config.given and "SLURM_NODEID" in env and config.rdzv_endpoint is not None:
                changes["node_rank"] = max(0, int(env["SLURM_NODEID"]))
    except ValueError:
        raise UsageError("the Slurm job's SLURM_NNODES or SLURM_NODEID is not a number; give --nnodes") from None
    job = env["SLURM_JOB_ID"]
    if "rdzv_id" not in config.given and job_id_ok(job):
        changes["rdzv_id"] = f"slurm-{job}" if job[0].isalnum() else job
    return dataclasses.replace(config, **changes) if changes else config  # type: ignore[arg-type]
