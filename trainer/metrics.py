"""Per-step metrics to JSONL and TensorBoard (rank 0 only).

One JSON object per line in ``output_dir/metrics.jsonl``; a resumed run appends after
dropping lines from steps it will redo, so the file stays one line per step.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

__all__ = ["MetricsLogger", "read_metrics"]


class MetricsLogger:
    """Writes each step's metrics; a no-op on ranks other than 0."""

    def __init__(
        self, output_dir: str | Path, enabled: bool, tensorboard: bool, start_step: int = 0
    ) -> None:
        self.path = Path(output_dir) / "metrics.jsonl"
        self.enabled = enabled
        self._tb: Any = None
        if not enabled:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        _truncate_from(self.path, start_step)
        if tensorboard:
            from torch.utils.tensorboard import SummaryWriter

            self._tb = SummaryWriter(str(Path(output_dir) / "tensorboard"))

    def log(self, step: int, metrics: dict[str, float]) -> None:
        if not self.enabled:
            return
        # NaN (no reward in the whole batch) is written as null: strict JSON has no NaN.
        row = {k: v if math.isfinite(v) else None for k, v in metrics.items()}
        with self.path.open("a") as handle:
            handle.write(json.dumps({"step": step, **row}) + "\n")
        if self._tb is not None:
            for name, value in metrics.items():
                self._tb.add_scalar(name, value, step)

    def close(self) -> None:
        if self._tb is not None:
            self._tb.close()


def _truncate_from(path: Path, start_step: int) -> None:
    if not path.exists():
        return
    rows = [line for line in path.read_text().splitlines() if line.strip()]
    kept = [line for line in rows if json.loads(line)["step"] < start_step]
    path.write_text("".join(line + "\n" for line in kept))


def read_metrics(output_dir: str | Path) -> list[dict[str, Any]]:
    """The rows of a run's metrics.jsonl, in order."""
    path = Path(output_dir) / "metrics.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
