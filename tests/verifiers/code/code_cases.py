"""Shared cases for the code verifier's tests: a small HumanEval-style task, three formats."""

from __future__ import annotations

import textwrap
from typing import Any

from rewardsmith.verifiers.code import CodeTests
from rewardsmith.verifiers.types import Sample, Verdict

ADD_TEST = textwrap.dedent(
    """
    def check(candidate):
        assert candidate(1, 2) == 3
        assert candidate(-1, 1) == 0
        assert candidate(10, 5) == 15
        assert candidate(0, 0) == 0
    """
)
ADD_REF: dict[str, Any] = {
    "format": "humaneval",
    "test": ADD_TEST,
    "entry_point": "add",
    "prompt": 'def add(a, b):\n    """Sum."""\n',
}
ADD_ASSERTS: dict[str, Any] = {
    "format": "asserts",
    "asserts": [
        "assert add(1, 2) == 3",
        "assert add(-1, 1) == 0",
        "assert add(10, 5) == 15",
        "assert add(0, 0) == 0",
    ],
}
ADD_CALLS: dict[str, Any] = {
    "format": "calls",
    "fn": "add",
    "cases": [
        {"input": "(1, 2)", "output": "3"},
        {"input": "(-1, 1)", "output": "0"},
        {"input": "(10, 5)", "output": "15"},
        {"input": "(0, 0)", "output": "0"},
    ],
}
ADD_PYTEST: dict[str, Any] = {
    "format": "pytest",
    "expected_tests": 4,
    "files": {
        "test_add.py": textwrap.dedent(
            """
        import pytest
        from solution import add

        @pytest.mark.parametrize(("a", "b", "total"), [(1, 2, 3), (-1, 1, 0), (10, 5, 15)])
        def test_add(a, b, total):
            assert add(a, b) == total

        def test_zero():
            assert add(0, 0) == 0
        """
        )
    },
}
FORMATS = {"humaneval": ADD_REF, "asserts": ADD_ASSERTS, "calls": ADD_CALLS, "pytest": ADD_PYTEST}

FAST = CodeTests(wall_s=4.0, call_timeout_s=2.0, memory_mb=256)
"""Short limits: hostile programs end quickly; honest ones have ample room."""


def judge(verifier: CodeTests, code: str, reference: dict[str, Any]) -> Verdict:
    return verifier(Sample(id="t", completion=textwrap.dedent(code), reference=reference))
