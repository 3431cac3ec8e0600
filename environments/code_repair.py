"""Code repair: the model is shown a broken program and its failing tests, and fixes it.

Two kinds of task, one protocol:

- **Python functions** (``task: code``): each program is tested in the sandbox by the
  `code_tests` verifier (through the environment's `Scorer`) on ``visible`` tests (their
  feedback, expected values included, is the observation: the failing tests, the
  traceback) and ``reference`` tests (the hidden ones; the environment forces their
  ``hide_expected``, and the observation says only how many of them pass).
- **Compiled and other languages** (C, C++, Rust, Go, Java, JavaScript; ``task:
  code_harness``): the ``reference`` is a repair task with a trusted harness and hidden
  stdin/stdout cases, ``visible`` holds the shown cases; each program is built with the
  real compiler and tested by `diagnostics.attempts.run_attempt`
  (`environments.repair_harness`): the observation is the compiler output, or the
  visible cases' outcomes with the program's standard error, and the hidden tests' count.

A program that replays the expected values it was shown (a lookup table of the visible
inputs) earns nothing from the hidden tests. The task's given program is the first
attempt, so the model starts from its real test log. The episode ends when every hidden
test passes or at the turn limit, with the last program graded. No step before the last
earns a reward (a per-step test score would pay the given program sent back each turn).

The final reward is the hidden tests of the last program x `repair_progress` (the
normalised gain of the attempts from the given program to the last, read from the meta
the environment recorded, never from the log): the given program sent back unchanged (or
any program no better than it) gains nothing and so earns nothing, and deleting or
stubbing the code, which can turn a crash into a clean run of failing tests, passes no
test and earns nothing either. The hostile classes are in `environments.repair_policies`.

    >>> env = CodeRepair()
    >>> calls = lambda *cases: {"format": "calls", "fn": "double",
    ...                         "cases": [{"input": i, "output": o} for i, o in cases]}
    >>> task = {"id": "c", "prompt": "Fix `double`.", "broken": "def double(x): return x + 2",
    ...         "visible": calls(("(3,)", "6")), "reference": calls(("(5,)", "10"))}
    >>> state, prompt = env.reset(task)
    >>> env.step(state, "def double(x): return 2 * x").reward.value
    1.0
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from rewardsmith.environments.base import EnvironmentFailure, ToolEnvironment
from rewardsmith.environments.episode_exploits import EpisodeExploit
from rewardsmith.environments.protocol import EpisodeLimits, EpisodeState, Transition
from rewardsmith.environments.repair_harness import HARNESS_TASK, is_harness_task, test_program
from rewardsmith.graders import Reward
from rewardsmith.verifiers.types import Status

__all__ = ["CODE_REPAIR_TASKS", "REPAIR_REWARD", "TESTS_REWARD", "CodeRepair"]

CODE_REPAIR_TASKS = (
    Path(__file__).resolve().parents[1] / "datasets" / "environments" / "code_repair.jsonl"
)
TESTS_REWARD: dict[str, Any] = {"code_tests": {"weight": 1.0}}
REPAIR_REWARD: dict[str, Any] = {
    "grader": {
        "product": {
            "tests": {"verify": "code_tests", "tasks": ["code"]},
            "harness_tests": {"verify": "repair_tests", "tasks": [HARNESS_TASK]},
            "gain": "repair_progress",
        }
    }
}
"""The hidden tests (`code_tests` for a Python task, `repair_tests` for a harness task:
each leaf runs on its own task's samples) x the repair gain."""
_FENCE = "```"
_FENCES = {"c": "c", "cpp": "cpp", "rust": "rust", "go": "go", "java": "java",
           "javascript": "javascript", "python": "python"}  # fmt: skip


class CodeRepair(ToolEnvironment):
    """Repair a Python function against its tests; see the module doc."""

    name: ClassVar[str] = "code_repair"
    step_cost_hint: ClassVar[float] = 100.0  # every attempt runs its tests in the sandbox

    def __init__(
        self, limits: EpisodeLimits | None = None, scorer: Mapping[str, Any] | None = None
    ) -> None:
        super().__init__(REPAIR_REWARD, limits or EpisodeLimits(max_turns=4), scorer)

    def reset(self, task: Mapping[str, Any]) -> tuple[EpisodeState, str]:
        state, _ = super().reset(_hidden(task))
        given = str(task["broken"])
        try:
            _, log, meta = self._test(state, given)
        except EnvironmentFailure as exc:  # no tests can run: the episode never starts
            return state.ended(f"environment_error: {exc}"[:500]), self.prompt(task)
        state = state.with_attempt(given, log, kind="given", **meta)
        prompt = self.prompt(task) + f"\n\nTest results:\n{log}"
        return state, prompt

    def _test(self, state: EpisodeState, program: str) -> tuple[bool, str, dict[str, Any]]:
        """Whether `program` passes every hidden test, the log the model sees (the visible
        tests' feedback and the hidden tests' count), and the step's trusted meta."""
        if is_harness_task(state.task):
            return test_program(state.task, program)
        hidden, log = self._test_python(state, program)
        verdict = hidden.verdicts.get("code_tests")
        return verdict is not None and verdict.status is Status.PASS, log, _ran(hidden)

    def _test_python(self, state: EpisodeState, program: str) -> tuple[Reward, str]:
        probe = state.with_attempt(program, None, kind="probe")  # scored as a program
        hidden = self.score(TESTS_REWARD, probe)
        visible = state.task.get("visible")
        shown = hidden
        if isinstance(visible, Mapping):
            shown = self.score(TESTS_REWARD, _with_reference(probe, dict(visible)))
        verdict = hidden.verdicts.get("code_tests")
        for reward in (hidden, shown):
            _raise_if_infrastructure(reward)
        log = self._log(shown)
        if shown is not hidden and log == "all tests pass":
            log = "all visible tests pass"
        if verdict is not None and "total" in verdict.evidence:
            log += f"\nhidden tests: {verdict.evidence['passed']}/{verdict.evidence['total']} pass"
        else:
            log += "\nhidden tests: did not run"
        return hidden, log

    def prompt(self, task: Mapping[str, Any]) -> str:
        fence = _FENCE + _FENCES.get(str(task.get("language", "python")), "")
        given = f"{task['prompt']}\n\n{fence}\n{task['broken']}\n{_FENCE}\n\n"
        if is_harness_task(task):  # the trusted harness is public: how the tests call it
            for name, source in task["reference"]["harness"].items():
                given += f"The test harness ({name}) calls it:\n{fence}\n{source}{_FENCE}\n\n"
        return given + f"Reply with the whole corrected program in one {fence} block."

    def answer(self, state: EpisodeState, action: str) -> Transition:
        passed, log, meta = self._test(state, action)
        state = state.with_attempt(action, log, kind="program", **meta)
        if passed:
            return self.finish(state, "answered")
        return Transition(state, log, None, False)

    def exploits(self, tasks: Sequence[Mapping[str, Any]]) -> Iterator[EpisodeExploit]:
        """The hostile scripted policies of `environments.repair_policies`."""
        from rewardsmith.environments.repair_policies import exploits

        return exploits(tasks)

    @staticmethod
    def _log(reward: Reward) -> str:
        verdict = reward.verdicts.get("code_tests")
        if verdict is None:
            return f"error: the tests could not run ({reward.reason})"
        if verdict.status is Status.PASS:
            return "all tests pass"
        return verdict.feedback or f"{verdict.status.value}: {verdict.failure}"


def _raise_if_infrastructure(reward: Reward) -> None:
    """The tests could not run through no fault of the program (the sandbox did not
    start): the environment's failure, never a test log for the model."""
    verdict = reward.verdicts.get("code_tests")
    if verdict is None or verdict.is_infra_failure:
        why = reward.reason if verdict is None else verdict.feedback or str(verdict.failure)
        raise EnvironmentFailure(f"the tests could not run: {why}")


def _hidden(task: Mapping[str, Any]) -> dict[str, Any]:
    """The task with its reward tests' expected values hidden from all feedback, and the
    task name its final reward's tests run on (whatever the task file says)."""
    if is_harness_task(task):  # run_attempt never shows a case: nothing to hide
        return {**task, "task": HARNESS_TASK}
    reference = task.get("reference")
    if isinstance(reference, Mapping):
        return {**task, "task": "code", "reference": {**reference, "hide_expected": True}}
    return {**task, "task": "code"}


def _with_reference(state: EpisodeState, reference: dict[str, Any]) -> EpisodeState:
    return dataclasses.replace(state, task={**state.task, "reference": reference})


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
