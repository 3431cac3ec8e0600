"""The `repair_tests` verifier: a repair task's program built and tested with its harness.

The sample's reference is a repair task (`attempts.RepairTask`: ``language``, the trusted
``harness``, stdin/stdout ``cases``); the program is the last fenced block of the
language in the completion (a trajectory's last action), else the whole text.
`attempts.run_attempt` builds it next to the harness with the real compiler and runs every
case in the sandbox; the score is the fraction of cases passed (a build that fails passes
none). Its feedback is only that count and how the build went: no input, expected value,
output or standard error of a case reaches it, so the tests can stay hidden (an
environment's reward tests, `environments.code_repair`).

    >>> from rewardsmith.verifiers.types import Sample
    >>> ref = {"language": "javascript",
    ...        "harness": {"main.js": "const {f} = require('./solution.js');\\n"
    ...                    "console.log(f(Number(require('fs').readFileSync(0, 'utf8'))));\\n"},
    ...        "cases": [{"input": "2\\n", "output": "4\\n"}, {"input": "5\\n", "output": "10\\n"}]}
    >>> program = "```js\\nmodule.exports = { f: (x) => x * 2 };\\n```"
    >>> verdict = RepairTests()(Sample(id="1", completion=program, reference=ref))
    >>> verdict.score, verdict.feedback
    (1.0, 'tests: 2/2 pass')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rewardsmith.verifiers.code.extract import extract_code
from rewardsmith.verifiers.diagnostics.attempts import RepairTask, TaskError, run_attempt
from rewardsmith.verifiers.protocol import Cost
from rewardsmith.verifiers.types import Failure, Sample, Verdict

__all__ = ["RepairTests", "program_of"]


def program_of(text: str, language: str) -> str:
    """The program a repair answer holds: what `RepairTests` builds and what an
    environment runs, one rule for both."""
    return extract_code(text, language)


@dataclass(frozen=True)
class RepairTests:
    """Build the completion's program with the reference's harness and run its cases."""

    name: ClassVar[str] = "repair_tests"
    version: ClassVar[str] = "1"
    cost: ClassVar[Cost] = Cost.SANDBOX
    takes_structured_reference: ClassVar[bool] = True  # JSON-text references are decoded

    def __call__(self, sample: Sample) -> Verdict:
        try:
            task = RepairTask.parse(sample.reference)
        except TaskError as exc:
            return Verdict.errored(self.name, self.version, Failure.BAD_REFERENCE, str(exc))
        try:
            step = run_attempt(task, program_of(sample.completion_text, task.language))
        except RuntimeError as exc:  # the sandbox itself failed: never the model's 0
            return Verdict.errored(self.name, self.version, Failure.SANDBOX_ERROR, str(exc))
        tests = step.meta.get("tests")
        if tests is None:
            return Verdict.failed(
                self.name,
                self.version,
                Failure.COMPILE_ERROR,
                evidence={"exit_code": step.meta["exit_code"]},
                feedback=f"the build failed (exit {step.meta['exit_code']})",
            )
        passed, total = int(tests["passed"]), int(tests["total"])
        evidence = {"passed": passed, "total": total, "exit_code": step.meta["exit_code"]}
        feedback = f"tests: {passed}/{total} pass"
        return Verdict.graded(
            self.name, self.version, passed / total, evidence=evidence, feedback=feedback
        )
