"""code_tests: formats, verdict fields, bad references, registry and pickling."""

from __future__ import annotations

import pickle

import pytest
from code_cases import ADD_CALLS, FORMATS, judge

from rewardsmith.verifiers import create, run_verifier
from rewardsmith.verifiers.code import CodeTests
from rewardsmith.verifiers.code.extract import extract_code
from rewardsmith.verifiers.types import Failure, Sample, Status

pytestmark = pytest.mark.sandbox

GOOD = "def add(a, b):\n    return a + b\n"
WRONG = "def add(a, b):\n    return a - b\n"  # right on (0, 0) only: true partial credit
CRASH = "def add(a, b):\n    return undefined_name\n"


@pytest.mark.parametrize("fmt", sorted(FORMATS))
@pytest.mark.parametrize(
    ("code", "status", "score", "failure"),
    [
        (GOOD, Status.PASS, 1.0, None),
        (WRONG, Status.PARTIAL, 0.25, Failure.WRONG_ANSWER),
        (CRASH, Status.ERROR, 0.0, Failure.RUNTIME_ERROR),
        ("def add(a, b)\n    return a + b\n", Status.ERROR, 0.0, Failure.COMPILE_ERROR),
        ("def plus(a, b):\n    return a + b\n", None, 0.0, None),
    ],
    ids=["good", "wrong", "crash", "syntax", "missing-function"],
)
def test_formats_agree_on_real_cases(fast, fmt, code, status, score, failure) -> None:
    verdict = judge(fast, code, FORMATS[fmt])
    assert verdict.score == score, verdict
    if status is not None:
        assert verdict.status is status and verdict.failure is failure, verdict


def test_verdict_carries_per_test_records_and_feedback(fast) -> None:
    verdict = judge(fast, WRONG, ADD_CALLS)
    tests = verdict.evidence["tests"]
    assert [t["status"] for t in tests] == ["fail", "fail", "fail", "pass"]
    assert tests[0] == {
        "name": "case 0",
        "status": "fail",
        "output": "-1",
        "input": "[1, 2]",
        "expected": "3",
    }
    assert verdict.evidence["passed"] == 1 and verdict.evidence["total"] == 4
    assert verdict.feedback.startswith("1/4 tests passed; first failure: case 0")


def test_structured_cases_check_types_exactly(fast) -> None:
    ref = {
        "format": "calls",
        "fn": "f",
        "cases": [{"input": "(1,)", "output": "(1, 2)"}, {"input": "(2,)", "output": "True"}],
    }
    code = "def f(x):\n    return [1, 2] if x == 1 else 1\n"  # list for tuple, 1 for True
    verdict = judge(fast, code, ref)
    assert verdict.score == 0.0 and verdict.failure is Failure.WRONG_ANSWER


def test_syntax_error_keeps_compiler_output_for_diagnostics(fast) -> None:
    verdict = judge(fast, "def add(a, b)\n    return a + b\n", FORMATS["asserts"])
    compile_info = verdict.evidence["compile"]
    assert compile_info["tool"] == "python" and "SyntaxError" in compile_info["stderr"]
    assert "exit_code" in compile_info and "stdout" in compile_info


def test_completion_in_markdown_is_extracted(fast) -> None:
    text = "Here you go:\n```python\n" + GOOD + "```\nHope it helps."
    assert judge(fast, text, ADD_CALLS).status is Status.PASS
    assert extract_code("```js\nx\n```\n```python\ny\n```", "python") == "y\n"


@pytest.mark.parametrize(
    ("reference", "message"),
    [
        (None, "dict"),
        ({"format": "nope"}, "not one of"),
        ({"format": "humaneval", "test": "assert True", "entry_point": "f"}, "check"),
        ({"format": "asserts", "asserts": []}, "non-empty"),
        ({"format": "asserts", "asserts": ["assert f(1 =="]}, "parse"),
        ({"format": "calls", "fn": "f", "cases": [{"input": "(1,)"}]}, "never passes"),
        (
            {"format": "calls", "fn": "f", "cases": [{"input": "__import__('os')", "output": "1"}]},
            "literal",
        ),
        ({"format": "stdio", "cases": [{"input": "1"}]}, "never passes"),
        (
            {"format": "stdio", "cases": [{"input": "", "output": ""}], "checker": "magic"},
            "checker",
        ),
        (
            {"format": "stdio", "language": "cobol", "cases": [{"input": "", "output": ""}]},
            "unknown language",
        ),
    ],
)
def test_bad_references_are_the_datas_fault(fast, reference, message) -> None:
    verdict = fast(Sample(id="x", completion=GOOD, reference=reference))
    assert verdict.failure is Failure.BAD_REFERENCE and verdict.score is None
    assert message in verdict.feedback


def test_huge_program_is_refused_before_running(fast) -> None:
    verdict = judge(fast, GOOD + "#" * 300_000, ADD_CALLS)
    assert verdict.failure is Failure.INPUT_TOO_LARGE and verdict.score == 0.0


def test_pickle_round_trip_and_registry() -> None:
    verifier = CodeTests(wall_s=3.0, language="cpp")
    assert pickle.loads(pickle.dumps(verifier)) == verifier
    made = create("code_tests", wall_s=3.0)
    assert isinstance(made, CodeTests)
    verdict = run_verifier(made, Sample(id="1", completion=GOOD, reference=ADD_CALLS))
    assert verdict.status is Status.PASS and verdict.elapsed_s > 0


@pytest.mark.parametrize("kwargs", [{"language": "cobol"}, {"wall_s": 0}, {"memory_mb": 1}])
def test_bad_config_is_refused(kwargs) -> None:
    with pytest.raises((KeyError, ValueError)):
        CodeTests(**kwargs)


def test_verdict_is_json_serialisable(fast) -> None:
    import json

    for code in (GOOD, WRONG, CRASH):
        json.dumps(judge(fast, code, FORMATS["humaneval"]).to_dict())
