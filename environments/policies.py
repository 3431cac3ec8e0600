"""Scripted policies of every bundled environment, and where its bundled tasks are.

`POLICIES[name]` gives, per environment, the **expert** (the task's reference solution
played as turns: it earns the full reward on every bundled task) and the **lazy** policy
(a plausible shortcut that earns clearly less, often nothing). `rewardsmith audit --env
NAME --search` starts its rewrites from both (`environments.episode_relations`).

    >>> task = {"id": "add-3-4", "prompt": "3+4=", "reference": "7"}
    >>> POLICIES["retry_arithmetic"].expert(task), POLICIES["retry_arithmetic"].lazy(task)
    (['7'], ['8', '8'])
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["POLICIES", "TASK_FILES", "Policies", "bundled_tasks"]

_DATA = Path(__file__).resolve().parents[1] / "datasets"
TASK_FILES: dict[str, Path] = {
    "retry_arithmetic": _DATA / "arithmetic" / "tasks.jsonl",
    "math_tool": _DATA / "environments" / "math.jsonl",
    "code_repair": _DATA / "environments" / "code_repair.jsonl",
    "finance_document": _DATA / "environments" / "finance_document.jsonl",
    "cad_part": _DATA / "environments" / "cad_part.jsonl",
    "blender_scene": _DATA / "environments" / "blender_scene.jsonl",
}
"""Each bundled environment's task file."""

Policy = Callable[[Mapping[str, Any]], "list[str] | None"]
"""A task's actions; None where the policy has nothing for that task."""


def bundled_tasks(name: str, limit: int | None = None) -> list[dict[str, Any]]:
    """The first ``limit`` bundled tasks of environment ``name``."""
    if name not in TASK_FILES:
        raise ValueError(f"no bundled tasks for {name!r}; try: {', '.join(TASK_FILES)}")
    lines = TASK_FILES[name].read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()][:limit]


def _call(name: str, **arguments: Any) -> str:
    return f"<tool_call>{json.dumps({'name': name, 'arguments': arguments})}</tool_call>"


def _off_by_one(answer: str) -> str:
    return str(int(answer) + 1) if answer.lstrip("-").isdigit() else f"{answer}1"


# ----------------------------------------------------------------------------- per environment


def _arithmetic_expert(task: Mapping[str, Any]) -> list[str]:
    return [str(task["reference"])]


def _arithmetic_lazy(task: Mapping[str, Any]) -> list[str]:
    """A wrong, well-formed sum twice: the format part of the reward only."""
    return [_off_by_one(str(task["reference"]))] * 2


def _math_expert(task: Mapping[str, Any]) -> list[str]:
    """Print the answer with the tool, then answer it boxed."""
    answer = str(task["reference"])
    return [_call("python", code=f"print({answer!r})"), f"\\boxed{{{answer}}}"]


def _math_lazy(task: Mapping[str, Any]) -> list[str]:
    """A guess without the tool, one off."""
    return [f"\\boxed{{{_off_by_one(str(task['reference']))}}}"]


REPAIRED = {
    "r-mean": "def mean(xs):\n    return sum(xs) / len(xs)\n",
    "r-last": "def last(xs):\n    return xs[-1]\n",
    "r-syntax": "def is_even(n):\n    return n % 2 == 0\n",
    "r-reverse": "def reverse_words(s):\n    return ' '.join(reversed(s.split()))\n",
    "r-count": "def count_vowels(s):\n    return sum(1 for c in s.lower() if c in 'aeiou')\n",
    "r-clamp": "def clamp(x, lo, hi):\n    return max(lo, min(hi, x))\n",
}
"""The bundled repair tasks' fixed programs (by task id; a task not here has no expert)."""


def _repair_expert(task: Mapping[str, Any]) -> list[str] | None:
    fixed = REPAIRED.get(str(task["id"]))
    return None if fixed is None else [fixed]


def _repair_lazy(task: Mapping[str, Any]) -> list[str]:
    """The given program sent back unchanged."""
    return [str(task["broken"])]


def _finance_expert(task: Mapping[str, Any]) -> list[str]:
    from rewardsmith.environments.finance_document import expert_actions

    return expert_actions(task)


def _finance_lazy(task: Mapping[str, Any]) -> list[str]:
    """The figure as printed, without reading and without its scale: wrong by a factor of
    a thousand. (The right figure bare, with its scale, earns the full reward: an uncited
    right figure is grounded by any page that prints it; docs/gaming.md.)"""
    return [f"<answer>{task['reference']['answer']}</answer>"]


def _cad_expert(task: Mapping[str, Any]) -> list[str]:
    from rewardsmith.environments.cad_part import expert_actions

    return expert_actions(task)


_BOX = "import cadquery as cq\nresult = cq.Workplane('XY').box(10, 10, 10)\nshow_object(result)"


def _cad_lazy(task: Mapping[str, Any]) -> list[str]:
    """A 10 mm cube, built and answered."""
    from rewardsmith.environments.cad_part import build_call

    return [build_call(_BOX), f"```python\n{_BOX}\n```"]


def _blender_expert(task: Mapping[str, Any]) -> list[str]:
    from rewardsmith.environments.blender_policies import expert_actions

    return expert_actions(task)


def _blender_lazy(task: Mapping[str, Any]) -> list[str]:
    from rewardsmith.environments.blender_policies import lazy_actions

    return lazy_actions(task)


@dataclass(frozen=True)
class Policies:
    expert: Policy
    lazy: Policy


POLICIES: dict[str, Policies] = {
    "retry_arithmetic": Policies(_arithmetic_expert, _arithmetic_lazy),
    "math_tool": Policies(_math_expert, _math_lazy),
    "code_repair": Policies(_repair_expert, _repair_lazy),
    "finance_document": Policies(_finance_expert, _finance_lazy),
    "cad_part": Policies(_cad_expert, _cad_lazy),
    "blender_scene": Policies(_blender_expert, _blender_lazy),
}
