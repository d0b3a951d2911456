"""An epoch's crops, flips and jitter: drawn in one order on the generator, then placed by ``place_images``,
eager or compiled (with fused kernels: one kernel an epoch)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
import torch

from rocmtui.train import fused
from rocmtui.train.data import load_arrays, resolve_source
from rocmtui.train.engine import Augmenter, build_engine
from rocmtui.train.gpudata import Augmentation, alternating_flips, augment, permutation, place_images

RECIPE_AUGMENTATION = Augmentation(pad=2, reflect=True, alternating_flip=True, jitter=0.13)


def traced(target: Any) -> Any:
    """``target`` through Dynamo with eager kernels: the compiled placement's plumbing (constant sides, a
    missing ``which``, the draws' shapes), on the CPU and to the bit."""
    return torch.compile(target, backend="eager", dynamic=False)


def images(count: int, seed: int = 0) -> torch.Tensor:
    return torch.randint(0, 256, (count, 3, 32, 32), dtype=torch.uint8, generator=torch.Generator().manual_seed(seed))


@pytest.mark.parametrize("size", [None, 24], ids=["own size", "24 px crops"])
@pytest.mark.parametrize("aug", [RECIPE_AUGMENTATION, Augmentation(pad=4)], ids=["recipe", "zero fill, no jitter"])
def test_a_placement_given_draws_the_same_images_as_the_eager_one(aug: Augmentation, size: int | None) -> None:
    x, order = images(50), permutation(50, torch.Generator().manual_seed(1))
    flips = alternating_flips(torch.rand(50, generator=torch.Generator().manual_seed(2)) < 0.5, order, 1)
    eager = augment(x, torch.Generator().manual_seed(3), aug, flips, which=order, size=size)
    placed = augment(
        x, torch.Generator().manual_seed(3), aug, flips, which=order, size=size, placement=traced(place_images)
    )
    assert torch.equal(placed, eager)
    alone = augment(x, torch.Generator().manual_seed(3), aug, size=size, placement=traced(place_images))
    assert torch.equal(alone, augment(x, torch.Generator().manual_seed(3), aug, size=size))  # random flips, all images


def test_warming_the_placement_leaves_the_runs_generator_where_it_was(small) -> None:
    """The warm-up draws an epoch for each crop side on a generator of its own: the run's draws are unchanged."""
    config = small(model="fastnet", augment=True, jitter=0.13, crop_sizes=(24,), epochs=3)
    engine = build_engine(config, load_arrays(resolve_source(config)), torch.device("cpu"))
    sides: list[int] = []

    def placement(*args: Any, **kwargs: Any) -> torch.Tensor:
        sides.append(kwargs["out_h"])
        return place_images(*args, **kwargs)

    before = engine.augmenter.gen.get_state()
    augmenter = dataclasses.replace(engine.augmenter, placement=placement)
    augmenter.warm(engine.data.train_x, range(3))
    assert sorted(sides) == [24, 32] and torch.equal(engine.augmenter.gen.get_state(), before)
    sides.clear()
    augmenter.warm(engine.data.train_x, range(1, 3))  # resumed after the crop epoch
    assert sides == [32]


def test_eager_kernels_have_no_placement_to_warm(small) -> None:
    config = small(model="fastnet", augment=True)
    engine = build_engine(config, load_arrays(resolve_source(config)), torch.device("cpu"))
    assert engine.augmenter.placement is None
    Augmenter(None, torch.Generator(), None, placement=place_images).warm(engine.data.train_x, range(2))  # no aug


@pytest.mark.gpu(reason="Inductor's kernel for the placement")
@pytest.mark.parametrize("size", [None, 24], ids=["own size", "24 px crops"])
def test_the_compiled_placement_is_the_eager_one_within_a_grey_level(size: int | None) -> None:
    """Inductor's one kernel may round a multiply-add the other way where the eager passes do not: at most one
    grey level, in a few pixels."""
    device = torch.device("cuda")
    x, gen = images(5000).to(device), torch.Generator(device=device)
    order = permutation(5000, gen.manual_seed(1))
    flips = alternating_flips(torch.rand(5000, device=device, generator=gen.manual_seed(2)) < 0.5, order, 0)
    compiled = fused.compile_for(place_images, "default")
    eager = augment(x, gen.manual_seed(3), RECIPE_AUGMENTATION, flips, which=order, size=size)
    placed = augment(x, gen.manual_seed(3), RECIPE_AUGMENTATION, flips, which=order, size=size, placement=compiled)
    difference = (placed.int() - eager.int()).abs()
    assert placed.shape == eager.shape and placed.dtype == torch.uint8
    assert difference.max() <= 1 and (difference == 0).float().mean() > 0.999
