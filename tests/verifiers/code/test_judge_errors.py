"""The judge's error paths say why: a judge that fails keeps its traceback in the
verdict, and one that dies before writing a report names its last words in the feedback
(a linked venv once made pytest's import fail here, and the traceback formatting itself
raised and hid the cause)."""

from __future__ import annotations

import pytest
from code_cases import ADD_PYTEST, FAST, judge

from rewardsmith.verifiers.code import function_tests
from rewardsmith.verifiers.types import Failure

pytestmark = pytest.mark.sandbox

RIGHT = "def add(a, b):\n    return a + b\n"


def test_an_exception_inside_the_judge_is_kept_with_its_traceback(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    header = "def run_pytest(spec: dict[str, Any], link: Link, ns: dict[str, Any])"
    header += " -> list[dict[str, Any]]:\n"
    fail = "    raise ImportError('no module named _pytest._argcomplete (a test of the path)')\n"
    broken = function_tests._JUDGE.replace(header, header + fail)
    assert broken != function_tests._JUDGE
    monkeypatch.setattr(function_tests, "_JUDGE", broken)
    verdict = judge(FAST, RIGHT, ADD_PYTEST)
    assert verdict.score == 0.0 or verdict.score is None
    trace = verdict.evidence.get("judge_error", "")
    assert "Traceback" in trace and "_argcomplete (a test of the path)" in trace, verdict


def test_a_judge_that_dies_without_a_report_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        function_tests, "_JUDGE", "raise RuntimeError('the judge broke: a test of the path')\n"
    )
    verdict = judge(FAST, RIGHT, ADD_PYTEST)
    assert verdict.failure is Failure.VERIFIER_CRASH and verdict.score is None
    assert "the judge broke: a test of the path" in verdict.feedback, verdict
