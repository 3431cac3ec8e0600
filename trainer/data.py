"""Tasks (prompt + reference), their prompt tokens, and which of them each step and rank sees.

The schedule is a pure function of (seed, step): no data-loader state to checkpoint, and
every rank computes the same global batch and takes its own contiguous slice. Prompts are
tokenised once, before training, so an empty or over-long prompt stops the run at the
start with its file and line, not at the step that happens to draw it.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import torch

__all__ = [
    "EncodedPrompts",
    "Task",
    "encode_prompts",
    "load_tasks",
    "prompt_indices",
    "rank_slice",
    "sample_seed",
]

log = logging.getLogger("rewardsmith.trainer")


@dataclass(frozen=True)
class Task:
    """One prompt and what its completions are checked against."""

    id: str
    prompt: str
    reference: Any
    task: str | None = None
    where: str = ""
    """file:line of the row, for error messages."""


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
                    f"{path}:{number}",
                )
            )
        except (json.JSONDecodeError, KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"{path}:{number}: not a task row ({exc!r}); need 'prompt'") from exc
    if not tasks:
        raise ValueError(f"{path}: no tasks")
    return tasks


@dataclass(frozen=True)
class EncodedPrompts:
    """Every task's prompt as token ids, and which of them were cut to fit."""

    ids: list[list[int]]
    truncated: list[bool]


def encode_prompts(
    tasks: Sequence[Task],
    tokenizer: Any,
    max_tokens: int,
    truncation: Literal["error", "left"] = "error",
) -> EncodedPrompts:
    """Tokenise every prompt once. An empty prompt is an error naming its row; one longer
    than `max_tokens` is an error naming its row (`error`) or keeps its last `max_tokens`
    tokens (`left`), and the number cut is logged as a warning."""
    for task in tasks:
        if not task.prompt.strip():
            raise ValueError(f"{task.where or task.id}: the prompt is empty")
    encoded = tokenizer([t.prompt for t in tasks], add_special_tokens=True)["input_ids"]
    ids, cut = [], []
    for task, tokens in zip(tasks, encoded, strict=True):
        if not tokens:
            raise ValueError(f"{task.where or task.id}: the prompt has no tokens")
        if len(tokens) > max_tokens and truncation == "error":
            raise ValueError(
                f"{task.where or task.id}: the prompt is {len(tokens)} tokens, more than "
                f"max_prompt_tokens={max_tokens}; raise max_prompt_tokens or set "
                "prompt_truncation: left to keep each prompt's last tokens"
            )
        ids.append(list(tokens[-max_tokens:]))
        cut.append(len(tokens) > max_tokens)
    if any(cut):
        log.warning(
            "%d of %d prompts are longer than max_prompt_tokens=%d and were cut from the left",
            sum(cut),
            len(cut),
            max_tokens,
        )
    return EncodedPrompts(ids, cut)


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
