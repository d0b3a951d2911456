"""The model zoo, optimizers and schedules, and the settings a device refuses."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
import torch
from torch import nn

from rocmtui.base.errors import UsageError
from rocmtui.config import TrainConfig
from rocmtui.train import fused, models
from rocmtui.train.data import load_arrays, resolve_source
from rocmtui.train.device import resolve_device
from rocmtui.train.engine import build_engine
from rocmtui.train.learning_rates import build_optimizer, freeze_spent, lr_at, set_lr, spanned_params
from rocmtui.train.models import FastNet, build_model


def test_simplecnn_is_exactly_the_guides_model() -> None:
    model = build_model("simplecnn", 3, 32, 10)
    assert isinstance(model, nn.Sequential)
    assert [type(m) for m in model] == [nn.Conv2d, nn.ReLU, nn.Flatten, nn.Linear]
    conv, linear = model[0], model[3]
    assert (conv.in_channels, conv.out_channels, conv.kernel_size, conv.padding) == (3, 32, (3, 3), (0, 0))
    assert (linear.in_features, linear.out_features) == (32 * 30 * 30, 10)
    assert model(torch.zeros(2, 3, 32, 32)).shape == (2, 10)


def test_resnet18_has_a_cifar_stem() -> None:
    model = build_model("resnet18", 3, 32, 10)
    assert isinstance(model.conv1, nn.Conv2d)
    assert model.conv1.kernel_size == (3, 3) and model.conv1.stride == (1, 1)
    assert isinstance(model.maxpool, nn.Identity)
    assert model(torch.zeros(2, 3, 32, 32)).shape == (2, 10)


@pytest.mark.parametrize(("channels", "size"), [(3, 32), (1, 28)])
def test_models_adapt_to_the_input(channels: int, size: int) -> None:
    for name in ("simplecnn", "resnet18", "fastnet"):
        model = build_model(name, channels, size, 10).eval()
        assert model(torch.zeros(2, channels, size, size)).shape == (2, 10), name


def test_fastnet_whitening_decorrelates_patches() -> None:
    torch.manual_seed(0)
    model = FastNet(3, 32, 10)
    base = torch.randn(64, 1, 32, 32)
    images = torch.cat((base, 0.9 * base + 0.3 * torch.randn_like(base), torch.randn_like(base)), dim=1)
    model.init_whitening(images)
    assert isinstance(model[0], nn.Conv2d) and model[0].bias is not None
    out = model[0](images)[:, :12] - model[0].bias[:12].view(1, -1, 1, 1)
    flat = out.permute(0, 2, 3, 1).reshape(-1, 12)
    cov = flat.T @ flat / flat.shape[0]
    assert torch.allclose(cov, torch.eye(12), atol=0.05)
    assert not model[0].weight.requires_grad


def test_fastnet_trains_with_scaled_norm_bias_rates() -> None:
    model = FastNet(3, 32, 10)
    config = TrainConfig(model="fastnet", optimizer="sgd", lr=0.1, weight_decay=1e-3)
    optimizer = build_optimizer(model, config, torch.device("cpu"), graph=False)
    plain, norms = optimizer.param_groups
    assert norms["lr"] == pytest.approx(6.4) and norms["weight_decay"] == pytest.approx(1e-3 / 64)
    set_lr(optimizer, dataclasses.replace(config, lr=0.2), 0, 100)
    assert (plain["lr"], norms["lr"]) == (pytest.approx(0.2), pytest.approx(12.8))


def test_muon_groups_follow_airbench94_muon() -> None:
    """Filters through Muon at --lr; the whitening bias, BatchNorm biases and head through Nesterov SGD at
    airbench's rates per image of the batch, each decayed by --weight-decay per step at the peak rate."""
    model = FastNet(3, 32, 10)
    config = TrainConfig(model="fastnet", optimizer="muon", lr=0.24, weight_decay=0.004, batch_size=2000)
    optimizer = build_optimizer(model, config, torch.device("cpu"), graph=False, steps_per_epoch=25)
    muon, whiten, norms, head = optimizer.param_groups
    assert muon["muon"] and muon["momentum"] == 0.6 and muon["lr"] == pytest.approx(0.24)
    assert muon["newton_schulz_steps"] == 3  # airbench94_muon's; the fast recipe asks for 5
    assert all(p.ndim == 4 and p.requires_grad for p in muon["params"]) and len(muon["params"]) == 6
    assert whiten["params"] == [model.whiten.bias] and whiten["span"] == 3 * 25
    assert head["params"] == [model.head.weight] and len(norms["params"]) == 6
    assert whiten["lr"] == pytest.approx(0.053 * 2000) and norms["lr"] == pytest.approx(0.053 * 2000)
    assert head["lr"] == pytest.approx(0.67 * 2000 * (9 / 256) ** 2)
    for group in (whiten, norms, head):
        assert group["momentum"] == 0.85 and group["nesterov"]
        assert group["lr"] * group["weight_decay"] == pytest.approx(0.004)


def test_the_whitening_bias_learns_for_its_span_then_stays() -> None:
    model = FastNet(3, 32, 10)
    config = TrainConfig(model="fastnet", optimizer="muon", lr=0.24, schedule="linear", batch_size=100)
    optimizer = build_optimizer(model, config, torch.device("cpu"), graph=False, steps_per_epoch=10)
    muon, whiten = optimizer.param_groups[:2]
    rates = []
    for step in (0, 15, 29, 30, 60):
        set_lr(optimizer, config, step, 80)
        rates.append((muon["lr"] / 0.24, whiten["lr"] / whiten["lr_scale"] / 0.24))
    assert rates == [
        (pytest.approx(1.0), pytest.approx(1.0)),
        (pytest.approx(1 - 15 / 80), pytest.approx(0.5)),
        (pytest.approx(1 - 29 / 80), pytest.approx(1 / 30)),
        (pytest.approx(1 - 30 / 80), 0.0),
        (pytest.approx(1 - 60 / 80), 0.0),
    ]


@pytest.mark.slow  # trains fastnet on the CPU: 8 s on the 2-core box on one thread, 21 s on two
def test_a_spent_whitening_bias_takes_no_gradient_and_trains_as_at_rate_zero(small) -> None:
    """Past its span the whitening bias is frozen: no gradient computed for it, and the same weights as the
    run that kept computing it at rate 0."""
    config = small(model="fastnet", optimizer="muon", lr=0.24, schedule="linear", epochs=4, max_steps_per_epoch=2)
    arrays = load_arrays(resolve_source(config))
    frozen, computed = (build_engine(config, arrays, torch.device("cpu")) for _ in range(2))
    x, y = frozen.data.train_x[:32], frozen.data.train_y[:32]
    span = frozen.optimizer.param_groups[1]["span"]
    assert span == 6 and frozen.freezes_spent
    for step in range(span + 2):
        for engine in (frozen, computed):
            set_lr(engine.optimizer, config, step, engine.total_steps)
            if engine is frozen:
                freeze_spent(engine.optimizer, step)
            engine.optimisation.step(x, y, engine.stats)
        assert spanned_params(frozen.optimizer)[0].requires_grad == (step < span)
    assert spanned_params(frozen.optimizer)[0].grad is None and spanned_params(computed.optimizer)[0].grad is not None
    for (name, a), b in zip(frozen.model.state_dict().items(), computed.model.state_dict().values(), strict=True):
        assert torch.equal(a, b), name
    assert frozen.stats.drain() == computed.stats.drain()


def test_the_spent_parameters_keep_their_gradients_under_compile(small) -> None:
    config = small(model="fastnet", optimizer="muon", lr=0.24, epochs=4, compile=True)
    assert not build_engine(config, load_arrays(resolve_source(config)), torch.device("cpu")).freezes_spent


def test_the_spent_parameters_keep_their_gradients_with_fused_kernels(small) -> None:
    """Fused kernels gain nothing from a frozen whitening bias: such a run captures no frozen graph."""
    config = small(model="fastnet", optimizer="muon", lr=0.24, epochs=4)
    engine = build_engine(config, load_arrays(resolve_source(config)), torch.device("cpu"))
    assert engine.freezes_spent
    engine.fused = fused.Plan("ready", Path("unused"))
    assert not engine.freezes_spent


def test_fastnets_head_starts_as_airbenchs_behind_its_scale() -> None:
    """Airbench's head: unit deviation, output / 256; ours: deviation 9/256, output / 9 (the same logits)."""
    assert FastNet(3, 32, 10).head.weight.std().item() == pytest.approx(9 / 256, rel=1e-5)


def test_muon_is_for_fastnet() -> None:
    with pytest.raises(UsageError, match=r"^the fast recipe's --optimizer muon is tuned for fastnet's layers; "):
        resolve_device(TrainConfig(device="cpu", optimizer="muon", model="resnet18"))  # --recipe fast --model ...
    with pytest.raises(UsageError, match=r"^--optimizer muon is tuned .* with --model resnet18 give --optimizer sgd"):
        resolve_device(TrainConfig(device="cpu", optimizer="muon", model="resnet18", given=("optimizer",)))


def test_muon_rates_follow_the_images_of_a_step_over_every_rank() -> None:
    """DDP averages the ranks' gradients: two ranks of 1,000 images step as one batch of 2,000."""
    config = TrainConfig(model="fastnet", optimizer="muon", lr=0.24, weight_decay=0.004, batch_size=1000)
    one = build_optimizer(FastNet(3, 32, 10), config, torch.device("cpu"), False, 25)
    two = build_optimizer(FastNet(3, 32, 10), config, torch.device("cpu"), False, 25, images_per_step=2000)
    for a, b in zip(one.param_groups[1:], two.param_groups[1:], strict=True):
        assert b["lr"] == pytest.approx(2 * a["lr"]) and b["lr"] * b["weight_decay"] == pytest.approx(0.004)
    assert one.param_groups[0]["lr"] == two.param_groups[0]["lr"]  # Muon's own rate does not scale


def test_schedules() -> None:
    const = TrainConfig(lr=1.0)
    assert lr_at(const, 50, 100) == 1.0
    linear = dataclasses.replace(const, schedule="linear")
    assert [lr_at(linear, s, 100) for s in (0, 50, 100)] == [1.0, 0.5, 0.0]
    cycle = dataclasses.replace(const, schedule="onecycle")
    values = [lr_at(cycle, s, 100) for s in range(101)]
    assert values[0] == pytest.approx(0.1) and max(values) == pytest.approx(1.0) and values.index(1.0) == 20
    assert values[-1] == pytest.approx(0.01)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"cuda_graph": True, "given": ("cuda_graph",)}, "needs a GPU"),  # typed: refused
        ({"device": "cuda"}, "torch sees no GPU"),
    ],
)
def test_gpu_only_settings_are_refused_on_the_cpu(changes: dict[str, Any], message: str) -> None:
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    with pytest.raises(UsageError, match=message):
        resolve_device(TrainConfig(device="cpu", **changes) if "device" not in changes else TrainConfig(**changes))


def test_unsafe_graph_combinations_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    # fp16 is captured with a fixed loss scale (step.STATIC_LOSS_SCALE), not refused
    assert resolve_device(TrainConfig(device="cuda", cuda_graph=True, amp="fp16")).type == "cuda"
    with pytest.raises(UsageError, match="one of --cuda-graph and --compile"):
        resolve_device(TrainConfig(device="cuda", cuda_graph=True, compile=True))


def test_newton_schulz_steps_out_of_range_are_refused_from_a_run_folder_too() -> None:
    for steps in (0, 11, 10**9):  # a resumed run's settings come from its folder, past the CLI's check
        with pytest.raises(UsageError, match="give 1 to 10 iterations"):
            resolve_device(TrainConfig(device="cpu", model="fastnet", optimizer="muon", newton_schulz_steps=steps))
    assert resolve_device(TrainConfig(device="cpu", newton_schulz_steps=5)).type == "cpu"  # not given: no check


def test_a_recipes_cuda_graph_is_left_out_on_the_cpu_not_refused(small) -> None:
    """``--recipe fast`` on a machine without a GPU trains without the graph (one typed would be refused)."""
    from rocmtui.train.device import fit_to_device

    config = small(cuda_graph=True)  # from a recipe: not in ``given``
    device = resolve_device(config)
    assert device.type == "cpu" and not fit_to_device(config, device).cuda_graph


@pytest.mark.parametrize(
    ("native", "given", "amp"), [(False, (), "off"), (True, (), "bf16"), (False, ("amp",), "bf16")]
)
def test_a_recipes_bf16_becomes_fp32_on_a_cpu_that_would_emulate_it(
    small, monkeypatch: pytest.MonkeyPatch, native: bool, given: tuple[str, ...], amp: str
) -> None:
    from rocmtui.train import device

    monkeypatch.setattr(device, "cpu_has_bf16", lambda: native)
    config = small(amp="bf16", given=given)
    assert device.fit_to_device(config, torch.device("cpu")).amp == amp


@pytest.mark.parametrize("channels", [3, 1], ids=["cifar", "mnist"])
def test_the_whitening_conv_padded_to_eight_channels_is_the_same_conv(channels: int) -> None:
    """On a GPU the whitening conv runs over zero-padded channels: the same outputs, the same bias gradient, and
    the same state dict (its filters keep their shape)."""
    net = FastNet(channels, 32, 10)
    conv, bias = net.whiten, net.whiten.bias
    assert isinstance(conv, models._Whiten) and bias is not None
    with torch.no_grad():
        bias.normal_(generator=torch.Generator().manual_seed(0))
    x = torch.randn(4, channels, 12, 12, generator=torch.Generator().manual_seed(1))
    plain, padded = conv(x), conv.padded(x.contiguous(memory_format=torch.channels_last))
    assert padded.shape == plain.shape and padded.is_contiguous(memory_format=torch.channels_last)
    assert torch.allclose(padded, plain, atol=1e-5)
    grads = []
    for out in (padded, plain):
        out.sum().backward()
        assert bias.grad is not None
        grads.append(bias.grad.clone())
        bias.grad = None
    assert torch.allclose(grads[0], grads[1], atol=1e-4)
    assert net.state_dict()["0.weight"].shape == (8 * channels, channels, 2, 2)
