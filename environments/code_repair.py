"""Code repair: the model is shown a broken function and its failing tests, and fixes it.

Every program the model writes is compiled and tested in the sandbox by the `code_tests`
verifier (through the environment's `Scorer`); the observation is that verifier's own
feedback text (the failing tests, the traceback). The task's given program is the first
attempt, so the model starts from its real test log. Each attempt's test score is that
step's reward; the episode ends when every test passes or at the turn limit, with the
last program graded.

The final reward is 0.8 x the tests of the last program + 0.2 x tests x `repair_progress`
(the normalised gain of the logs from the given program to the last). The shaping term is
multiplied by the tests, so deleting or stubbing the code, which can turn a crash into a
clean run of failing tests, earns nothing from it.

    >>> env = CodeRepair()
    >>> task = {"id": "c", "prompt": "Fix `double`.", "broken": "def double(x): return x + 2",
    ...         "reference": {"format": "calls", "fn": "double",
    ...                       "cases": [{"input": "(3,)", "output": "6"}]}}
    >>> state, prompt = env.reset(task)
    >>> env.step(state, "def double(x): return 2 * x").reward.value
    1.0
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from rewardsmith.environments.base import ToolEnvironment
from rewardsmith.environments.protocol import EpisodeLimits, EpisodeState, Transition
from rewardsmith.graders import Reward
from rewardsmith.verifiers.types import Status

__all__ = ["CODE_REPAIR_TASKS", "REPAIR_REWARD", "TESTS_REWARD", "CodeRepair"]

CODE_REPAIR_TASKS = (
    Path(__file__).resolve().parents[1] / "datasets" / "environments" / "code_repair.jsonl"
)
TESTS_REWARD: dict[str, Any] = {"code_tests": {"weight": 1.0}}
REPAIR_REWARD: dict[str, Any] = {
    "grader": {
        "weighted": {
            "components": {
                "tests": "code_tests",
                "progress": {"product": {"tests": "code_tests", "gain": "repair_progress"}},
            },
            "weights": {"tests": 0.8, "progress": 0.2},
        }
    }
}
_FENCE = "```"


class CodeRepair(ToolEnvironment):
    """Repair a Python function against its tests; see the module doc."""

    name: ClassVar[str] = "code_repair"
    step_cost_hint: ClassVar[float] = 100.0  # every attempt runs its tests in the sandbox

    def __init__(
        self, limits: EpisodeLimits | None = None, scorer: Mapping[str, Any] | None = None
    ) -> None:
        super().__init__(REPAIR_REWARD, limits or EpisodeLimits(max_turns=4), scorer)

    def reset(self, task: Mapping[str, Any]) -> tuple[EpisodeState, str]:
        state, _ = super().reset(task)
        given = str(task["broken"])
        probe = state.with_attempt(given, None, kind="probe")  # scored as a program
        tested = self.score(TESTS_REWARD, probe)
        log = self._log(tested)
        state = state.with_attempt(given, log, kind="given", **_ran(tested))
        prompt = self.prompt(task) + f"\n\nTest results:\n{log}"
        return state, prompt

    def prompt(self, task: Mapping[str, Any]) -> str:
        return (
            f"{task['prompt']}\n\n{_FENCE}python\n{task['broken']}\n{_FENCE}\n\n"
            "Reply with the whole corrected program in one ```python block."
        )

    def answer(self, state: EpisodeState, action: str) -> Transition:
        reward = self.score(TESTS_REWARD, state.with_attempt(action, None, kind="program"))
        log = self._log(reward)
        state = state.with_attempt(action, log, kind="program", **_ran(reward))
        verdict = reward.verdicts.get("code_tests")
        if verdict is not None and verdict.status is Status.PASS:
            return self.finish(state, "answered")
        return Transition(state, log, reward, False)

    @staticmethod
    def _log(reward: Reward) -> str:
        verdict = reward.verdicts.get("code_tests")
        if verdict is None:
            return f"error: the tests could not run ({reward.reason})"
        if verdict.status is Status.PASS:
            return "all tests pass"
        return verdict.feedback or f"{verdict.status.value}: {verdict.failure}"


def _ran(reward: Reward) -> dict[str, Any]:
    """What the environment itself saw of an attempt's tests, in the step meta
    `repair_progress` trusts (docs/diagnostics.md): the log alone is the program's to forge."""
    verdict = reward.verdicts.get("code_tests")
    if verdict is None or "total" not in verdict.evidence:
        return {"language": "python"}
    passed, total = int(verdict.evidence["passed"]), int(verdict.evidence["total"])
    return {
        "language": "python",
        "phase": "run",
        "tests": {"passed": passed, "total": total},
        "exit_code": 0 if verdict.status is Status.PASS else 1,
    }
