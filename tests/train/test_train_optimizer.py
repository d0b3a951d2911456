"""FunctionalOptimizer steps exactly as torch.optim does, shares its state dicts, and keeps torch._dynamo unloaded."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
import torch
from torch import nn

from rocmtui.train.optimizer import FunctionalOptimizer, orthogonalized, orthogonalized_batch

KINDS = ("adam", "adamw", "sgd")
MUON: dict[str, Any] = {"lr": 0.1, "weight_decay": 0.0, "fused": False}


def model_pair() -> tuple[nn.Sequential, nn.Sequential]:
    torch.manual_seed(0)
    a = nn.Sequential(nn.Linear(6, 5), nn.BatchNorm1d(5), nn.Linear(5, 3))
    b = nn.Sequential(nn.Linear(6, 5), nn.BatchNorm1d(5), nn.Linear(5, 3))
    b.load_state_dict(a.state_dict())
    return a, b


def groups(model: nn.Sequential) -> list[dict[str, Any]]:
    """Two groups, the second with its own learning-rate scale and weight decay (as fastnet's BatchNorm biases)."""
    norm = list(model[1].parameters())
    rest = [p for p in model.parameters() if all(p is not q for q in norm)]
    return [{"params": rest, "lr_scale": 1.0}, {"params": norm, "lr_scale": 8.0, "weight_decay": 1e-4, "lr": 0.08}]


def torch_optimizer(kind: str, model: nn.Sequential) -> torch.optim.Optimizer:
    if kind == "sgd":
        return torch.optim.SGD(groups(model), lr=0.01, momentum=0.9, nesterov=True, weight_decay=5e-3, fused=True)
    cls = torch.optim.AdamW if kind == "adamw" else torch.optim.Adam
    return cls(groups(model), lr=0.01, weight_decay=5e-3, fused=True)


def ours(kind: str, model: nn.Module) -> FunctionalOptimizer:
    return FunctionalOptimizer(kind, groups(model), lr=0.01, weight_decay=5e-3, fused=True)  # type: ignore[arg-type]


def train(model: nn.Module, optimizer: Any, steps: int, seed: int) -> None:
    generator = torch.Generator().manual_seed(seed)
    for _ in range(steps):
        x = torch.randn(8, 6, generator=generator)
        y = torch.randint(0, 3, (8,), generator=generator)
        optimizer.zero_grad(set_to_none=True)
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()


def same(a: nn.Module, b: nn.Module) -> bool:
    return all(torch.equal(p, q) for p, q in zip(a.state_dict().values(), b.state_dict().values(), strict=True))


@pytest.mark.parametrize("kind", KINDS)
def test_steps_match_torch_optim_to_the_bit(kind: str) -> None:
    a, b = model_pair()
    train(a, torch_optimizer(kind, a), 6, seed=1)
    train(b, ours(kind, b), 6, seed=1)
    assert same(a, b)


@pytest.mark.parametrize("kind", KINDS)
def test_state_dicts_cross_both_ways(kind: str) -> None:
    """A checkpoint written through torch.optim resumes here, and one written here resumes there."""
    a, b = model_pair()
    reference, mine = torch_optimizer(kind, a), ours(kind, b)
    train(a, reference, 3, seed=2)
    train(b, mine, 3, seed=2)
    resumed_mine, resumed_reference = ours(kind, b), torch_optimizer(kind, a)
    resumed_mine.load_state_dict(reference.state_dict())
    resumed_reference.load_state_dict(mine.state_dict())
    train(a, resumed_reference, 3, seed=3)
    train(b, resumed_mine, 3, seed=3)
    assert same(a, b)
    assert set(mine.state_dict()["param_groups"][1]) == set(reference.state_dict()["param_groups"][1])


def test_a_state_dict_for_other_groups_is_refused() -> None:
    a, _ = model_pair()
    optimizer = ours("adam", a)
    saved = optimizer.state_dict()
    saved["param_groups"] = saved["param_groups"][:1]
    with pytest.raises(ValueError, match="other parameter groups"):
        optimizer.load_state_dict(saved)


@pytest.mark.slow
def test_building_and_stepping_it_never_imports_dynamo() -> None:
    code = """
import sys, torch
from torch import nn
from rocmtui.train.optimizer import FunctionalOptimizer, orthogonalized
m = nn.Linear(4, 2)
opt = FunctionalOptimizer("adam", [{"params": list(m.parameters())}], lr=1e-3, weight_decay=0.0, fused=True)
m(torch.randn(3, 4)).sum().backward()
opt.step()
print("torch._dynamo" in sys.modules)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "False"


def test_newton_schulz_pushes_every_singular_value_near_one_and_keeps_the_directions() -> None:
    gen = torch.Generator().manual_seed(0)
    for shape in ((64, 216), (256, 64)):  # wide and tall
        matrix = torch.randn(*shape, generator=gen) * torch.logspace(-0.5, 0.5, shape[1]).view(1, -1)
        out = orthogonalized(matrix)
        assert out.shape == matrix.shape
        singular = torch.linalg.svdvals(out)
        assert singular.min() > 0.3 and singular.max() < 1.3  # Muon's: roughly 0.5 to 1.5, never to 0
        u, _, vh = torch.linalg.svd(matrix, full_matrices=False)
        polar = u @ vh  # the exact orthogonal factor
        cosine = (out * polar).sum() / (out.norm() * polar.norm())
        assert cosine > 0.9


def test_a_muon_step_renormalises_the_filter_then_subtracts_the_orthogonalised_nesterov_update() -> None:
    torch.manual_seed(1)
    weight = nn.Parameter(torch.randn(8, 3, 3, 3))
    optimizer = FunctionalOptimizer(
        "muon", [{"params": [weight], "muon": True, "momentum": 0.6}], lr=0.1, weight_decay=0.0, fused=False
    )
    grads = [torch.randn(8, 3, 3, 3) for _ in range(2)]
    expected, buffer = weight.detach().clone(), torch.zeros(8, 3, 3, 3)
    for grad in grads:
        buffer = 0.6 * buffer + grad
        nesterov = grad + 0.6 * buffer
        expected = expected * (8**0.5 / expected.norm())
        expected = expected - 0.1 * orthogonalized(nesterov.reshape(8, -1)).view(8, 3, 3, 3)
        weight.grad = grad.clone()
        optimizer.step()
    assert torch.allclose(weight.detach(), expected, atol=1e-6)
    assert torch.allclose(optimizer.state[weight]["momentum_buffer"], buffer, atol=1e-6)


def test_batched_newton_schulz_over_padded_filters_matches_one_per_filter() -> None:
    gen = torch.Generator().manual_seed(2)
    shapes = ((64, 216), (64, 576), (256, 576), (256, 2304), (300, 40))  # fastnet's filters, and a tall one
    matrices = [torch.randn(*shape, generator=gen) for shape in shapes]
    for matrix, batched in zip(matrices, orthogonalized_batch(matrices), strict=True):
        single = orthogonalized(matrix)
        assert batched.shape == matrix.shape
        assert ((batched - single).norm() / single.norm()) < 1e-5  # rounding only: the padding stays zero


def test_a_batched_muon_step_is_the_per_filter_step() -> None:
    torch.manual_seed(3)
    weights = [nn.Parameter(torch.randn(8, 3, 3, 3)), nn.Parameter(torch.randn(16, 8, 3, 3))]
    copies = [nn.Parameter(w.detach().clone()) for w in weights]
    batched = FunctionalOptimizer("muon", [{"params": weights, "muon": True, "momentum": 0.6}], **MUON)
    single = FunctionalOptimizer("muon", [{"params": copies, "muon": True, "momentum": 0.6, "batched": False}], **MUON)
    for _ in range(3):
        for a, b in zip(weights, copies, strict=True):
            a.grad = torch.randn_like(a)
            b.grad = a.grad.clone()
        batched.step()
        single.step()
    for a, b in zip(weights, copies, strict=True):
        assert torch.allclose(a, b, atol=1e-5)


def test_a_muon_group_takes_its_own_number_of_newton_schulz_steps() -> None:
    torch.manual_seed(4)
    start, grad = torch.randn(16, 8, 3, 3), torch.randn(16, 8, 3, 3)
    results = {}
    for steps in (3, 5):
        weight = nn.Parameter(start.clone())
        group = {"params": [weight], "muon": True, "momentum": 0.6, "newton_schulz_steps": steps}
        weight.grad = grad.clone()
        FunctionalOptimizer("muon", [group], **MUON).step()
        nesterov = grad + 0.6 * grad
        renormed = start * (16**0.5 / start.norm())
        expected = renormed - 0.1 * orthogonalized(nesterov.reshape(16, -1), steps).view_as(start)
        assert torch.allclose(weight.detach(), expected, atol=1e-6), steps
        results[steps] = weight.detach()
    assert not torch.allclose(results[3], results[5], atol=1e-4)  # the count is used, not a fixed 3
