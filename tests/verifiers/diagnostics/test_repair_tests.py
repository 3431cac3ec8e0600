"""`repair_tests`: a repair task's program built with its harness and run on its cases;
its feedback never shows a case (the code_repair environment's hidden tests)."""

from __future__ import annotations

import doctest

import pytest

from rewardsmith.verifiers import create
from rewardsmith.verifiers.diagnostics import attempts, repair_tests
from rewardsmith.verifiers.sandbox import Limits
from rewardsmith.verifiers.types import Failure, Sample, Status
from tests.verifiers.diagnostics.repair_tasks import CASES, TASKS, reference

pytestmark = pytest.mark.sandbox


def _verdict(completion: str, ref: object) -> object:
    return create("repair_tests")(Sample(id="r", completion=completion, reference=ref))


def test_the_docstring_example_runs() -> None:
    failed, attempted = doctest.testmod(repair_tests)
    assert attempted > 0 and failed == 0


@pytest.mark.parametrize("language", ["c", "javascript", "python"])
def test_the_fix_passes_the_broken_program_does_not(language: str) -> None:
    fixed = _verdict(f"```\n{TASKS[language]['fixed']}```", reference(language))
    assert fixed.status is Status.PASS and fixed.score == 1.0  # type: ignore[attr-defined]
    broken = _verdict(TASKS[language]["broken"], reference(language))
    assert broken.score == 0.0  # type: ignore[attr-defined]


def test_a_build_failure_is_a_compile_error_and_the_feedback_shows_no_case() -> None:
    broken = _verdict(TASKS["c"]["broken"], reference("c"))
    assert broken.failure is Failure.COMPILE_ERROR  # type: ignore[attr-defined]
    stub = "int sum_to(int n) { return n == 3 ? 6 : 0; }\n"
    partial = _verdict(stub, reference("c"))
    assert partial.score == 0.0  # the harness asserts sum_to(2) == 3 first
    assert broken.feedback == "the build failed (exit 1)"  # type: ignore[attr-defined]
    assert partial.feedback == f"tests: 0/{len(CASES)} pass"  # type: ignore[attr-defined]


def test_a_reference_that_is_not_a_repair_task_is_a_data_error() -> None:
    verdict = _verdict("int x;", {"format": "calls", "fn": "f", "cases": []})
    assert verdict.failure is Failure.BAD_REFERENCE and verdict.score is None  # type: ignore[attr-defined]


def test_attempts_from_many_threads_get_their_own_results() -> None:
    """Environment episodes step in threads: the per-process caches of builds and
    attempts are shared by them (more sources than the build cache holds)."""
    from concurrent.futures import ThreadPoolExecutor

    from rewardsmith.verifiers.diagnostics.attempts import RepairTask, run_attempt

    task = RepairTask.parse(reference("javascript"))
    right, wrong = TASKS["javascript"]["fixed"], TASKS["javascript"]["broken"]
    sources = [(right if i % 2 else wrong) + f"\n// {i}\n" for i in range(24)]
    with ThreadPoolExecutor(8) as pool:
        steps = list(pool.map(lambda source: run_attempt(task, source), sources))
    for i, step in enumerate(steps):
        assert step.action == sources[i]
        assert step.meta["tests"]["passed"] == (len(CASES) if i % 2 else 0), i


HANGS = {"main.py": "import sys\nfrom solution import f\nprint(f(int(sys.stdin.read())))\n"}


def _task() -> attempts.RepairTask:
    cases = tuple({"input": f"{n}\n", "output": f"{2 * n}\n"} for n in range(6))
    return attempts.RepairTask("python", HANGS, cases, run_limits=Limits(wall_s=1.5, cpu_s=5.0))


def test_a_hanging_program_costs_one_case_limit_not_every_cases() -> None:
    # Issue 24: a hanging repair attempt ran every case to its limit in turn (25-30 s a
    # turn); now the cases after the first that runs out of wall time are not run.
    step = attempts.run_attempt(_task(), "def f(n):\n    while True:\n        pass\n")
    outcomes = step.meta["cases"]
    assert step.meta["tests"] == {"passed": 0, "total": 6}
    assert outcomes[0] == "stopped: wall_time limit", outcomes
    assert outcomes[1:] == ["not run: an earlier case ran out of time"] * 5


def test_a_program_stopped_by_the_cpu_limit_also_costs_one_case() -> None:
    # Found while shortening the suite: a loop that spins meets the CPU limit before the
    # wall limit, and then every case ran to its limit in turn (30 s a C fork bomb).
    limits = Limits(wall_s=20.0, cpu_s=1.0)
    task = attempts.RepairTask("python", HANGS, _task().cases, run_limits=limits)
    step = attempts.run_attempt(task, "def f(n):\n    while True:\n        pass\n")
    outcomes = step.meta["cases"]
    assert outcomes[0] == "stopped: cpu_time limit", outcomes
    assert outcomes[1:] == ["not run: an earlier case ran out of time"] * 5


def test_a_program_that_hangs_on_a_later_case_keeps_the_cases_before() -> None:
    program = "def f(n):\n    while n == 4:\n        pass\n    return 2 * n\n"
    outcomes = attempts.run_attempt(_task(), program).meta["cases"]
    assert outcomes[:4] == ["pass"] * 4 and outcomes[4].startswith("stopped"), outcomes
    assert outcomes[5].startswith("not run")
