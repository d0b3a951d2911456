"""Adam, AdamW, Nesterov SGD and Muon without ``torch.optim.Optimizer``; the first three through torch's own
functional kernels.

Why: constructing any ``torch.optim.Optimizer`` imports ``torch._dynamo`` (through the dynamo-disable
wrappers on its methods): 2.3 s on the 2-core box, about 3 s on the H200, which every run waited for before
its first step. The update itself is ``torch.optim.adam.adam`` / ``torch.optim.sgd.sgd``, the functions that
``torch.optim.Adam``/``AdamW``/``SGD`` call with the same arguments (fused kernels, or foreach and
capturable inside a CUDA graph), so the steps are the same to the bit (tested), and so is the state dict:
checkpoints written through ``torch.optim`` load here, and the other way round.

Muon (Keller Jordan's, as airbench94_muon uses it) replaces a filter's Nesterov update by its nearest
semi-orthogonal matrix, found by a few Newton-Schulz iterations, and keeps each filter bank's norm fixed.
Groups marked ``muon`` take that step; the others take Nesterov SGD.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Literal

import torch
from torch.optim.adam import adam
from torch.optim.sgd import sgd

Kind = Literal["adam", "adamw", "sgd", "muon"]
SGD_MOMENTUM = 0.9
NEWTON_SCHULZ_STEPS = 3
"""airbench94_muon's; a group's ``newton_schulz_steps`` (``--newton-schulz-steps``) overrides it."""
NEWTON_SCHULZ_COEFFICIENTS = (3.4445, -4.7750, 2.0315)
"""The quintic iteration's coefficients, chosen for the steepest slope at zero (Muon's)."""


class FunctionalOptimizer:
    """The part of ``torch.optim.Optimizer`` the engine uses: param_groups, state, step, zero_grad, state dicts."""

    _step_supports_amp_scaling = False
    """A GradScaler unscales the gradients itself before ``step`` (the fp16 path)."""

    def __init__(
        self,
        kind: Kind,
        groups: list[dict[str, Any]],
        *,
        lr: float,
        weight_decay: float,
        fused: bool,
        capturable: bool = False,
        foreach: bool = False,
    ) -> None:
        self.kind = kind
        defaults: dict[str, Any] = {
            "lr": lr,
            "weight_decay": weight_decay,
            "maximize": False,
            "foreach": foreach if not fused else None,
            "differentiable": False,
            "fused": fused,
        }
        if kind in ("sgd", "muon"):
            defaults.update(momentum=SGD_MOMENTUM, dampening=0, nesterov=True)
        else:
            defaults.update(
                betas=(0.9, 0.999),
                eps=1e-8,
                amsgrad=False,
                capturable=capturable,
                decoupled_weight_decay=kind == "adamw",
            )
        self.param_groups: list[dict[str, Any]] = [{**defaults, **group} for group in groups]
        self.state: defaultdict[torch.Tensor, dict[str, Any]] = defaultdict(dict)

    def zero_grad(self, set_to_none: bool = True) -> None:
        for group in self.param_groups:
            for param in group["params"]:
                if param.grad is None:
                    continue
                if set_to_none:
                    param.grad = None
                else:
                    param.grad.detach_().zero_()

    @torch.no_grad()
    def step(self) -> None:
        for group in self.param_groups:
            params = [p for p in group["params"] if p.grad is not None]
            if not params:
                continue
            if group.get("muon"):
                self._muon(group, params)
            elif self.kind in ("sgd", "muon"):
                self._sgd(group, params)
            else:
                self._adam(group, params)

    def _adam(self, group: dict[str, Any], params: list[torch.Tensor]) -> None:
        on_device = group["capturable"] or group["fused"]
        for param in params:
            state = self.state[param]
            if not state:  # as torch.optim.Adam: the step count lives on the device only when it must
                state["step"] = (
                    torch.zeros((), dtype=torch.float32, device=param.device) if on_device else torch.tensor(0.0)
                )
                state["exp_avg"] = torch.zeros_like(param, memory_format=torch.preserve_format)
                state["exp_avg_sq"] = torch.zeros_like(param, memory_format=torch.preserve_format)
        states = [self.state[p] for p in params]
        beta1, beta2 = group["betas"]
        adam(
            params,
            [p.grad for p in params],  # type: ignore[misc]  # filtered above: none is None
            [s["exp_avg"] for s in states],
            [s["exp_avg_sq"] for s in states],
            [],
            [s["step"] for s in states],
            foreach=group["foreach"],
            capturable=group["capturable"],
            differentiable=False,
            fused=group["fused"],
            grad_scale=None,
            found_inf=None,
            has_complex=False,
            decoupled_weight_decay=group["decoupled_weight_decay"],
            amsgrad=False,
            beta1=beta1,
            beta2=beta2,
            lr=group["lr"],
            weight_decay=group["weight_decay"],
            eps=group["eps"],
            maximize=False,
        )

    def _sgd(self, group: dict[str, Any], params: list[torch.Tensor]) -> None:
        buffers: list[torch.Tensor | None] = [self.state[p].get("momentum_buffer") for p in params]
        sgd(
            params,
            [p.grad for p in params],  # type: ignore[misc]  # filtered above: none is None
            buffers,
            has_sparse_grad=False,
            foreach=group["foreach"],
            fused=group["fused"],
            grad_scale=None,
            found_inf=None,
            weight_decay=group["weight_decay"],
            momentum=group["momentum"],
            lr=group["lr"],
            dampening=group["dampening"],
            nesterov=group["nesterov"],
            maximize=False,
        )
        for param, buffer in zip(params, buffers, strict=True):  # the first step fills the list in place
            if buffer is not None:
                self.state[param]["momentum_buffer"] = buffer

    def _muon(self, group: dict[str, Any], params: list[torch.Tensor]) -> None:
        """Nesterov momentum, each filter bank renormalised to norm sqrt(rows), then the orthogonalised update
        (``newton_schulz_steps`` iterations): by default one batched Newton-Schulz over the filters zero-padded
        to one shape (``batched``: a dozen launches a step instead of a hundred), else one iteration per filter."""
        momentum, lr = group["momentum"], group["lr"]
        steps = int(group.get("newton_schulz_steps", NEWTON_SCHULZ_STEPS))
        updates = []
        for param in params:
            grad = param.grad
            assert grad is not None
            state = self.state[param]
            if "momentum_buffer" not in state:
                state["momentum_buffer"] = torch.zeros_like(grad)
            buffer = state["momentum_buffer"]
            buffer.mul_(momentum).add_(grad)
            updates.append(grad.add(buffer, alpha=momentum) if group["nesterov"] else buffer)
        matrices = [update.reshape(param.shape[0], -1) for param, update in zip(params, updates, strict=True)]
        if group.get("batched", True) and len(matrices) > 1:
            orthogonal = orthogonalized_batch(matrices, steps)
        else:
            orthogonal = [orthogonalized(matrix, steps) for matrix in matrices]
        for param, update in zip(params, orthogonal, strict=True):
            param.mul_(param.shape[0] ** 0.5 / param.norm())
            param.sub_(update.view_as(param).to(param.dtype) * lr)

    def state_dict(self) -> dict[str, Any]:
        """``torch.optim``'s format: state by parameter index, groups with their parameters' indexes."""
        index: dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            packed["params"] = [index.setdefault(id(p), len(index)) for p in group["params"]]
            groups.append(packed)
        state = {index[id(p)]: dict(values) for p, values in self.state.items() if id(p) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a state dict of this class or of the matching ``torch.optim`` class; ValueError when it does not fit."""
        saved_groups = state_dict["param_groups"]
        if len(saved_groups) != len(self.param_groups) or any(
            len(s["params"]) != len(g["params"]) for s, g in zip(saved_groups, self.param_groups, strict=True)
        ):
            raise ValueError("the saved optimizer has other parameter groups than this model")
        by_index: dict[int, tuple[torch.Tensor, dict[str, Any]]] = {}
        for saved, group in zip(saved_groups, self.param_groups, strict=True):
            for number, param in zip(saved["params"], group["params"], strict=True):
                by_index[int(number)] = (param, group)
            group.update({k: v for k, v in saved.items() if k != "params"})
        self.state = defaultdict(dict)
        for number, values in state_dict["state"].items():
            param, group = by_index[int(number)]
            self.state[param] = {key: _placed(param, group, key, value) for key, value in values.items()}


def _placed(param: torch.Tensor, group: dict[str, Any], key: str, value: Any) -> Any:
    """A loaded state value where ``torch.optim`` would put it (device and dtype of its parameter)."""
    if not isinstance(value, torch.Tensor):
        return value
    if key == "step":
        on_device = group.get("capturable") or group.get("fused")
        return value.to(dtype=torch.float32, device=param.device) if on_device else value
    return value.to(dtype=param.dtype, device=param.device) if param.is_floating_point() else value.to(param.device)


def orthogonalized(matrix: torch.Tensor, steps: int = NEWTON_SCHULZ_STEPS, eps: float = 1e-7) -> torch.Tensor:
    """About U V^T of ``matrix`` = U S V^T: its singular values pushed towards 1 (within about 0.5 to 1.5) by
    a quintic Newton-Schulz iteration, in bf16 on a GPU (as Muon does) and in fp32 on the CPU."""
    a, b, c = NEWTON_SCHULZ_COEFFICIENTS
    x: torch.Tensor = matrix.to(torch.bfloat16 if matrix.is_cuda else torch.float32)
    x = x / (x.norm() + eps)  # the largest singular value at most 1
    tall = x.shape[0] > x.shape[1]
    if tall:
        x = x.T
    for _ in range(steps):
        gram = x @ x.T
        x = a * x + (b * gram + c * gram @ gram) @ x
    return x.T if tall else x


def orthogonalized_batch(
    matrices: list[torch.Tensor], steps: int = NEWTON_SCHULZ_STEPS, eps: float = 1e-7
) -> list[torch.Tensor]:
    """``orthogonalized`` of each matrix, computed as one batch: each (wide) matrix zero-padded to the largest
    shape, so one batched product does what a product per matrix did. Padding changes nothing but rounding:
    a zero block stays zero through the iteration, and each matrix is scaled by its own norm."""
    a, b, c = NEWTON_SCHULZ_COEFFICIENTS
    dtype = torch.bfloat16 if matrices[0].is_cuda else torch.float32
    wide = [m.T if m.shape[0] > m.shape[1] else m for m in matrices]
    rows, cols = max(m.shape[0] for m in wide), max(m.shape[1] for m in wide)
    x = torch.zeros(len(wide), rows, cols, dtype=dtype, device=matrices[0].device)
    for slot, matrix in zip(x, wide, strict=True):
        slot[: matrix.shape[0], : matrix.shape[1]].copy_(matrix)
    x = x / (torch.linalg.vector_norm(x, dim=(1, 2), keepdim=True) + eps)
    for _ in range(steps):
        gram = x @ x.mT
        x = torch.baddbmm(x, torch.baddbmm(gram, gram, gram, beta=b, alpha=c), x, beta=a)
    out = [slot[: m.shape[0], : m.shape[1]] for slot, m in zip(x, wide, strict=True)]
    return [o.T if m.shape[0] > m.shape[1] else o for o, m in zip(out, matrices, strict=True)]
