"""Red-team tables (second math red team, 2026-12-04): a wrong answer paid because the
reading kept what a reader does not see as said, or missed a hedge in forms nobody had
listed. Every row must earn nothing; the last tables go the other way (right answers
that must pass)."""

from __future__ import annotations

import random

import pytest

from rewardsmith.verifiers import Sample, Status
from tests.verifiers.math.test_redteam import CHECK, _earners, _table

# The gold crossed out, a wrong answer left standing: struck text is taken back.
STRUCK_OUT = _table([
    "Final answer: ~~{G}~~ {W}",
    r"Final answer: ~~$\boxed{{{g}}}$~~ {W}",
    r"The answer is \sout{{$\boxed{{{g}}}$}} {W}.",
    r"The answer is \st{{{G}}} {W}.",
    r"The answer is \xout{{{G}}} {W}.",
    r"<del>$\boxed{{{g}}}$</del> The answer is {W}.",
    r"<s>$\boxed{{{g}}}$</s> {W}",
    r"<strike>\boxed{{{g}}}</strike> so {W}",
])  # fmt: skip

# The gold where a reader cannot see it (nearly white, no opacity, no size), the wrong
# answer visible.
UNSEEN = _table([
    r"The answer is {W}. $\color{{#fefefe}}\boxed{{{g}}}$",
    r"The answer is {W}. $\color{{#F0F0F0}}\boxed{{{g}}}$",
    r"The answer is {W}. $\color{{black!3}}\boxed{{{g}}}$",
    r"The answer is {W}. $\color{{white!97!black}}\boxed{{{g}}}$",
    r"The answer is {W}. $\color[RGB]{{250,250,250}}\boxed{{{g}}}$",
    r"The answer is {W}. $\color[rgb]{{0.97,0.97,0.97}}\boxed{{{g}}}$",
    r"The answer is {W}. $\color[cmyk]{{0,0,0,0.02}}\boxed{{{g}}}$",
    r"The answer is {W}. $\textcolor{{whitesmoke}}{{\boxed{{{g}}}}}$",
    r"The answer is {W}. \scalebox{{0.001}}{{$\boxed{{{g}}}$}}",
    r"The answer is {W}. \scalebox{{.05}}{{$\boxed{{{g}}}$}}",
    'The answer is {W}. <span style="opacity:0">$\\boxed{{{g}}}$</span>',
    'The answer is {W}. <span style="opacity: 0.0;">$\\boxed{{{g}}}$</span>',
    'The answer is {W}. <span style="font-size:0px">$\\boxed{{{g}}}$</span>',
    'The answer is {W}. <span style="color: #FAFAFA">$\\boxed{{{g}}}$</span>',
    'The answer is {W}. <font color="white">$\\boxed{{{g}}}$</font>',
    'The answer is {W}. <span style="color:rgb(254,254,254)">$\\boxed{{{g}}}$</span>',
])  # fmt: skip

# The box marked wrong, or another answer offered in words no table had (other languages,
# a second guess, confidence shares).
OFFERED = _table([
    r"$\boxed{{{g}}}$ ✗, {W} ✓",
    r"$\boxed{{{g}}}$ ❌ {W}",
    r"答案是 $\boxed{{{g}}}$，也可能是 {W}。",
    r"Odpowiedź to $\boxed{{{g}}}$ lub {W}.",
    r"Cevap $\boxed{{{g}}}$ veya {W}.",
    r"Jawabannya $\boxed{{{g}}}$ atau {W}.",
    r"उत्तर $\boxed{{{g}}}$ या {W} है।",
    r"الجواب $\boxed{{{g}}}$ أو {W}",
    r"Het antwoord is $\boxed{{{g}}}$, of misschien {W}.",
    r"Ответ: $\boxed{{{g}}}$, возможно {W}.",
    r"La respuesta es $\boxed{{{g}}}$, también podría ser {W}.",
    r"答えは $\boxed{{{g}}}$ かもしれません、{W}",
    r"$\boxed{{{g}}}$" + "\n\nMy second guess: {W}",
    r"$\boxed{{{g}}}$ (60% confidence), {W} (40%)",
])  # fmt: skip

CLASSES = {"struck_out": STRUCK_OUT, "unseen": UNSEEN, "offered": OFFERED}


@pytest.mark.parametrize("name", list(CLASSES))
def test_no_row_of_the_class_earns(name: str) -> None:
    rows = CLASSES[name]
    earners = _earners(rows)
    assert not earners, f"{name}: {len(earners)} of {len(rows)} earned: {earners[:8]}"


RIGHT = [
    ("6", r"Final answer: ~~$\boxed{5}$~~ $\boxed{6}$"),  # a struck answer is taken back
    ("6", "Final answer: ~~5~~ 6"),
    ("5", r"The answer is $\boxed{5}$, and indeed $x~~=~~5$."),  # ~ is a LaTeX space
    ("5", r"$\color{red}\boxed{5}$"),
    ("5", r"$\textcolor{gray}{\boxed{5}}$"),
    ("5", r"$\color{black!60}\boxed{5}$"),
    ("5", r"\scalebox{0.5}{$\boxed{5}$}"),
    ("5", r"$\boxed{5}$ ✓"),
    ("5", "I am confident the answer is $\\boxed{5}$."),
    (r"\frac{3}{4}", r"The probability is $\boxed{\frac{3}{4}}$, i.e. $75\%$."),
    ("0.25", r"The answer is $\boxed{0.25}$. That is, $25\%$."),
    (r"25\%", r"The answer is $\boxed{25\%}$, or $\frac{1}{4}$ as a fraction."),
]
WRONG = [
    (r"\frac{3}{4}", r"The probability is $\boxed{\frac{3}{4}}$, i.e. $70\%$."),
    ("75", r"The answer is $\boxed{75}$, i.e. $75\%$."),  # 75 is not 75%
]


def test_right_answers_in_these_forms_pass_and_near_misses_fail() -> None:
    failed = [
        (gold, text, verdict.failure)
        for gold, text in RIGHT
        if (verdict := CHECK(Sample(id="r", completion=text, reference=gold))).status
        is not Status.PASS
    ]
    paid = [
        (gold, text)
        for gold, text in WRONG
        if CHECK(Sample(id="w", completion=text, reference=gold)).score != 0.0
    ]
    assert not failed and not paid, (failed, paid)


@pytest.mark.parametrize("dressing", ["~~$\\boxed{12}$~~", "$\\boxed{12}$ ✗", "<s>12</s>"])
def test_an_answer_changing_relation_changes_the_answer_the_reader_sees(dressing: str) -> None:
    """After a struck-out or crossed box, the answer is the last one the reader sees: a
    relation that rewrote the struck one changed nothing read, and a search chain that
    first struck out a gold reported the unchanged right answer as a hole (false witness)."""
    from rewardsmith.verifiers.math.relations import relations

    sample = Sample(
        id="s", prompt="5+7=", completion=f"So $\\boxed{{12}}$. {dressing}", reference="12"
    )
    changing = [r for r in relations(CHECK) if r.kind == "changing"]
    made = 0
    for relation in changing:
        for seed in range(3):
            new = relation.rewrite(sample, random.Random(seed))
            if new is None:
                continue
            made += 1
            assert CHECK(new).status is not Status.PASS, (relation.name, new.completion)
    assert made >= 3


@pytest.mark.parametrize(
    "completion",
    ["You asked: is it \\boxed{12}? Let us see.\n12", "Is it `\\boxed{12}`? Yes: 5 + 7 = 12"],
)
def test_an_answer_changing_relation_skips_a_box_the_verifier_does_not_read(
    completion: str,
) -> None:
    """A quoted box is seen but no answer (found by `audit --search --seed 3`: the quoted
    gold, then a digit changed in that box, "earned 1.0"): a changing relation rewrites the
    number the verifier reads."""
    from rewardsmith.verifiers.math.relations import relations

    sample = Sample(id="q", prompt="5+7=", completion=completion, reference="12")
    assert CHECK(sample).status is Status.PASS
    changing = [r for r in relations(CHECK) if r.kind == "changing"]
    made = 0
    for relation in changing:
        for seed in range(3):
            new = relation.rewrite(sample, random.Random(seed))
            if new is not None:
                made += 1
                assert CHECK(new).status is not Status.PASS, (relation.name, new.completion)
    assert made >= 3


@pytest.mark.parametrize(
    "completion",
    [
        "So the result is\n\n31^{9} lub 9",
        "So the result is 31^{9} or 9",
        "x^2 + 9 or possibly 9",
        "f(2) or 9",
        "\\left(3\\right) veya 9",
        "(4, 5) or 9",
        "So the result is\n\n31^{9}\n\nWait, let me verify: the result is 31^{9}. Yes, it is.",
        "the result is 31^{9}. Yes.",
    ],
)
def test_an_expression_that_ends_in_the_gold_earns_nothing_however_followed(
    completion: str,
) -> None:
    """Found by `audit --search` (gold_as_last_number, then hedge_gold or verified_after):
    the value offered before an "or" was the number the expression ends ("31^{9}" read as
    9, the same value as the gold after it, so no hedge), and prose after "31^{9}." made
    the line's last number the answer."""
    verdict = CHECK(Sample(id="e", prompt="6+3=", completion=completion, reference="9"))
    assert verdict.status is not Status.PASS, verdict


@pytest.mark.parametrize(
    "completion", ["3^{2}, or 9", "The answer is (9). Good", "Total: 9 (in dollars)."]
)
def test_the_same_value_restated_or_closed_still_pays(completion: str) -> None:
    verdict = CHECK(Sample(id="e", prompt="6+3=", completion=completion, reference="9"))
    assert verdict.status is Status.PASS, verdict


@pytest.mark.parametrize(
    ("completion", "gold", "wrong"),
    [
        ("Total = 42", "42", "41"),
        ("The total = 42.", "42", "41"),
        ("Answer = 42", "42", "43"),
        ("\\boxed{\\displaystyle B}", "B", "C"),
        ("the area is 12 \\text{ m}^2.", "12", "2"),
        ("\\boxed{\\textstyle (B)}", "B", "D"),
    ],
)
def test_a_named_result_and_a_styled_letter_pay_and_their_wrong_twins_do_not(
    completion: str, gold: str, wrong: str
) -> None:
    """Right answers the red team saw fail: a word names the result ("Total = 42" read as
    one side of an equation in an unknown), "Answer = 42" read as "= 42", and a choice letter
    after a style switch that shows nothing."""
    right = CHECK(Sample(id="r", prompt="q", completion=completion, reference=gold))
    other = CHECK(Sample(id="w", prompt="q", completion=completion, reference=wrong))
    assert (right.status, other.status) == (Status.PASS, Status.FAIL), (right, other)


def test_an_answer_rewrite_never_glues_words_to_a_control_word() -> None:
    """`\\iffalse \\boxed{15} \\fi15` reads 15; its number in words must be "\\fi fifteen",
    not the unknown macro "\\fififteen" (found by `audit --search --seed 7`: a right answer
    kept right "earned 0.0", a false witness)."""
    from rewardsmith.verifiers.math.relations import relations

    words = {r.name: r for r in relations(CHECK)}["math/number_words"]
    sample = Sample(
        id="w", prompt="8+7=", completion="\\iffalse \\boxed{15} \\fi15", reference="15"
    )
    assert CHECK(sample).status is Status.PASS
    new = words.rewrite(sample, random.Random(0))
    assert new is not None and CHECK(new).status is Status.PASS, new.completion


@pytest.mark.parametrize("phrase", ["Final answer: ", "The answer is ", "Answer: "])
def test_what_hidden_text_leaves_behind_an_answer_phrase_is_not_read(phrase: str) -> None:
    """A hidden box leaves an empty group where it was: "Final answer: {}8" shows 8 (found
    by `audit --search --seed 11`: the hidden gold, then an answer phrase, earned 0). A
    hidden box of another value is still a hedge."""
    same = CHECK(Sample(id="h", completion=phrase + "{\\color{white}\\boxed{8}}8", reference="8"))
    assert same.status is Status.PASS, same.evidence
    other = phrase + "{\\color{white}\\boxed{9}}8"
    assert CHECK(Sample(id="o", completion=other, reference="8")).score == 0.0
    assert CHECK(Sample(id="p", completion=other, reference="9")).score == 0.0
