"""torch.distributed in the few forms the trainer uses.

`torchrun` sets RANK, WORLD_SIZE and LOCAL_RANK; without them the trainer runs as a
single process and every collective below is the identity, so the same loop serves one
CPU and many GPUs. The backend is gloo on CPU and NCCL on CUDA.

Launch on one machine: ``torchrun --nproc-per-node 2 -m rewardsmith.trainer run.yaml``.
Across nodes, the same command on every node with ``--nnodes N --node-rank i
--rdzv-backend c10d --rdzv-endpoint HOST:PORT``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import torch
import torch.distributed as dist
from torch import Tensor

__all__ = [
    "DistContext",
    "all_gather_cat",
    "all_gather_objects",
    "all_reduce_sum",
    "init_distributed",
]


@dataclass(frozen=True)
class DistContext:
    """Where this process sits: its rank, the world size and its device."""

    rank: int
    world_size: int
    device: torch.device

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        return self.world_size > 1


def init_distributed(device: str = "auto") -> DistContext:
    """Join the process group torchrun describes (or run alone without one)."""
    use_cuda = device == "cuda" or (device == "auto" and torch.cuda.is_available())
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    target = torch.device("cuda", local_rank) if use_cuda else torch.device("cpu")
    if use_cuda:
        torch.cuda.set_device(target)
    if world_size > 1 and not dist.is_initialized():
        dist.init_process_group(
            backend="nccl" if use_cuda else "gloo", timeout=timedelta(minutes=10)
        )
    return DistContext(rank, world_size, target)


def all_gather_cat(tensor: Tensor, ctx: DistContext) -> Tensor:
    """Concatenate every rank's `tensor` along dim 0, in rank order (same shape on all)."""
    if not ctx.distributed:
        return tensor
    parts = [torch.empty_like(tensor) for _ in range(ctx.world_size)]
    dist.all_gather(parts, tensor.contiguous())
    return torch.cat(parts, dim=0)


def all_reduce_sum(tensor: Tensor, ctx: DistContext) -> Tensor:
    """The element-wise sum of every rank's `tensor` (same shape on all), on every rank."""
    if not ctx.distributed:
        return tensor
    total = tensor.detach().clone().to(ctx.device)
    dist.all_reduce(total, op=dist.ReduceOp.SUM)
    return total.to(tensor.device)


def all_gather_objects(obj: Any, ctx: DistContext) -> list[Any]:
    """Every rank's picklable `obj`, in rank order."""
    if not ctx.distributed:
        return [obj]
    out: list[Any] = [None] * ctx.world_size
    dist.all_gather_object(out, obj)
    return out


def shutdown(ctx: DistContext) -> None:
    """Leave the process group (a no-op for a single process)."""
    if ctx.distributed and dist.is_initialized():
        dist.destroy_process_group()
