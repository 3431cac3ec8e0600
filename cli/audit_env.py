"""``rewardsmith audit --env NAME``: play an environment's episode-level exploits.

Every bundled task of the environment gets each hostile policy of its ``exploits(tasks)``
(`environments.episode_exploits`); a class passes when no instance earns more than its
limit. The exit code is 1 when any class fails.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

from rich.console import Console
from rich.table import Table

from rewardsmith.environments.episode_exploits import play
from rewardsmith.environments.episodes import make_environment

__all__ = ["BUNDLED_TASKS", "audit_environment"]

_DATA = Path(__file__).resolve().parents[1] / "datasets" / "environments"
BUNDLED_TASKS = {
    "finance_document": _DATA / "finance_document.jsonl",
    "blender_scene": _DATA / "blender_scene.jsonl",
    "cad_part": _DATA / "cad_part.jsonl",
    "math_tool": _DATA / "math.jsonl",
    "retry_arithmetic": _DATA.parent / "arithmetic" / "tasks.jsonl",
}


def audit_environment(name: str, limit: int = 200) -> bool:
    """Play every exploit of environment `name` on its bundled tasks; print the table."""
    env = make_environment(name)
    exploits_of = getattr(env, "exploits", None)
    if exploits_of is None or name not in BUNDLED_TASKS:
        raise ValueError(
            f"environment {name!r} has no episode exploits; try: {', '.join(BUNDLED_TASKS)}"
        )
    lines = BUNDLED_TASKS[name].read_text(encoding="utf-8").splitlines()
    tasks = [json.loads(line) for line in lines if line.strip()][:limit]
    worst: dict[str, float] = defaultdict(float)
    counts: dict[str, int] = defaultdict(int)
    over: dict[str, int] = defaultdict(int)
    try:
        for exploit in exploits_of(tasks):
            reward = play(env, exploit.task, exploit.actions)
            counts[exploit.name] += 1
            worst[exploit.name] = max(worst[exploit.name], reward)
            over[exploit.name] += reward > exploit.limit
    finally:
        env.close()
    table = Table(title=f"episode exploits: {name}")
    for column in ("class", "episodes", "worst reward", "over limit"):
        table.add_column(column)
    for key in sorted(counts):
        table.add_row(key, str(counts[key]), f"{worst[key]:.3f}", str(over[key]))
    Console().print(table)
    return not any(over.values())
