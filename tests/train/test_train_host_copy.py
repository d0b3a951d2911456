"""A checkpoint taken at a step boundary holds that moment's values, though training goes on at once."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from rocmtui.train.checkpoints import HostCopy
from rocmtui.train.data import load_arrays, resolve_source
from rocmtui.train.engine import build_engine
from rocmtui.train.state import Progress, device_state, position, snapshot


def test_a_host_copy_of_cpu_tensors_is_not_changed_by_later_steps() -> None:
    weight = torch.arange(6.0)
    copy = HostCopy({"model": {"w": weight}, "steps": [torch.tensor(3)], "epoch": 2})
    weight.add_(100)
    state = copy.state()
    assert torch.equal(state["model"]["w"], torch.arange(6.0))
    assert state["steps"][0].item() == 3 and state["epoch"] == 2


@pytest.mark.gpu(reason="the copy runs on a side stream")
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


@pytest.mark.gpu(reason="the copy runs on a side stream")
def test_a_host_copy_gathers_each_dtype_and_gives_back_every_tensor_as_it_was() -> None:
    """A model's state as a checkpoint holds it: weights in channels_last, 0-d and integer buffers, bf16 and
    bool tensors, nested in dicts and lists; each comes back with its shape, dtype and values."""
    device = torch.device("cuda")
    gen = torch.Generator(device=device).manual_seed(1)
    state: dict[str, Any] = {
        "model": {
            "conv": torch.randn(8, 3, 3, 3, device=device, generator=gen).to(memory_format=torch.channels_last),
            "steps": torch.tensor(7, device=device),
            "count": torch.arange(5, device=device),
            "half": torch.randn(4, 4, device=device, generator=gen).bfloat16(),
        },
        "optimizer": {"state": [{"momentum": torch.randn(10, device=device, generator=gen)}], "lr": 0.1},
        "mask": torch.rand(6, device=device, generator=gen) > 0.5,
        "empty": torch.zeros(0, 3, device=device),
        "cpu": torch.ones(2),
    }
    expected = {
        "conv": state["model"]["conv"].cpu(),
        "steps": state["model"]["steps"].cpu(),
        "count": state["model"]["count"].cpu(),
        "half": state["model"]["half"].cpu(),
        "momentum": state["optimizer"]["state"][0]["momentum"].cpu(),
        "mask": state["mask"].cpu(),
    }
    copy = HostCopy(state)
    for tensor in (state["model"]["conv"], state["model"]["half"], state["optimizer"]["state"][0]["momentum"]):
        tensor.mul_(-1)
    got = copy.state()
    model = got["model"]
    shown = {
        "conv": model["conv"],
        "steps": model["steps"],
        "count": model["count"],
        "half": model["half"],
        "momentum": got["optimizer"]["state"][0]["momentum"],
        "mask": got["mask"],
    }
    for name, values in expected.items():
        assert shown[name].device.type == "cpu" and shown[name].dtype == values.dtype, name
        assert shown[name].shape == values.shape and torch.equal(shown[name], values), name
    assert got["empty"].shape == (0, 3) and torch.equal(got["cpu"], torch.ones(2))
    assert got["optimizer"]["lr"] == 0.1
    assert model["conv"].untyped_storage().size() == model["conv"].numel() * 4  # its own storage, not the buffer's


def test_a_copy_taken_at_the_epoch_end_and_completed_later_is_the_whole_checkpoint(small) -> None:
    """The epoch end's device state is taken before the loop waits for its steps, the position added once the
    epoch is evaluated: the same checkpoint as a snapshot of that moment, and later steps do not change it."""
    config = small(epochs=2)
    engine = build_engine(config, load_arrays(resolve_source(config)), torch.device("cpu"))
    progress = Progress(epoch=1, global_step=7, best_acc=0.5, final_acc=0.5, images=448)
    whole = snapshot(engine, progress, 3.25)
    weights = {name: value.clone() for name, value in whole["model"].items()}  # the snapshot holds live tensors
    taken = HostCopy(device_state(engine))
    with torch.no_grad():
        for param in engine.model.parameters():
            param.add_(1)
    got = taken.completed(position(engine, progress, 3.25)).state()
    assert sorted(got) == sorted(whole)
    for name, value in weights.items():
        assert torch.equal(got["model"][name], value), name
    assert {k: got[k] for k in ("epoch", "global_step", "best_acc", "elapsed_s", "images", "perm")} == {
        "epoch": 1, "global_step": 7, "best_acc": 0.5, "elapsed_s": 3.25, "images": 448, "perm": None,
    }  # fmt: skip


@pytest.mark.gpu(reason="a GPU tensor added late")
def test_a_gpu_tensor_cannot_be_added_to_a_copy_already_taken() -> None:
    copy = HostCopy({"model": {"w": torch.ones(3, device="cuda")}})
    with pytest.raises(ValueError, match="gathered when it is taken"):
        copy.completed({"late": torch.zeros(2, device="cuda")})
