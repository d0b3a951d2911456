"""A checkpoint taken at a step boundary holds that moment's values, though training goes on at once."""

from __future__ import annotations

import pytest
import torch

from rocmtui.train.checkpoints import HostCopy


def test_a_host_copy_of_cpu_tensors_is_not_changed_by_later_steps() -> None:
    weight = torch.arange(6.0)
    copy = HostCopy({"model": {"w": weight}, "steps": [torch.tensor(3)], "epoch": 2})
    weight.add_(100)
    state = copy.state()
    assert torch.equal(state["model"]["w"], torch.arange(6.0))
    assert state["steps"][0].item() == 3 and state["epoch"] == 2


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU: the copy runs on a side stream")
def test_a_host_copy_of_gpu_tensors_holds_their_values_of_its_moment() -> None:
    """Long work is queued before the copy and in-place updates after it, none of it waited for: every
    tensor comes back to the host with its values at the copy, not the updated ones."""
    device = torch.device("cuda")
    gen = torch.Generator(device=device).manual_seed(0)
    tensors = {f"t{i}": torch.randn(1024, 1024, device=device, generator=gen) for i in range(12)}
    expected = {name: t.cpu() for name, t in tensors.items()}
    HostCopy({"model": tensors}).state()  # pinned buffers cached: the next copy's allocations do not sync
    busy = torch.randn(8192, 8192, device=device, generator=gen)
    for _ in range(4):  # about 10 ms of queued work on the training stream
        busy = busy @ busy / 8192**0.5
    copy = HostCopy({"model": tensors})
    for t in tensors.values():
        t.mul_(-1).add_(1)
    state = copy.state()["model"]
    for name, values in expected.items():
        assert state[name].device.type == "cpu"
        assert torch.equal(state[name], values), name
