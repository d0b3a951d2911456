"""The final test pass's test-time augmentation: all six views, or the views for the least certain share only."""

from __future__ import annotations

import torch
from torch import nn

from rocmtui.train.evaluate import _logits
from rocmtui.train.models import FastNet


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
