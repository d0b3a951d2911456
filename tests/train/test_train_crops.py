"""``--crop-sizes``: the first epochs train on smaller crops, objects at their own scale, later ones at full size."""

from __future__ import annotations

import dataclasses

import pytest
import torch
from graph_pairs import assert_trained_alike, graphed_and_eager

from rocmtui.base.errors import UsageError
from rocmtui.cli.argtypes import crop_sizes
from rocmtui.events import RunControl, RunFinished
from rocmtui.train import fused, models
from rocmtui.train.data import load_arrays, resolve_source
from rocmtui.train.device import resolve_device
from rocmtui.train.engine import build_engine
from rocmtui.train.gpudata import Augmentation, augment, permutation
from rocmtui.train.loop import train
from rocmtui.train.step import graph_keys

GPU = pytest.mark.gpu(reason="one CUDA graph a crop side")


def test_sides_are_read_as_one_an_epoch() -> None:
    assert crop_sizes("24,28") == (24, 28)
    assert crop_sizes(" 24 , 24 ,32") == (24, 24, 32)


def test_a_crop_of_the_images_own_size_draws_what_the_translation_alone_draws() -> None:
    """The recipe without ``--crop-sizes`` gives the same images to the bit, from the same random draws."""
    x = torch.randint(0, 256, (40, 3, 12, 12), dtype=torch.uint8, generator=torch.Generator().manual_seed(1))
    aug = Augmentation(pad=2, reflect=True, jitter=0.1)
    whole = augment(x, torch.Generator().manual_seed(2), aug)
    cropped = augment(x, torch.Generator().manual_seed(2), aug, size=12)
    assert torch.equal(whole, cropped)


@pytest.mark.parametrize("reflect", [True, False], ids=["reflected", "zero-filled"])
def test_each_crop_is_a_window_of_the_translated_image_anywhere_in_it(reflect: bool) -> None:
    """A 5x5 crop of a 9x9 image moved by up to 2 px: a window of the image padded by 2 at any of the 9x9
    places (mirrored or not), every place drawn over enough images."""
    x = torch.randint(0, 256, (2000, 3, 9, 9), dtype=torch.uint8, generator=torch.Generator().manual_seed(3))
    out = augment(x, torch.Generator().manual_seed(4), Augmentation(pad=2, reflect=reflect), size=5)
    assert out.shape == (2000, 3, 5, 5) and out.dtype == torch.uint8
    mode = "reflect" if reflect else "constant"
    padded = torch.nn.functional.pad(x.float(), (2, 2, 2, 2), mode=mode).to(torch.uint8)
    windows = padded.unfold(2, 5, 1).unfold(3, 5, 1).permute(0, 2, 3, 1, 4, 5)  # N, 9, 9, C, 5, 5
    crops = out.view(2000, 1, 1, 3, 5, 5)
    found = (windows == crops).flatten(3).all(3) | (windows.flip(-1) == crops).flatten(3).all(3)  # N, 9, 9
    assert found.flatten(1).any(1).all(), "a crop is no window of its padded image"
    assert found.any(0).all(), "a place in the image is never drawn"


def test_a_crop_larger_than_the_images_is_refused() -> None:
    x = torch.zeros(2, 3, 8, 8, dtype=torch.uint8)
    with pytest.raises(ValueError, match="does not fit"):
        augment(x, torch.Generator(), Augmentation(pad=2), size=9)


def test_fastnet_pools_the_whole_map_at_any_size() -> None:
    """At 32 px its global max-pool is the 3x3 max-pool it always was; smaller inputs work as well."""
    torch.manual_seed(0)
    net = models.FastNet(3, 32, 10).eval()
    x = torch.randn(4, 3, 32, 32)
    with torch.no_grad():
        layers = list(net)
        features = torch.nn.Sequential(*layers[:5])(x)
        assert features.shape[-2:] == (3, 3)
        want = torch.nn.Sequential(*layers[6:])(torch.nn.functional.max_pool2d(features, 3))
        assert torch.equal(net(x), want)
        for side in (9, 24, 28):
            assert net(torch.randn(2, 3, side, side)).shape == (2, 10)


def test_the_first_epochs_are_cropped_and_the_rest_whole(small) -> None:
    config = small(model="fastnet", optimizer="muon", lr=0.24, augment=True, crop_sizes=(24, 28))
    engine = build_engine(config, load_arrays(resolve_source(config)), torch.device("cpu"))
    order = permutation(int(engine.data.train_y.shape[0]), engine.batching.gen)[:10]
    sides = [engine.augmenter.epoch(engine.data.train_x, order, epoch).shape[-1] for epoch in range(4)]
    assert sides == [24, 28, 32, 32]


def test_graphs_are_captured_for_the_crop_sides_still_to_come() -> None:
    """One graph a side the run still trains on: a run resumed after its crop epochs needs none of them."""
    assert graph_keys((24, 28, 24), 32, 8, None) == [(24, False), (28, False), (32, False)]
    assert graph_keys((24, 28, 24), 32, 8, None, from_epoch=1) == [(24, False), (28, False), (32, False)]
    assert graph_keys((24, 28, 32), 32, 8, None, from_epoch=2) == [(32, False)]
    assert graph_keys((24, 28), 32, 8, None, from_epoch=5) == [(32, False)]
    assert graph_keys((24,), 32, 8, None, from_epoch=8) == []


def test_graphs_are_captured_for_the_spent_parameters_learning_and_frozen() -> None:
    """Muon's whitening bias learns for 3 epochs: the steps before and after need graphs of their own, and a
    crop side trained on both sides of that epoch needs both."""
    assert graph_keys((), 32, 8, 3) == [(32, False), (32, True)]
    assert graph_keys((), 32, 3, None) == [(32, False)]
    assert graph_keys((24, 24, 24, 24), 32, 8, 3) == [(24, False), (24, True), (32, True)]
    assert graph_keys((24,), 32, 8, 3, from_epoch=3) == [(32, True)]


@pytest.mark.slow  # trains fastnet for 2 epochs on the CPU: 35 s on the 2-core box on one thread
def test_a_run_with_crops_trains_to_the_end(small) -> None:
    config = small(model="fastnet", optimizer="muon", lr=0.24, augment=True, crop_sizes=(20,), epochs=2)
    summary = train(config, lambda _: None, RunControl())
    assert isinstance(summary.event, RunFinished), summary.event
    assert summary.event.reason == "completed" and summary.event.final_test_acc is not None


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"augment": False}, "--crop-sizes crops as part of --augment; give --augment too"),
        ({"model": "simplecnn", "optimizer": "sgd"}, "needs a model that takes any image size"),
    ],
    ids=["without-augment", "simplecnn"],
)
def test_settings_crops_cannot_go_with_are_refused(small, changes: dict[str, object], message: str) -> None:
    config = small(**{"model": "fastnet", "optimizer": "muon", "augment": True, "crop_sizes": (24,), **changes})
    with pytest.raises(UsageError, match=message):
        resolve_device(config)


def test_a_crop_larger_than_the_data_is_refused_in_one_line_before_any_folder(small) -> None:
    config = small(model="fastnet", optimizer="muon", augment=True, crop_sizes=(24, 40))
    with pytest.raises(UsageError, match="cannot be larger than cifar10's 32x32 images"):
        resolve_device(config)
    summary = train(config, lambda _: None, RunControl())
    assert summary.event.kind == "data" and "cannot be larger" in summary.event.message  # type: ignore[union-attr]
    assert summary.run_dir is None and not config.runs_dir.exists()
    with pytest.raises(UsageError, match="cannot be larger than mnist's 28x28 images"):
        resolve_device(dataclasses.replace(config, dataset="mnist", crop_sizes=(32,)))


def test_the_fused_cache_is_keyed_by_the_graphs_it_compiles(small, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another set of sides compiles other graphs: its own cache folder; a side of the images' own size
    compiles nothing more; muon's frozen whitening bias is not compiled (a run with fused kernels keeps it
    learning at rate 0: frozen, its compiled step is no cheaper)."""
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda _=None: "NVIDIA H200")  # no GPU needed to key
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda _=None: (9, 0))
    config = small(model="fastnet", augment=True, epochs=8)

    def key(sides: tuple[int, ...]) -> str:
        changed = dataclasses.replace(config, crop_sizes=sides)
        return fused.cache_key(fused.identity(changed, torch.device("cuda"), (3, 32, 32), 10, 5000, 1000))

    assert key(()) == key((32,))
    assert key((24,)) == key((24, 24)) != key(())
    assert key((24, 28)) == key((28, 24)) != key((24,))
    muon = dataclasses.replace(config, optimizer="muon", epochs=8)
    assert fused.identity(muon, torch.device("cuda"), (3, 32, 32), 10, 5000, 1000)["graphs"] == [[32, False]]


@GPU
def test_captured_steps_at_each_side_train_as_eager_steps_do(small) -> None:
    """One graph a side, sharing the model and the optimizer: a 24 px, a 32 px and a 24 px batch again give
    the weights that eager steps give."""
    config = small(
        model="fastnet", optimizer="muon", lr=0.24, augment=True, crop_sizes=(24,), device="cuda",
        batch_size=64, cudnn_benchmark=False,
    )  # fmt: skip
    with graphed_and_eager(config) as (graphed, eager):
        x, y = graphed.data.train_x[:64], graphed.data.train_y[:64]
        for batch in (x[..., 4:28, 4:28].contiguous(), x, x[..., :24, 8:].contiguous()):
            graphed.optimisation.step(batch, y, graphed.stats)
            eager.optimisation.step(batch, y, eager.stats)
        assert_trained_alike(graphed, eager)


@GPU
def test_a_graphed_run_with_crops_trains_to_the_end(small) -> None:
    config = small(
        model="fastnet", optimizer="muon", lr=0.24, augment=True, crop_sizes=(24, 28), device="cuda",
        cuda_graph=True, amp="bf16", channels_last=True, batch_size=64, epochs=3,
    )  # fmt: skip
    summary = train(config, lambda _: None, RunControl())
    assert isinstance(summary.event, RunFinished), summary.event
    assert summary.event.reason == "completed"
