"""Checkpoints: everything needed to continue a run on the same trajectory.

A checkpoint is a folder ``output_dir/checkpoints/step_000010`` with `state.pt` (model,
optimiser, step, KL coefficient; written by rank 0) and `rank{r}.pt` per rank (RNG states
and, with overlap on, the rollout already generated for the next step together with its
samples, which are re-scored on resume). The file ``latest`` names the newest complete one,
so a run killed while writing resumes from the previous checkpoint.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import torch

__all__ = [
    "latest_checkpoint",
    "load_rank_state",
    "load_state",
    "rng_state",
    "save_checkpoint",
    "set_rng_state",
]


def rng_state() -> dict[str, Any]:
    """The global RNG states of Python, NumPy and torch (CPU and CUDA)."""
    state = {
        "python": random.getstate(),
        "numpy": np.random.get_state(),
        "torch": torch.get_rng_state(),
    }
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict[str, Any]) -> None:
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def _folder(output_dir: str | Path, step: int) -> Path:
    return Path(output_dir) / "checkpoints" / f"step_{step:06d}"


def save_checkpoint(
    output_dir: str | Path,
    step: int,
    rank: int,
    shared: dict[str, Any] | None,
    own: dict[str, Any],
    barrier: Any,
) -> Path:
    """Write this rank's part; rank 0 also writes `shared` and, after all ranks, `latest`.

    `barrier` is called between the writes and the switch of `latest` (a no-op alone).
    """
    folder = _folder(output_dir, step)
    folder.mkdir(parents=True, exist_ok=True)
    torch.save(own, folder / f"rank{rank}.pt")
    if rank == 0 and shared is not None:
        torch.save(shared, folder / "state.pt")
    barrier()
    if rank == 0:
        pointer = folder.parent / "latest"
        tmp = pointer.with_suffix(".tmp")
        tmp.write_text(folder.name)
        tmp.replace(pointer)  # atomic: a reader sees the old or the new name, never half
    barrier()
    return folder


def latest_checkpoint(output_dir: str | Path) -> Path | None:
    """The newest complete checkpoint folder, or None."""
    pointer = Path(output_dir) / "checkpoints" / "latest"
    if not pointer.exists():
        return None
    folder = pointer.parent / pointer.read_text().strip()
    return folder if (folder / "state.pt").exists() else None


def load_state(folder: Path) -> dict[str, Any]:
    return torch.load(folder / "state.pt", map_location="cpu", weights_only=False)


def load_rank_state(folder: Path, rank: int) -> dict[str, Any]:
    path = folder / f"rank{rank}.pt"
    if not path.exists():
        raise FileNotFoundError(
            f"{path} is missing: resume with the same number of processes that saved it"
        )
    return torch.load(path, map_location="cpu", weights_only=False)
