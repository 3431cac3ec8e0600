"""FSDP: shard parameters, gradients and optimiser state across ranks (``parallel: fsdp``).

DDP keeps a full replica of the model on every rank and all-reduces gradients. FSDP
(Zhao et al. 2023, "PyTorch FSDP") keeps 1/N of every parameter on each of N ranks,
all-gathers a layer's parameters just before it runs and frees them after, and
reduce-scatters its gradients, so each rank holds about 1/N of the parameters, gradients
and Adam moments. The gradient equals DDP's: the reduce-scatter averages over ranks as
DDP's all-reduce does. This uses FSDP2 (`torch.distributed.fsdp.fully_shard`): every
transformer block (the classes the model lists in `_no_split_modules`) is one unit, and
the root holds the rest (embeddings, final norm, LM head tied to them, value head).

Checkpoints hold *full* tensors gathered on every rank (rank 0 writes them), so a
checkpoint is the same file whether it was written under DDP, FSDP or one process, and
can be resumed under any of them. Gathering needs the full model in CPU memory on each
rank for a moment: fine when it fits in host memory, which is the usual case for a
model that only fails to fit on one accelerator.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard, register_fsdp_forward_method
from torch.distributed.tensor import DTensor, distribute_tensor

__all__ = [
    "full_optimizer_state",
    "full_state",
    "load_full_state",
    "load_optimizer_state",
    "shard",
    "to_local",
]


def shard(model: nn.Module, world_size: int, device: torch.device) -> nn.Module:
    """Shard `model` in place over all ranks (one unit per block, plus the root); returns it.

    `PolicyWithValue.lm_forward` is registered as a forward method, so generation (which
    calls the LM directly, token by token) gathers the root's parameters too.
    """
    mesh = init_device_mesh(device.type, (world_size,))
    blocks = set(getattr(getattr(model, "lm", model), "_no_split_modules", None) or [])
    for module in model.modules():
        if type(module).__name__ in blocks:
            fully_shard(module, mesh=mesh)
    fully_shard(model, mesh=mesh)
    if hasattr(model, "lm_forward"):
        register_fsdp_forward_method(model, "lm_forward")
    return model


def to_local(value: Any) -> Any:
    """A full tensor from a DTensor (a collective: every rank must call it), else `value`."""
    return value.full_tensor() if isinstance(value, DTensor) else value


def full_state(model: nn.Module) -> dict[str, Any]:
    """The model's state dict with every sharded tensor gathered, on CPU (all ranks call)."""
    return {k: _cpu(to_local(v)) for k, v in model.state_dict().items()}


def load_full_state(model: nn.Module, full: dict[str, Any]) -> None:
    """Load a full state dict into a sharded model: each rank keeps its own shard."""
    current = model.state_dict()
    model.load_state_dict({k: _like(full[k], current[k]) for k in current})


def full_optimizer_state(optimizer: torch.optim.Optimizer) -> dict[str, Any]:
    """The optimiser's state dict with sharded moments gathered, on CPU (all ranks call)."""
    state = optimizer.state_dict()
    gathered = {
        i: {k: _cpu(to_local(v)) for k, v in per_param.items()}
        for i, per_param in state["state"].items()
    }
    return {"state": gathered, "param_groups": state["param_groups"]}


def load_optimizer_state(optimizer: torch.optim.Optimizer, full: dict[str, Any]) -> None:
    """Load a full optimiser state, re-sharding each moment like the parameter it belongs to.

    Parameters are numbered in param-group order, as `Optimizer.state_dict` numbers them.
    """
    params = [p for group in optimizer.param_groups for p in group["params"]]
    state = {}
    for i, per_param in full["state"].items():
        param = params[int(i)]
        state[i] = {k: _like(v, param) for k, v in per_param.items()}
    optimizer.load_state_dict({"state": state, "param_groups": full["param_groups"]})


def _like(value: Any, param: torch.Tensor) -> Any:
    """`value` sharded as `param` is, when `param` is sharded and `value` has its shape."""
    if not isinstance(param, DTensor) or not isinstance(value, torch.Tensor):
        return value
    if value.shape != param.shape:  # e.g. Adam's scalar step count
        return value
    return distribute_tensor(value.to(param.device), param.device_mesh, param.placements)


def _cpu(value: Any) -> Any:
    return value.detach().cpu() if isinstance(value, torch.Tensor) else value
