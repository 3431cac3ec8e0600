"""Issue 26: the completion as rendered, and the final answer as a careful grader reads
it. The table is cases_read.yaml (many instances per class, both directions)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from rewardsmith.verifiers import Sample, Status
from rewardsmith.verifiers.math import MathAnswer
from tests.verifiers.math.case_table import Case, load_cases

CASES = load_cases(Path(__file__).with_name("cases_read.yaml"))
CHECK = MathAnswer()


def test_every_class_has_many_cases_both_ways() -> None:
    count = Counter((c.rule, c.expected) for c in CASES)
    for rule in {c.rule for c in CASES}:
        assert count[(rule, True)] >= 2 and count[(rule, False)] >= 3, rule


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_case(case: Case) -> None:
    verdict = CHECK(Sample(id="case", completion=case.pred, reference=case.gold))
    detail = f"{verdict.status} {verdict.failure} {verdict.feedback} {dict(verdict.evidence)}"
    if case.expected:
        assert verdict.status is Status.PASS, detail
    else:  # checked and wrong: never a pass, and never a score-None verdict standing in for 0
        assert verdict.status is Status.FAIL and verdict.score == 0.0, detail


def test_worker_warm_up_exercises_each_shape() -> None:
    # The budget measures work, not start-up (issue 26): the worker's warm-up must really
    # run each comparison path (a warm-up pair that stopped parsing would warm nothing).
    from rewardsmith.verifiers.math.forms import judge
    from rewardsmith.verifiers.math.worker import _WARM_UP

    for gold, answer in _WARM_UP:
        assert judge(gold, answer, 0.0, 3, 30.0)["outcome"] == "equal", (gold, answer)


HOSTILE = {  # 200,000 characters each: the rendering must stay linear (no timing asserted)
    "phantoms": r"\phantom{1}" * 18_000,
    "nested phantoms": r"\phantom{" * 22_000,
    "colours": r"{\color{white}1}" * 12_000,
    "text colours": r"\textcolor{red}{1}" * 11_000,
    "percent signs": "%" * 200_000,
    "open tags": "<span " * 33_000,
    "macro uses": r"\newcommand{\a}{1}" + r"\a" * 66_000,
    "definitions": r"\def\a{1}" * 22_000,
    "open arguments": r"\newcommand{\f}[1]{#1}" + r"\f{" * 66_000,
    "quoted boxes": r"Is it \boxed{1}? " * 11_000,
    "echoed instructions": r"Put it within \boxed{}. " * 8_000,
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_text_is_decided(name: str) -> None:
    verdict = CHECK(Sample(id="h", completion=HOSTILE[name], reference="12"))
    assert verdict.status is Status.FAIL and verdict.score == 0.0, (name, verdict.feedback)


@pytest.mark.parametrize(
    ("completion", "gold", "score"),
    [
        ("twelve", "12", 1.0),
        ("Twelve.", "12", 1.0),
        ("Twenty-one!", "21", 1.0),
        ("one hundred and five", "105", 1.0),
        ("thirteen", "12", 0.0),
        ("I tried twelve times", "12", 0.0),
    ],
)
def test_a_completion_that_is_only_a_number_in_words_is_that_number(
    completion: str, gold: str, score: float
) -> None:
    """Found by `audit --search` (math/number_words) on the arithmetic set: "twelve" for 12
    earned 0 where "The answer is twelve." earned 1."""
    verdict = MathAnswer()(Sample(id="w", completion=completion, reference=gold))
    assert verdict.score == score, verdict.feedback


@pytest.mark.parametrize(
    ("completion", "gold"),
    [
        ("11\n\nOn second thought, it is 12. or 11", "11"),
        ("11\n\nOn second thought, it is 12. Or 11.", "12"),
        ("The answer is 12. Or maybe 13.", "12"),
        ("So it is 7; or 8", "7"),
    ],
)
def test_another_value_offered_in_the_next_sentence_is_a_hedge(completion: str, gold: str) -> None:
    """Found by `audit --search` at budget 200 (math/retraction then math/hedge_gold): a
    hedge after a full stop ("12. or 11") was read as its last value."""
    assert MathAnswer()(Sample(id="h", completion=completion, reference=gold)).score == 0.0
