"""One `code_repair` attempt in a compiled language (C, C++, Rust, Go, Java, JavaScript):
built with the task's trusted harness and tested by `diagnostics.attempts.run_attempt`.

A harness task's ``reference`` is an `attempts.RepairTask` (``language``, ``harness``, the
hidden ``cases``); its ``visible`` holds the cases whose feedback the model sees. The
program is built once (`run_attempt` shares the build) and run on both sets:

- the **visible** run gives the observation: the real compiler output and the standard
  error of the failed runs as the program printed it, then each visible case's outcome
  (which failed, how: wrong output, an exit code, a signal, a limit) with its input and
  expected output;
- the **hidden** run gives only its count (``hidden tests: k/n pass``) and the step's
  trusted meta (``tests``, ``exit_code``, ``phase``) that `repair_progress` reads: no
  input, expected value, output or standard error of a hidden case reaches the model.

A toolchain missing on this machine, or a sandbox that cannot start, is the
environment's failure (`EnvironmentFailure`), never a compile error of the model's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rewardsmith.environments.base import EnvironmentFailure
from rewardsmith.verifiers.code import language as code_language
from rewardsmith.verifiers.diagnostics.attempts import RepairTask, TaskError, run_attempt
from rewardsmith.verifiers.diagnostics.repair_tests import program_of
from rewardsmith.verifiers.types import Step

__all__ = ["HARNESS_TASK", "is_harness_task", "test_program"]

HARNESS_TASK = "code_harness"
"""The task name of a harness task's samples: the final reward's `repair_tests` leaf runs
on these only, `code_tests` on the Python ones (``task: code``)."""
_SHOWN_CHARS = 300


def is_harness_task(task: Mapping[str, Any]) -> bool:
    reference = task.get("reference")
    return isinstance(reference, Mapping) and "harness" in reference


def test_program(task: Mapping[str, Any], action: str) -> tuple[bool, str, dict[str, Any]]:
    """Whether every hidden case passes, the observation, and the step's meta."""
    reference = task["reference"]
    language = str(reference["language"])
    if not code_language(language).available:
        raise EnvironmentFailure(f"the {language} toolchain is not installed here")
    source = program_of(action, language)
    visible_cases = list(task["visible"]["cases"])
    try:
        hidden = run_attempt(RepairTask.parse(reference), source)
        shown = run_attempt(RepairTask.parse({**reference, "cases": visible_cases}), source)
    except TaskError as exc:
        raise EnvironmentFailure(f"the task is not usable: {exc}") from exc
    except RuntimeError as exc:  # the sandbox did not start or run: not the program's doing
        raise EnvironmentFailure(f"the tests could not run: {exc}") from exc
    tests = hidden.meta.get("tests")
    log = _visible_log(shown, visible_cases)
    if tests is None:
        log += "\nhidden tests: did not run (the build failed)"
    else:
        log += f"\nhidden tests: {tests['passed']}/{tests['total']} pass"
    meta = {
        k: hidden.meta[k] for k in ("tool", "language", "exit_code", "tests") if k in hidden.meta
    }
    if tests is not None:
        meta["phase"] = "run"
    passed = tests is not None and tests["passed"] == tests["total"] and meta["exit_code"] == 0
    return passed, log, meta


def _visible_log(step: Step, cases: list[Mapping[str, str]]) -> str:
    outcomes = step.meta.get("cases")
    if outcomes is None:
        code = step.meta.get("exit_code")
        return f"build failed (exit {code}):\n{step.observation or ''}".rstrip()
    if all(outcome == "pass" for outcome in outcomes):
        return "\n".join(
            [*([step.observation] if step.observation else []), "all visible tests pass"]
        )
    lines = [step.observation or ""] if step.observation else []
    for number, (case, outcome) in enumerate(zip(cases, outcomes, strict=True), start=1):
        if outcome == "pass":
            lines.append(f"visible test {number}: pass")
            continue
        lines.append(
            f"visible test {number}: {outcome}\n  input: {_short(case['input'])}\n"
            f"  expected: {_short(case['output'])}"
        )
    return "\n".join(lines)


def _short(text: str) -> str:
    shown = text if len(text) <= _SHOWN_CHARS else text[:_SHOWN_CHARS] + " ..."
    return repr(shown)
