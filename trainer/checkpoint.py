"""Checkpoints: everything needed to continue a run on the same trajectory.

A checkpoint is a folder ``output_dir/checkpoints/step_000010`` with `state.pt` (model,
optimiser, step, KL coefficient, skipped-batch count; written by rank 0) and `rank{r}.pt`
per rank (RNG states, the rank's reward state and, with reward overlap, the rollout
already generated for the next step together with its samples, which are re-scored on
resume; for a multi-turn run, the episodes begun for the next step, their running
environment steps drained and recorded first). Beside each file its SHA-256
(`state.pt.sha256`), written by the same rank, and once every rank has written, rank 0
writes `complete` and points ``latest`` at the folder.

Resuming takes the newest checkpoint, at or before ``latest``, that is complete and whose
files match their digests: a run killed while writing, a truncated file or a flipped bit
is reported (file and cause) and the previous checkpoint is used instead. Reading one
checkpoint directly (`load_state`) raises `CheckpointError` naming the file.
"""

from __future__ import annotations

import hashlib
import logging
import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import torch

__all__ = [
    "CheckpointError",
    "candidates",
    "latest_checkpoint",
    "load_rank_state",
    "load_state",
    "rng_state",
    "save_checkpoint",
    "set_rng_state",
]

log = logging.getLogger("rewardsmith.trainer")
COMPLETE = "complete"


class CheckpointError(RuntimeError):
    """A checkpoint file is missing, truncated or corrupt; the message names it."""


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
    barrier: Callable[[], None],
) -> Path:
    """Write this rank's part; rank 0 also writes `shared` and, after all ranks, marks the
    folder complete and switches `latest` to it.

    `barrier` is called between the writes and the switch (a no-op alone).
    """
    folder = _folder(output_dir, step)
    folder.mkdir(parents=True, exist_ok=True)
    _write(own, folder / f"rank{rank}.pt")
    if rank == 0 and shared is not None:
        _write(shared, folder / "state.pt")
    barrier()
    if rank == 0:
        (folder / COMPLETE).write_text("")
        pointer = folder.parent / "latest"
        tmp = pointer.with_suffix(".tmp")
        tmp.write_text(folder.name)
        tmp.replace(pointer)  # atomic: a reader sees the old or the new name, never half
    barrier()
    return folder


def latest_checkpoint(output_dir: str | Path) -> Path | None:
    """The folder ``latest`` names when it is complete, else None (no integrity check)."""
    pointer = Path(output_dir) / "checkpoints" / "latest"
    if not pointer.exists():
        return None
    folder = pointer.parent / pointer.read_text().strip()
    return folder if (folder / "state.pt").exists() else None


def candidates(output_dir: str | Path) -> Iterator[Path]:
    """Complete checkpoint folders, newest first, none newer than the one ``latest`` names."""
    root = Path(output_dir) / "checkpoints"
    pointer = root / "latest"
    newest = _step_of(pointer.read_text().strip()) if pointer.exists() else None
    folders = [f for f in root.glob("step_*") if (f / COMPLETE).exists()]
    if newest is not None:
        folders = [f for f in folders if _step_of(f.name) <= newest]
    yield from sorted(folders, key=lambda f: _step_of(f.name), reverse=True)


def load_state(folder: Path) -> dict[str, Any]:
    """The shared state of a checkpoint; `CheckpointError` when it is missing or corrupt."""
    return _read(folder / "state.pt")


def load_rank_state(folder: Path, rank: int) -> dict[str, Any]:
    path = folder / f"rank{rank}.pt"
    if not path.exists():
        raise CheckpointError(
            f"{path} is missing: resume with the same number of processes that saved it"
        )
    return _read(path)


def _write(obj: dict[str, Any], path: Path) -> None:
    torch.save(obj, path)
    Path(f"{path}.sha256").write_text(_digest(path))


def _read(path: Path) -> dict[str, Any]:
    """Load `path` after checking it against its digest (when it has one)."""
    if not path.exists():
        raise CheckpointError(f"{path} is missing")
    digest = Path(f"{path}.sha256")
    if digest.exists() and digest.read_text().strip() != _digest(path):
        raise CheckpointError(f"{path} is corrupt: its SHA-256 does not match {digest.name}")
    try:
        state = torch.load(path, map_location="cpu", weights_only=False)
    except Exception as exc:  # torch reports a truncated zip as a RuntimeError, others vary
        raise CheckpointError(f"{path} is truncated or corrupt: {exc}") from exc
    if not isinstance(state, dict):
        raise CheckpointError(f"{path} does not hold a checkpoint (a {type(state).__name__})")
    return state


def _digest(path: Path) -> str:
    sha = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 24), b""):
            sha.update(block)
    return sha.hexdigest()


def _step_of(name: str) -> int:
    try:
        return int(name.removeprefix("step_"))
    except ValueError:
        return -1
