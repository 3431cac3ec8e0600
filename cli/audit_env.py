"""``rewardsmith audit --env NAME``: play an environment's episode-level exploits.

Every bundled task of the environment gets each hostile policy of its ``exploits(tasks)``
(`environments.episode_exploits`); a class passes when no instance earns more than its
limit. The exit code is 1 when any class fails.

With ``--search`` (`search_environment`) it searches the environment's episode relations
instead (`cli.audit_env_search`), from its expert and lazy policies on the bundled tasks.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from rewardsmith.environments.episode_exploits import play
from rewardsmith.environments.episodes import make_environment
from rewardsmith.environments.policies import TASK_FILES, bundled_tasks

__all__ = ["BUNDLED_TASKS", "audit_environment", "search_environment"]

BUNDLED_TASKS = {
    name: TASK_FILES[name]
    for name in (
        "finance_document",
        "blender_scene",
        "cad_part",
        "code_repair",
        "math_tool",
        "retry_arithmetic",
    )
}
"""The environments with episode exploits, and their task files."""


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


def search_environment(
    name: str,
    limit: int,
    settings: Mapping[str, Any],
    json_path: Path | None = None,
    witnesses: Path | None = None,
) -> bool:
    """``audit --env NAME --search``: the episode search on the first `limit` bundled
    tasks of environment `name`; True when no relation broke."""
    from rewardsmith.cli.audit_env_search import env_search_command

    env = make_environment(name)
    try:
        return env_search_command(env, bundled_tasks(name, limit), settings, json_path, witnesses)
    finally:
        env.close()
