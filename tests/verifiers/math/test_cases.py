"""The (expected, gold, prediction) table in cases.yaml, run through the whole verifier."""

from __future__ import annotations

from collections import Counter

import pytest

from rewardsmith.verifiers import Sample, Status
from rewardsmith.verifiers.math import MathAnswer
from tests.verifiers.math.case_table import Case, load_cases

CASES = load_cases()
CHECK = MathAnswer()


def test_table_is_large_and_covers_every_rule() -> None:
    assert len(CASES) >= 300
    by_rule = Counter((c.rule, c.expected) for c in CASES)
    rules = {c.rule for c in CASES}
    assert len(rules) >= 20
    for rule in rules:  # each rule has cases that must pass and cases that must not
        if rule != "hedging":
            assert by_rule[(rule, True)] and by_rule[(rule, False)], rule


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_case(case: Case) -> None:
    verdict = CHECK(Sample(id="case", completion=case.pred, reference=case.gold))
    detail = f"{verdict.status} {verdict.failure} {verdict.feedback} {dict(verdict.evidence)}"
    if case.expected:
        assert verdict.status is Status.PASS, detail
    else:  # checked and wrong: never a pass, and never a timeout or error standing in for 0
        assert verdict.status is Status.FAIL and verdict.score == 0.0, detail
