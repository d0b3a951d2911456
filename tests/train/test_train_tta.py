"""The final test pass's test-time augmentation: all six views, or the views for the least certain share only."""

from __future__ import annotations

import dataclasses

import pytest
import torch
from torch import nn

from rocmtui.train.data import load_arrays, resolve_source
from rocmtui.train.engine import build_engine
from rocmtui.train.evaluate import evaluate
from rocmtui.train.models import FastNet
from rocmtui.train.tta import eval_batches
from rocmtui.train.tta import logits as _logits


def six_passes(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """airbench's TTA written out: the image and its mirror, blended with both one-pixel shifts of each."""

    def mirrored(images: torch.Tensor) -> torch.Tensor:
        return (model(images) + model(images.flip(-1))) / 2

    padded = nn.functional.pad(x, (1, 1, 1, 1), mode="reflect")
    return (mirrored(x) + (mirrored(padded[..., :32, :32]) + mirrored(padded[..., 2:, 2:])) / 2) / 2


@torch.no_grad()
def test_all_views_in_one_batch_give_the_six_passes() -> None:
    torch.manual_seed(0)
    model = FastNet(3, 32, 10).eval()
    x = torch.randn(12, 3, 32, 32)
    assert torch.allclose(_logits(model, x, True), six_passes(model, x), atol=1e-5)


@torch.no_grad()
def test_a_share_augments_only_the_least_certain_images() -> None:
    torch.manual_seed(1)
    model = FastNet(3, 32, 10).eval()
    x = torch.randn(16, 3, 32, 32)
    plain, full = model(x), six_passes(model, x)
    out = _logits(model, x, True, share=0.25)
    top2 = plain.topk(2, dim=1).values
    uncertain = set((top2[:, 0] - top2[:, 1]).topk(4, largest=False).indices.tolist())
    for i in range(16):
        expected = full[i] if i in uncertain else plain[i]
        assert torch.allclose(out[i], expected, atol=1e-5), i
    assert torch.equal(_logits(model, x, False, share=0.25), plain)


def test_the_share_is_read_from_the_command_line_and_checked(capsys) -> None:
    import pytest

    from rocmtui.cli.parser import build_parser
    from rocmtui.cli.train_options import config_from_args

    config = config_from_args(build_parser().parse_args(["train", "cifar", "--recipe", "fast", "--tta-share", "1"]))
    assert config.tta_share == 1.0 and config.fused_kernels
    for bad in ("0", "1.5", "x"):
        with pytest.raises(SystemExit):
            build_parser().parse_args(["train", "cifar", "--tta-share", bad])
    assert "give a share above 0 and at most 1" in capsys.readouterr().err


def test_the_test_pass_batches_are_at_least_the_training_batch() -> None:
    assert eval_batches(10_000, 2000) == [2000]
    assert eval_batches(7000, 2000) == [2000, 1000]
    assert eval_batches(500, 200) == [500]
    assert eval_batches(2500, 32) == [1000, 500]


@pytest.mark.slow  # torch.compile traces the test pass: 12 to 26 s on the 2-core box
def test_the_test_pass_through_torch_compile_gives_the_eager_result(small) -> None:
    """The engine's test pass is one function of a batch's uint8 images: traced by ``torch.compile`` (as it is
    with fused kernels) it gives the eager pass's loss and accuracies, with and without TTA, and no more
    graphs than ``eval_batches`` and the two ways make."""
    config = small(model="fastnet", batch_size=64, tta_share=0.25)
    engine = build_engine(config, load_arrays(resolve_source(config)), torch.device("cpu"))
    sizes = eval_batches(int(engine.data.test_y.shape[0]), config.batch_size)
    eager = [evaluate(engine), evaluate(engine, tta=True)]
    graphs: list[torch.fx.GraphModule] = []

    def backend(gm: torch.fx.GraphModule, _inputs: object) -> object:
        graphs.append(gm)
        return gm.forward

    torch._dynamo.reset()
    compiled = torch.compile(engine.nets.eager_test_logits, backend=backend, dynamic=False)
    engine.nets = dataclasses.replace(engine.nets, test_logits=compiled)
    traced = [evaluate(engine), evaluate(engine, tta=True)]
    assert traced == eager and 0 < len(graphs) <= 2 * len(sizes)
    assert engine.model.training


@pytest.mark.gpu(reason="Inductor's kernels for the test pass")
def test_the_compiled_test_pass_is_the_eager_one_within_bf16_rounding(small) -> None:
    """Inductor's fused kernels for the test pass (bf16, channels_last, as the recipe runs it) keep the values
    the eager kernels round between layers: the same accuracy within a few of the test images."""
    config = small(model="fastnet", device="cuda", batch_size=500, amp="bf16", channels_last=True, tta_share=0.25)
    engine = build_engine(config, load_arrays(resolve_source(config)), torch.device("cuda"))
    eager = [evaluate(engine), evaluate(engine, tta=True)]
    torch._dynamo.reset()
    compiled = torch.compile(engine.nets.eager_test_logits, dynamic=False)
    engine.nets = dataclasses.replace(engine.nets, test_logits=compiled)
    fused = [evaluate(engine), evaluate(engine, tta=True)]
    tests = int(engine.data.test_y.shape[0])
    for before, after in zip(eager, fused, strict=True):
        assert abs(before.acc - after.acc) * tests <= max(3, 0.005 * tests)
        assert abs(before.loss - after.loss) < 0.02
