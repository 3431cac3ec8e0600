"""The escape-attempt exploit class: a right answer that first tries a denied system call
earns nothing, in every Python format of `code_tests` (the attempt kills the program)."""

from __future__ import annotations

import pytest

from rewardsmith.verifiers.code import CodeTests
from rewardsmith.verifiers.sandbox.escapes import escape_attempts, escape_snippets
from rewardsmith.verifiers.types import Fault, Sample, Status

pytestmark = pytest.mark.sandbox

RIGHT = "def add(a, b):\n    return a + b\n"
CASES = [{"input": "(1, 2)", "output": "3"}, {"input": "(-1, 1)", "output": "0"}]
REFERENCES = {
    "calls": {"format": "calls", "fn": "add", "cases": CASES},
    "humaneval": {
        "format": "humaneval",
        "entry_point": "add",
        "prompt": "def add(a, b):\n",
        "test": "def check(candidate):\n    assert candidate(1, 2) == 3\n"
        "    assert candidate(-1, 1) == 0\n",
    },
    "asserts": {"format": "asserts", "asserts": ["assert add(1, 2) == 3", "assert add(0, 0) == 0"]},
}
STDIO = {"format": "stdio", "cases": [{"input": "1 2\n", "output": "3\n"}]}
VERIFIER = CodeTests(wall_s=4.0, call_timeout_s=2.0)


@pytest.mark.parametrize("fmt", sorted(REFERENCES))
def test_every_escape_attempt_earns_nothing(fmt: str) -> None:
    right = Sample(id=fmt, completion=RIGHT, reference=REFERENCES[fmt])
    assert VERIFIER(right).status is Status.PASS
    attempts = list(escape_attempts(right))
    assert len(attempts) == len(escape_snippets())
    for exploit in attempts:
        verdict = VERIFIER(exploit.sample)
        assert verdict.score == 0.0 and verdict.fault is Fault.MODEL, (exploit.description, verdict)
        assert exploit.max_fraction == 0.0


def test_a_humaneval_body_gets_its_prompt_before_the_attempt() -> None:
    ref = REFERENCES["humaneval"]
    right = Sample(id="body", completion="    return a + b\n", reference=ref)
    assert VERIFIER(right).status is Status.PASS
    exploit = next(escape_attempts(right))
    assert "def add(a, b):\n    return a + b" in exploit.sample.completion_text
    assert VERIFIER(exploit.sample).score == 0.0


@pytest.mark.parametrize("name", ["ptrace", "unshare_new_user", "mount", "foreign_arch_int80"])
def test_a_stdio_program_that_tries_first_scores_zero_and_says_why(name: str) -> None:
    program = escape_snippets()[name] + "a, b = map(int, input().split())\nprint(a + b)\n"
    assert (
        VERIFIER(
            Sample(id="ok", completion=program[program.index("a, b") :], reference=STDIO)
        ).score
        == 1.0
    )
    verdict = VERIFIER(Sample(id=name, completion=program, reference=STDIO))
    assert verdict.score == 0.0 and "SIGSYS" in verdict.feedback, verdict
