"""Math with a sandboxed Python tool: the model may compute, then answers; `math` grades.

The tool runs the model's program in the sandbox (`verifiers.sandbox.run_python`: no
network, no project files, its own uid, memory and wall-clock limits), so a program that
loops forever, fills memory or tries to read the task file gives an observation saying
so. The answer is the first action with no tool call; `\\boxed{}` or a plain number. It
must be the computed value where the gold is a plain value: the question's expression
copied into the box (``\\boxed{2^{31} - 1}``) is refused with an observation
(`environments.value_answer`), never scored by the checker's arithmetic.

    >>> env = MathWithPython()
    >>> state, prompt = env.reset({"id": "m1", "prompt": "What is 2**10?", "reference": "1024"})
    >>> env.step(state, "\\\\boxed{1024}").reward.value
    1.0
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from rewardsmith.environments.base import EnvironmentFailure, ToolEnvironment
from rewardsmith.environments.episode_exploits import EpisodeExploit
from rewardsmith.environments.protocol import EpisodeLimits, EpisodeState, Transition
from rewardsmith.environments.python_session import run_cell, session_cells
from rewardsmith.environments.tools import Tool, ToolCall
from rewardsmith.environments.value_answer import refuse_computation
from rewardsmith.verifiers.sandbox import LimitHit, Limits, SandboxResult, run_python

__all__ = ["MATH_TASKS", "MathWithPython", "python"]

MATH_TASKS = Path(__file__).resolve().parents[1] / "datasets" / "environments" / "math.jsonl"
TOOL_LIMITS = Limits(wall_s=5.0, cpu_s=5.0, memory_bytes=256 << 20, output_bytes=64 << 10)
_SHOWN = 2_000

INSTRUCTIONS = (
    "You may run Python with the `python` tool: write <tool_call>"
    '{"name": "python", "arguments": {"code": "..."}}</tool_call> and you will see what it '
    "prints. When you know the answer, reply with it alone, as \\boxed{answer}."
)


def python(code: str) -> str:
    """Run a Python program in a sandbox and return what it printed.

    Args:
        code: The program. Print what you want to see.
    """
    return describe_run(run_python(code, limits=TOOL_LIMITS))


def describe_run(result: SandboxResult) -> str:
    """What a sandboxed run printed and how it ended, as the model reads it; a jail that
    did not start raises `EnvironmentFailure` (the environment's failure, not the model's)."""
    if result.error:  # the jail did not start: the environment's failure, not the model's
        raise EnvironmentFailure(f"the sandbox could not run the program ({result.error})")
    out = result.stdout.decode("utf-8", "replace")[-_SHOWN:]
    err = result.stderr.decode("utf-8", "replace")[-_SHOWN:]
    parts = [out] if out else []
    if err:
        parts.append(f"stderr:\n{err}")
    if result.limit_hit is not None:
        parts.append(f"error: the program was stopped: {_limit_text(result.limit_hit)}")
    elif result.signal is not None:  # said by name: partial output alone hides the kill
        parts.append(f"error: the program was {result.describe()}")
    elif result.exit_code not in (0, None):
        parts.append(f"exit code {result.exit_code}")
    return "\n".join(parts) or "(the program printed nothing)"


def _limit_text(limit: LimitHit) -> str:
    return {
        LimitHit.WALL_TIME: f"it ran past {TOOL_LIMITS.wall_s:g} s",
        LimitHit.CPU_TIME: f"it used more than {TOOL_LIMITS.cpu_s:g} CPU seconds",
        LimitHit.MEMORY: f"it used more than {TOOL_LIMITS.memory_bytes >> 20} MiB",
    }.get(limit, f"its {limit.value} limit was reached")


class MathWithPython(ToolEnvironment):
    """Math word problems; the answer is graded by the `math` verifier."""

    name: ClassVar[str] = "math_tool"
    step_cost_hint: ClassVar[float] = 10.0  # a tool call is a sandboxed Python run
    tools = (Tool(python),)

    def __init__(
        self,
        limits: EpisodeLimits | None = None,
        scorer: Mapping[str, Any] | None = None,
        session: bool = False,
    ) -> None:
        super().__init__({"math": {"weight": 1.0}}, limits or EpisodeLimits(max_turns=4), scorer)
        self.session = session
        """A stateful tool: the episode's Python session (`python_session`), variables kept
        across calls and turns; a turn's calls then run in order (each may use the last)."""

    def _call_all(
        self, state: EpisodeState, calls: list[ToolCall]
    ) -> tuple[list[str], dict[str, Any]]:
        if not self.session:
            return super()._call_all(state, calls)
        started = time.monotonic()
        cells = session_cells(state.attempts)
        results: list[str] = []
        kept: list[str] = []
        for call in calls:
            if call.error:
                results.append(f"error: {call.error}")
                continue
            code = str(call.arguments["code"])
            result = run_cell([*cells, *kept], code, TOOL_LIMITS)
            results.append(describe_run(result))
            if result.ok:
                kept.append(code)
        return results, {"tool_s": round(time.monotonic() - started, 3), "cells": kept}

    def prompt(self, task: Mapping[str, Any]) -> str:
        return f"{task['prompt']}\n\n{INSTRUCTIONS}"

    def answer(self, state: EpisodeState, action: str) -> Transition:
        """The final answer; one that leaves the task's computation to the checker
        (``\\boxed{2^{31} - 1}`` for 2147483647) is refused (`value_answer`)."""
        return refuse_computation(state, action) or super().answer(state, action)

    def exploits(self, tasks: Sequence[Mapping[str, Any]]) -> Iterator[EpisodeExploit]:
        from rewardsmith.environments.answer_exploits import math_tool_exploits

        return math_tool_exploits(tasks)
