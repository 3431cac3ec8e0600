"""Load the bundled 3D task set (see README.md) as `Sample`s ready for its verifiers.

>>> tasks = load_tasks()
>>> [t.id for t in tasks][:2]
['red_box', 'gold_sphere']
>>> tasks[0].sample().task
'blender_scene'
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rewardsmith.verifiers.types import Sample, Step

__all__ = ["HERE", "Task", "load_tasks"]

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Task:
    id: str
    verifier: str
    """The registry name of the verifier that scores it (`blender_scene`, `cad_code`)."""
    prompt: str
    scripts: tuple[str, ...]
    """The reference solution: one script, or one per step of a multi-step task."""
    reference: Any
    """The verifier's reference with paths made absolute."""
    config: dict[str, Any] = field(default_factory=dict)

    def sample(self, scripts: list[str] | None = None) -> Sample:
        """A sample whose completion is `scripts` (the reference solution by default)."""
        chosen = list(self.scripts) if scripts is None else scripts
        completion: str | list[Step] = (
            chosen[0] if len(chosen) == 1 else [Step(action=s) for s in chosen]
        )
        return Sample(
            id=self.id,
            prompt=self.prompt,
            completion=completion,
            reference=self.reference,
            task=self.verifier,
        )


def _absolute(reference: Any) -> Any:
    if isinstance(reference, str):
        return str(HERE / reference)
    return {**reference, "mesh": str(HERE / reference["mesh"])}


def load_tasks() -> list[Task]:
    """Every task in ``tasks.jsonl``, reference solutions read from ``scripts/``."""
    tasks = []
    for line in (HERE / "tasks.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        scripts = tuple((HERE / p).read_text(encoding="utf-8") for p in row["scripts"])
        tasks.append(
            Task(
                row["id"],
                row["verifier"],
                row["prompt"],
                scripts,
                _absolute(row["reference"]),
                row.get("config", {}),
            )
        )
    return tasks
