"""Tasks (prompt + reference) and which of them each step and each rank sees.

The schedule is a pure function of (seed, step): no data-loader state to checkpoint, and
every rank computes the same global batch and takes its own contiguous slice.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

__all__ = ["Task", "load_tasks", "prompt_indices", "rank_slice", "sample_seed"]


@dataclass(frozen=True)
class Task:
    """One prompt and what its completions are checked against."""

    id: str
    prompt: str
    reference: Any
    task: str | None = None


def load_tasks(path: str | Path) -> list[Task]:
    """Read JSONL tasks; a bad line fails with its file and line number."""
    tasks = []
    for number, line in enumerate(Path(path).read_text().splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            tasks.append(
                Task(
                    str(row.get("id", number)),
                    str(row["prompt"]),
                    row.get("reference"),
                    row.get("task"),
                )
            )
        except (json.JSONDecodeError, KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"{path}:{number}: not a task row ({exc!r}); need 'prompt'") from exc
    if not tasks:
        raise ValueError(f"{path}: no tasks")
    return tasks


def prompt_indices(n_tasks: int, step: int, per_step: int, seed: int) -> list[int]:
    """Task indices for `step`: consecutive slices of a fresh permutation per epoch."""
    perms: dict[int, list[int]] = {}
    out = []
    for i in range(step * per_step, (step + 1) * per_step):
        epoch, offset = divmod(i, n_tasks)
        if epoch not in perms:
            gen = torch.Generator().manual_seed(seed * 100_003 + epoch)
            perms[epoch] = torch.randperm(n_tasks, generator=gen).tolist()
        out.append(perms[epoch][offset])
    return out


def rank_slice(global_batch: int, rank: int, world_size: int) -> range:
    """The global sample indices this rank generates (a contiguous block)."""
    if global_batch % world_size:
        raise ValueError(
            f"the global batch of {global_batch} does not split over {world_size} processes: "
            "make prompts_per_step * group_size a multiple of the process count"
        )
    size = global_batch // world_size
    return range(rank * size, (rank + 1) * size)


def sample_seed(seed: int, step: int, index: int) -> int:
    """A distinct, layout-independent seed for sample `index` of `step`."""
    return (seed * 1_000_003 + step) * 1_000_033 + index
