"""Issue 30: `hide_expected` in every format: feedback and evidence never show an expected
value (the code-repair environment sends feedback back to the model), yet still say which
call failed and how. Without it, feedback shows the expected value (both directions)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from code_cases import FAST

from rewardsmith.verifiers.types import Sample, Verdict

pytestmark = pytest.mark.sandbox

SECRET = "98765"
REFS: dict[str, dict[str, Any]] = {
    "calls": {"format": "calls", "fn": "f", "cases": [{"input": "(1,)", "output": SECRET}]},
    "asserts": {"format": "asserts", "asserts": [f"assert f(1) == {SECRET}"]},
    "asserts with message": {
        "format": "asserts",
        "entry_point": "f",
        "asserts": [f"assert f(1) == {SECRET}, 'wanted {SECRET}'"],
    },
    "humaneval": {
        "format": "humaneval",
        "entry_point": "f",
        "test": f"def check(candidate):\n    assert candidate(1) == {SECRET}\n",
    },
    "pytest": {
        "format": "pytest",
        "expected_tests": 2,
        "files": {
            "test_f.py": (
                "from solution import f\n"
                f"def test_a():\n    assert f(1) == {SECRET}\n"
                f"def test_b():\n    want = {SECRET}\n    assert f(1) == want, f'wanted {{want}}'\n"
            )
        },
    },
    "stdio": {"format": "stdio", "cases": [{"input": "1\n", "output": f"{SECRET}\n"}]},
}
WRONG = {"stdio": "print(1)\n"}
RAISES = {"stdio": "raise ValueError('bad')\n"}


def _run(fmt: str, program: str, hide: bool) -> Verdict:
    ref = {**REFS[fmt], "hide_expected": hide}
    return FAST(Sample(id=fmt, completion=program, reference=ref))


@pytest.mark.parametrize("fmt", sorted(REFS))
def test_hidden_feedback_never_shows_the_expected_value(fmt: str) -> None:
    wrong = _run(fmt, WRONG.get(fmt, "def f(x):\n    return 1\n"), True)
    assert wrong.score == 0.0
    assert SECRET not in wrong.feedback, wrong.feedback
    assert SECRET not in json.dumps(wrong.evidence, default=str), wrong.evidence["tests"]
    assert "wrong answer" in wrong.feedback or fmt == "stdio"
    if fmt.startswith("asserts") or fmt == "humaneval":
        assert "f(1)" in wrong.feedback or "candidate(1)" in wrong.feedback  # which call
    raised = _run(fmt, RAISES.get(fmt, "def f(x):\n    raise ValueError('bad')\n"), True)
    assert SECRET not in raised.feedback and raised.score == 0.0
    assert "ValueError" in raised.feedback or fmt == "stdio", raised.feedback
    right = _run(fmt, "print(98765)\n" if fmt == "stdio" else "def f(x):\n    return 98765\n", True)
    assert right.score == 1.0


@pytest.mark.parametrize("fmt", ["calls", "asserts", "humaneval", "stdio"])
def test_feedback_shows_the_expected_value_unless_hidden(fmt: str) -> None:
    wrong = _run(fmt, WRONG.get(fmt, "def f(x):\n    return 1\n"), False)
    assert SECRET in wrong.feedback, wrong.feedback
