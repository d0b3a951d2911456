"""A rank's share of the data and its place in the group, without starting a group."""

from __future__ import annotations

import pytest
import torch
from torch.utils.data.distributed import DistributedSampler

from rocmtui.train.distributed import SINGLE, Ranks, ranks_from_env, shard, shard_size


@pytest.mark.parametrize(("n", "world"), [(10, 2), (11, 2), (1900, 2), (7, 3), (5, 4), (64, 8)])
def test_a_shard_is_what_distributed_sampler_gives_that_rank(n: int, world: int) -> None:
    perm = torch.randperm(n, generator=torch.Generator().manual_seed(n * world))
    for rank in range(world):
        # A range stands for a dataset of n items: the sampler only takes its len().
        sampler: DistributedSampler[int] = DistributedSampler(range(n), num_replicas=world, rank=rank, shuffle=False)  # type: ignore[arg-type]
        expected = [int(perm[i]) for i in sampler]  # the sampler's indices, taken through the same order
        assert shard(perm, Ranks(rank, world, rank)).tolist() == expected
        assert len(expected) == shard_size(n, world)


def test_the_shards_cover_every_image_once_but_for_the_padding() -> None:
    perm = torch.randperm(1901)
    parts = [shard(perm, Ranks(r, 4, r)) for r in range(4)]
    seen = torch.cat(parts)
    assert set(seen.tolist()) == set(range(1901))
    assert seen.numel() - 1901 == 4 * shard_size(1901, 4) - 1901 == 3


def test_one_process_keeps_the_whole_order() -> None:
    perm = torch.randperm(50)
    assert shard(perm, SINGLE) is perm


def test_the_place_comes_from_the_launcher_environment() -> None:
    assert ranks_from_env({"RANK": "3", "WORLD_SIZE": "4", "LOCAL_RANK": "1"}) == Ranks(3, 4, 1)
    assert ranks_from_env({}) == SINGLE
    assert ranks_from_env({"RANK": "x", "WORLD_SIZE": "2"}) == SINGLE
    assert Ranks(0, 2, 0).leader and Ranks(0, 2, 0).several and not Ranks(1, 2, 1).leader
