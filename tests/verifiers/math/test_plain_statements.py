"""Right answers in forms a model writes every day, each of which scored 0 before:

* a yes-or-no answer said as a sentence ("Yes.", "So, no.", "No. Since 3 is odd, ..."),
  where nothing was read (or the number of the reasons was);
* a value restated in parentheses or after an answer phrase ("1/4 (25%)", "The answer is
  1/4, or 25%."), read as the set {1/4, 25};
* a fraction word beyond tenths ("3 thousandths", "5 hundredths"), read as a product of
  letters;
* a union of two rays as inequalities without math delimiters ("x < 1 or x > 3");
* a retraction in words ("\\boxed{42}. On second thought, it is forty-four." answers 44),
  and one answer restated in another unit ("\\boxed{120 mm}" checked as "12 cm").

Found by `audit --search` at larger budgets than CI's, on the seed set
tests/cli/search_sets/math_forms (budget 150, seeds 0-2): a retraction in words earned
1.0 for the value it took back, and the question's fraction in another style
("\\frac{4}{14}" for "Simplify 4/14.") earned 1.0.

Each reading keeps what makes a hedge a hedge: a restatement of another value, the word of
both sides, an extra ray."""

from __future__ import annotations

import random

import pytest

from rewardsmith.verifiers import Sample, Status
from rewardsmith.verifiers.math import MathAnswer
from rewardsmith.verifiers.math.relations import relations

CHECK = MathAnswer()
UNION = r"(-\infty, 1) \cup (3, \infty)"

RIGHT = [
    (r"\text{yes}", "Yes."),
    (r"\text{yes}", "Therefore, yes."),
    (r"\text{yes}", "So yes, it is possible."),
    (r"\text{no}", "So, no."),
    (r"\text{Yes}", "**Yes**"),
    ("yes", "Yes"),
    (r"\text{no}", "No. Since 3 is odd, the pile cannot be split in two."),
    (r"\text{yes}", "We check the cases.\nIt works for every n.\nYes"),
    ("True", "True."),
    ("1/4", "The probability is 1/4 (25%)."),
    ("0.25", "So 1/4 (25%)."),
    ("1/4", "The probability is 1/4 (or 25%)."),
    ("1/4", "The probability is 1/4 (i.e. 25%)."),
    ("1/4", "The answer is 1/4, or 25%."),
    ("1/4", "Final answer: 1/4 (25%)"),
    ("0.003", "The answer is 0.003, or 3 thousandths."),
    ("3000", "The answer is 3000, or 3 thousand."),
    ("0.003", "The answer is 3 thousandths."),
    ("0.05", "The answer is 5 hundredths."),
    ("0.000007", "It is 7 millionths."),
    (UNION, "So x < 1 or x > 3."),
    (r"(-\infty, 1] \cup (3, \infty)", r"So x \le 1 or x > 3."),
    ("44", r"So the answer is \boxed{42}. On second thought, it is forty-four."),
    ("44", "So we get 42. On second thought, it is forty-four."),
    (r"12\text{ cm}", r"\boxed{120\text{ mm}}. Wait, let me verify: the result is 12\text{ cm}."),
    ("42", r"\boxed{42}. That is the only one."),
    (r"\{1, 2, 3\}", "So $x = 1$ and $x = 2$ and $x = 3$."),  # a list joined by "and"
    (r"\{1, 2, 3\}", "So x = 1 and x = 2 and x = 3."),
    ("3", "So $a = 2$ and $b = 3$."),  # two names: the last is what was asked
    ("12", "She has twelve apples."),  # a closing sentence that spells its value
    ("5", "There are five ways."),
    (r"\frac{1}{2}", "The probability is one half."),
    ("12", "4 x 3 = 12.\nShe has twelve apples."),  # restating the last number
    (r"\text{no}", "So the result is\n\n\\text{no}"),
    ("3", "So, $x = 3$. Let me double-check: $3 + 3 = 6$."),  # a check computes
    ("5", "So $x = 5$. Check: 5 - 2 = 3 ✓"),
    ("5", "Answer: 5 ✓"),
    ("5", "So $x = 5$ ✓"),
    (r"\text{no}", r"\boxed{\textstyle No.}"),
    (r"\text{no}", r"#### \text{no}"),
    (r"\text{odd}", "The function is odd."),  # a text answer after "is"
    (r"\text{odd}", "It is odd."),
    (r"\text{odd}", r"<answer>\text{odd}</answer>"),  # a declared text answer
    (r"\text{odd}", "odd"),
    ("(3, 5)", r"so x = 3 and y = 5: \boxed{(3, 5)} or (3, 5)"),  # the same value twice
    (r"\frac{3}{8}", "\\boxed{\\frac{3}{8}}\n{\\color{#fafafa}\\boxed{\\frac{3}{8}}} (or 37.5%)."),
]
WRONG = [
    (r"\text{no}", "Yes."),
    (r"\text{yes}", "No, wait, yes."),  # both sides said: a hedge
    (r"\text{yes}", "Yes. Hmm, actually no."),
    (r"\text{no}", "Yes or no? Let us see. It fails for n=2."),
    (r"\text{yes}", "Maybe yes."),
    ("1/4", "The probability is 1/4 (30%)."),  # another value in the aside
    ("1/4", "The answer is 1/4, or 30%."),
    ("5", "The answer is 5 or 6."),
    ("6", "The answer is 5, or maybe 6."),
    ("0.04", "The answer is 5 hundredths."),
    ("0.003", "The answer is 3 hundredths."),
    (UNION, "So x < 1 or x > 4."),
    (r"(-\infty, 1] \cup (3, \infty)", "So x < 1 or x > 3."),  # the end point left out
    (UNION, "So x < 1 or x > 3 or x = 2."),
    ("42", r"So the answer is \boxed{42}. On second thought, it is forty-four."),
    ("42", "So we get 42. On second thought, it is forty-four."),
    ("42", "The answer is $42$. Wait, no: forty-four."),
    (r"12\text{ cm}", r"\boxed{120\text{ mm}}. Wait, let me verify: the result is 13\text{ cm}."),
    (r"\{1, 2, 3\}", "So $x = 1$ and $x = 2$ and $x = 4$."),
    ("3", "So $x = 1$ and $x = 2$ and $x = 3$."),  # one value asked, three given
    ("2", "So we get 12.\nThere are two cases to check."),  # a remark after the answer
    ("1", "This is the one."),
    ("5", "Is it five?"),
    ("5", "There are about five."),
    ("5", "There are five ways, but only two work."),
    ("6", "So, $x = 3$. Let me double-check: $3 + 3 = 6$."),
    ("5", "So, $x = 5$. Let me verify: $x = 3$."),  # states another value: no check
    ("(3, 5)", r"so x = 3 and y = 5: \boxed{(3, 5)} or (3, 6)"),
    (r"\frac{3}{8}", r"\boxed{\frac{3}{8}} (or 40%)."),
    (r"\text{no}", "#### yes"),
    (r"\text{odd}", "The function is not odd."),
    (r"\text{odd}", "The function is odd or even."),
    (r"\text{odd}", "Thus the function is even."),
    ("12", "x ≥ 12"),  # a bound, as "x \\ge 12" is (the Unicode sign was read as a value)
    ("12", "So x ≤ 12."),
]


@pytest.mark.parametrize(
    ("question", "answer", "gold"),
    [
        ("Simplify 4/14.", r"\boxed{\frac{4}{14}}", r"\frac{2}{7}"),
        ("Simplify 4/14.", r"\boxed{\dfrac{4}{14}}", r"\frac{2}{7}"),
        (r"Simplify $\frac{6}{8}$.", r"\boxed{6/8}", r"\frac{3}{4}"),
        ("Add them.", r"\boxed{\frac12 + \frac14}", r"\frac{3}{4}"),
    ],
)
def test_the_question_in_another_fraction_style_is_not_its_answer(
    question: str, answer: str, gold: str
) -> None:
    verdict = CHECK(Sample(id="q", prompt=question, completion=answer, reference=gold))
    assert verdict.score == 0.0, verdict.evidence


@pytest.mark.parametrize(("gold", "text"), RIGHT)
def test_a_plain_statement_of_the_answer_pays(gold: str, text: str) -> None:
    verdict = CHECK(Sample(id="r", completion=text, reference=gold))
    assert verdict.status is Status.PASS, verdict.evidence


@pytest.mark.parametrize(("gold", "text"), WRONG)
def test_a_wrong_or_hedged_one_does_not(gold: str, text: str) -> None:
    verdict = CHECK(Sample(id="w", completion=text, reference=gold))
    assert verdict.score == 0.0, verdict.evidence


def test_a_number_in_the_reasons_is_not_a_yes_or_no_answer() -> None:
    """Only a yes-or-no gold reads the word: a number gold still reads the number."""
    verdict = CHECK(Sample(id="n", completion="Yes, 12.", reference="12"))
    assert verdict.status is Status.PASS, verdict.evidence
    verdict = CHECK(Sample(id="n2", completion="Yes.", reference="12"))
    assert verdict.score == 0.0


@pytest.mark.parametrize(
    ("name", "text", "gold"),
    [
        ("math/yes_no_said", r"\boxed{\text{yes}}", r"\text{yes}"),
        ("math/yes_no_said", r"The answer is no.", "no"),
        ("math/check_computed_after", "So, $x = 3$.", "3"),
        ("math/words_stated", r"\boxed{\text{odd}}", r"\text{odd}"),
        ("math/check_computed_after", "She has 12 apples.", "12"),
        ("math/percent_restated", r"\boxed{\frac{1}{4}}", "1/4"),
        ("math/solutions_in_prose", rf"\boxed{{{UNION}}}", UNION),
    ],
)
def test_the_relations_write_these_forms_and_keep_the_answer_right(
    name: str, text: str, gold: str
) -> None:
    """The relations are how `audit --search` finds the class on its own: every form they
    write of a right answer must stay right."""
    relation = {r.name: r for r in relations(CHECK)}[name]
    written = set()
    for seed in range(12):
        sample = relation.rewrite(
            Sample(id="s", completion=text, reference=gold), random.Random(seed)
        )
        assert sample is not None
        written.add(sample.completion)
        verdict = CHECK(sample)
        assert verdict.status is Status.PASS, (sample.completion, verdict.evidence)
    assert len(written) >= 2  # more than one form is tried


# The last number of a prose line read out of the term it is an argument of: "3√2" paid
# the gold 2, "\log_2 8" the gold 8 (found by probing the reader with radicals in prose).
IN_A_TERM = [
    ("2", "The distance is 3√2."),
    ("2", r"The distance is 3\sqrt{2}."),
    ("2", "The distance is 3 sqrt(2)."),
    ("2", "So the area is π·2."),
    ("8", r"It is \log_2 8."),
    ("30", r"So it is \sin 30."),
    ("2", "So we get 3 times 2."),
    ("6", r"The distance is 3\sqrt{6}. or 6"),  # the term, then the gold offered
    ("6", "So the result is 3√6. or possibly 6"),
]


@pytest.mark.parametrize(("gold", "text"), IN_A_TERM)
def test_a_number_inside_a_term_is_not_the_answer(gold: str, text: str) -> None:
    verdict = CHECK(Sample(id="t", completion=text, reference=gold))
    assert verdict.score == 0.0, verdict.evidence


@pytest.mark.parametrize(
    ("gold", "text"),
    [
        (r"3\sqrt{2}", "The distance is 3√2."),
        (r"3\sqrt{2}", r"The distance is 3\sqrt{2}."),
        (r"3\sqrt{2}", "The distance is 3 sqrt(2)."),
        ("3", r"It is \log_2 8."),
        ("2", r"The area is 2 \text{ cm}^2."),
    ],
)
def test_the_term_read_whole_is_the_answer(gold: str, text: str) -> None:
    verdict = CHECK(Sample(id="t", completion=text, reference=gold))
    assert verdict.status is Status.PASS, verdict.evidence


def test_the_relation_puts_the_gold_in_a_term_and_it_earns_nothing() -> None:
    relation = {r.name: r for r in relations(CHECK)}["math/gold_in_a_term"]
    made = 0
    for gold in ("2", "5", "9", "12"):
        for seed in range(10):
            sample = Sample(id="g", completion=rf"\boxed{{{gold}}}", reference=gold)
            rewritten = relation.rewrite(sample, random.Random(seed))
            if rewritten is not None:
                made += 1
                assert CHECK(rewritten).score == 0.0, rewritten.completion
    assert made >= 30
