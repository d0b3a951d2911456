"""A process's place in a job, from torchrun's variables or Slurm's; anything malformed is a process alone."""

from __future__ import annotations

import pytest

from rocmtui.run.rank_place import ALONE, RankPlace, rank_place

TORCHRUN = {
    "RANK": "5",
    "WORLD_SIZE": "8",
    "LOCAL_RANK": "1",
    "GROUP_RANK": "1",
    "LOCAL_WORLD_SIZE": "4",
    "TORCHELASTIC_RESTART_COUNT": "2",
    "TORCHELASTIC_RUN_ID": "job-7",
}
SLURM = {
    "SLURM_PROCID": "3",
    "SLURM_NTASKS": "6",
    "SLURM_LOCALID": "0",
    "SLURM_NODEID": "2",
    "SLURM_NNODES": "3",
    "SLURM_JOB_ID": "81234",
}


def test_torchrun_names_every_part_of_the_place() -> None:
    assert rank_place(TORCHRUN) == RankPlace(5, 8, 1, 1, 2, 2, "job-7")


def test_slurm_names_it_where_torchrun_did_not_and_torchrun_wins_where_both_did() -> None:
    assert rank_place(SLURM) == RankPlace(3, 6, 0, 2, 3, 0, "81234")
    assert rank_place(SLURM | TORCHRUN) == rank_place(TORCHRUN)  # torchrun under srun: the ranks are torchrun's


@pytest.mark.parametrize(
    "env",
    [
        {},
        {"RANK": "0"},
        TORCHRUN | {"RANK": "x"},
        TORCHRUN | {"RANK": "8"},  # outside the world
        TORCHRUN | {"GROUP_RANK": "5"},  # a node past the job's two
        SLURM | {"SLURM_NNODES": "-1"},
    ],
)
def test_a_missing_or_malformed_place_is_a_process_alone(env: dict[str, str]) -> None:
    assert rank_place(env) == ALONE


def test_a_job_id_is_bounded() -> None:
    assert len(rank_place(TORCHRUN | {"TORCHELASTIC_RUN_ID": "x" * 1000}).job_id) == 128


def test_lightnings_node_rank_names_the_node_where_torchrun_did_not() -> None:
    lightning = {"RANK": "3", "WORLD_SIZE": "4", "LOCAL_RANK": "1", "NODE_RANK": "1", "LOCAL_WORLD_SIZE": "2"}
    assert rank_place(lightning).node_rank == 1
    assert rank_place(lightning | {"GROUP_RANK": "0"}).node_rank == 0  # torchrun's own name wins
