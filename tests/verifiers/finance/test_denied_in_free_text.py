"""A figure denied in free text (2026-12-05). A marked answer already dropped a figure
denied after it ("<answer>X, not Y</answer>" is X), but free text was read for its last
figure: "It was $179 thousand, not $159 thousand." paid a gold of 159 thousand, and the
right "$159 thousand, not 179 thousand" scored 0. `audit --bundled --search --seed 32`
found the second (`denied_other` then `other_period_beside`); the first is its twin.
A relation for the twin (`gold_denied_in_prose`) was written and taken out: adding it
moved the environment search's draws onto a known-good chain that then failed
(`space_separator` then `scale_form` on `initech-note-13`), not yet looked into."""

from __future__ import annotations

import pytest

from rewardsmith.verifiers import Sample, create

CHECK = create("numeric_answer")
GOLD = {"answer": "159", "scale": "thousand", "currency": "USD"}
QUESTION = "What was 2023 other income (expense), in thousands?"

RIGHT = [
    "$159 thousand, not 179 thousand",
    "In 2023 it was $159 thousand, not 179 thousand.",
    "In 2023 it was $159 thousand, not 179 thousand; 2022: 179 thousand.",
    "2023: $159 thousand, not 179 thousand (2022: 179 thousand).",
    "Not 179 thousand but 159 thousand.",
]
WRONG = [
    "It was $179 thousand, not $159 thousand.",
    "It was $179 thousand (not 159 thousand).",
    "In 2023 it was $179 thousand, not 159 thousand; 2022: 159 thousand.",
]


def _sample(completion: str) -> Sample:
    return Sample(id="d", prompt=QUESTION, completion=completion, reference=GOLD)


@pytest.mark.parametrize("completion", RIGHT)
def test_a_figure_denied_after_the_answer_leaves_the_answer(completion: str) -> None:
    verdict = CHECK(_sample(completion))
    assert verdict.score == 1.0, verdict.feedback


@pytest.mark.parametrize("completion", WRONG)
def test_the_right_figure_denied_earns_nothing(completion: str) -> None:
    verdict = CHECK(_sample(completion))
    assert verdict.score == 0.0, verdict.feedback
