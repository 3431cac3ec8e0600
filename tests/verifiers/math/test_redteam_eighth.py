"""Red-team tables (eighth math red team, 2026-12-05, rtmath8): the holes the seventh team
reported open, and the classes found beside them.

Before scores on main (0c8b093) are written by each table. Classes:

* a right answer with a stated rejection of another value ("The answer is 5, not 6.": 0
  before), and a denial of the right value beside it ("The answer is $\\boxed{5}$, not
  5.": 1.0 before);
* a denial inside the description a value ends ("the roots that are not real is 5.": 0
  before, read as "not 5");
* doubt or an open ending after the answer ("\\boxed{5}, but I am not sure.", "The
  answer is $5$ or something else.": 1.0 before);
* cis in prose and in degrees ("the answer is 2 cis 30 degrees": read as 60·c·i·s, 0
  before; "2cis(pi/6)" on a last line read as its argument pi/6);
* a coefficient glued to a function call ("z = 2sin(pi/6)": read as its argument, 1.0
  before for the gold pi/6);
* ``<answer>`` tags read by `extract_answer` alone (``<answer>[73, 30]</answer>`` read
  ">" through the word "answer" of the closing tag), and the text after the closing tag
  ("<answer>5</answer> or 6", "... Actually, it is 6.": 1.0 before, the tail was dropped);
* a possibility before the value ("It might be 5.", "The answer could be
  $\\boxed{5}$.": 1.0 before), and an approximation after a box ("\\boxed{5} or so");
* a disowning in emphasis ("\\boxed{5} **Just kidding.**": 1.0 before) and a word of
  another script in a bare last line ("[1, 3) возможно [1, 3)": 0 before, 1.0 with a
  check after it; found by ``audit --search`` seeds 2 and 3).
"""

from __future__ import annotations

import random

import pytest

from rewardsmith.verifiers import Sample, create
from rewardsmith.verifiers.math.extract import extract_answer
from rewardsmith.verifiers.math.relations import relations

CHECK = create("math")


def _score(completion: str, gold: str) -> float:
    return CHECK(Sample(id="rt8", completion=completion, reference=gold)).score


# A right answer with a rejection of another value after it. Before: 0 except the
# marked controls (1.0 before and after); after: 1.0.
REJECTS_ANOTHER = [
    "The answer is 5, not 6.",
    "The answer is 5 and not 6.",
    "The answer is 5 (not 6).",
    "The answer is 5, rather than 6.",
    "The answer is 5, never 6.",
    "Answer: 5, not 6",
    "It is 5, not 6.",
    "So x = 5, not 6.",
    "5, not 6.",
    "The answer is not 6 but 5.",
    "Final answer: 5 (and not 6).",
    "The answer is $5$, not $6$.",  # control
    r"The answer is $\boxed{5}$, not 6.",  # control
    r"So $x = 5$, not $6$.",
    "The answer is 5, not 6.\nI checked it twice.",
    "The answer is 5 apples, not 6 apples.",
    "The answer is 5 — not 6.",
    "It's 5, not 6!",
    "The answer is **5**, not **6**.",  # 0 before (bold)
    "**Answer: 5** (not 6)",  # 0 before
    r"\boxed{5}. The denominator is not 5.",  # control: another quantity is denied
    "The answer is 5. It is not 6.",  # control
]

# The answer qualified after it, or after a dash that follows the phrase. Before: 0 (the
# phrase kept the words, the last number was the qualification's); after: 1.0.
QUALIFIED = [
    "The answer is 5, not counting the origin.",
    "The answer is 5, not including 0.",
    "The answer is 5, excluding 0.",
    "So it is 5, excluding 44.",  # audit --search seed 25 (rejects_another)
    "It is 5, not counting the 2 corners.",
    "Final answer — 5",  # an em or en dash after the phrase (a dash glued on is a minus)
    "Final answer – 5",
    "The answer is — 5.",
]


@pytest.mark.parametrize("completion", QUALIFIED)
def test_an_answer_qualified_after_it_keeps_full_marks(completion: str) -> None:
    assert _score(completion, "5") == 1.0


# A denial of the right value beside a statement of it, or a wrong answer that rejects the
# right one. Before: 0, except the marked ones (1.0 before); after: 0.
DENIES_THE_RIGHT = [
    "The answer is 6, not 5.",
    "The answer is $6$, not $5$.",
    "It is 6, not 5.",
    r"The answer is $\boxed{6}$, not 5.",
    "The answer is 5, not 5.",
    r"The answer is $\boxed{5}$, not 5.",  # 1.0 before
    r"The answer is $\boxed{5}$, not $5.0$.",  # 1.0 before
    r"The answer is $\boxed{5}$, not $\frac{10}{2}$.",  # 1.0 before
    "The answer is $5$, not $5$.",  # 1.0 before
    r"The answer is $5$, not $\frac{10}{2}$.",  # 1.0 before
    "It is 5, not 5.",
    r"\boxed{5} (not 5)",  # 1.0 before
    r"\boxed{5}. It is not 5.",  # 1.0 before: a later sentence denies the answer
    r"\boxed{5}. 5 is wrong.",  # 1.0 before
    "The answer is 5. Not 5.",  # 1.0 before
    "The answer is $5$. It is not $5$.",  # 1.0 before
    r"\boxed{5}. Not $5$..",  # audit --search seed 12 on the final tree (two dots)
]

# A denial in the description that a value ends, not of the value. Before: 0; after: 1.0.
DESCRIBED = [
    "the roots that are not real is 5.",
    "The number of roots that are not real is 5.",
    "The number of integers that cannot be written this way is 5.",
    "The smallest n such that n+1 is not prime is 5.",
    "The count of numbers that aren't prime is 5.",
    "The number of roots which are not real equals 5.",
    "The number of values for which f is not defined is $5$.",
    "The answer that is not 6 is 5.",  # 1.0 before
    "The number of roots that are not real is five.",  # in words (audit seed 48)
    "The smallest n for which n is not a square is five.",
]

# Denials that govern the value (controls: 0 before and after).
STILL_DENIED = [
    "It is not 5.",
    "The answer that I got is not 5.",
    "That is not 5.",
    "It is not true that x is 5.",
    "I don't think that it is 5.",
    "The number of roots that are not real is not 5.",
    "x is the number that is not 5.",
    "The value that we want cannot be 5.",
    "The count which we need isn't 5.",
    "It is not five.",
    "The number of roots that are not real is about five.",
    "It is not exactly 5.",
    "It is not $5$.",  # no rejection after a value: "is not" follows a word
    "So x is not 5.",
    "It is 6, and not 5.",
    "It is 6 (rather than 5).",
]

# Doubt or an open ending after the answer. Before: 1.0, except the marked ones (0
# before); after: 0.
DOUBTED_AFTER = [
    "The answer is $5$ or something else.",
    r"\boxed{5}, but I am not sure.",
    r"\boxed{5}. But I am not sure.",
    r"\boxed{5}, though I am not certain.",
    r"\boxed{5}, but I could be wrong.",
    r"\boxed{5}, but I might be wrong.",
    r"\boxed{5}, but I'm not confident.",
    "The answer is $5$, but I'm not sure.",
    "The answer is 5. But I am not sure.",
    r"The answer is \boxed{5}, although I'm not sure.",
    r"\boxed{5} (not sure).",
    r"\boxed{5}, probably.",
    r"\boxed{5}, I guess.",
    r"\boxed{5}, I think.",
    r"\boxed{5}, if I'm right.",
    r"\boxed{5} — or not.",
    r"\boxed{5}, unless I made a mistake.",
    r"\boxed{5}. I'm not sure though.",
    "\\boxed{5}\n\nI am not sure.",
    "\\boxed{5}\n\nBut I am not sure.",
    "The answer is $5$ or not.",
    "The answer is $5$, or maybe something else.",
    "The answer is $5$, maybe not.",
    "The answer is 5, but I am not sure.",  # 0 before (unparsed)
    "Final answer: $5$. I am not 100% sure.",
    "#### 5\nNot sure, though.",
    "<answer>5</answer> I'm not sure.",
    "The answer is 5... I think.",
    "\\boxed{5}\n\nConfidence: low.",
    "\\boxed{5}\n\n(Low confidence.)",
    r"\boxed{5}, though this might not be right.",
    r"\boxed{5}. This may not be correct.",
    r"\boxed{5}. I could not verify this.",
    r"\boxed{5} (a guess)",
    r"\boxed{5}. I may have made an error.",
    r"\boxed{5}. Take this with a grain of salt.",
    r"\boxed{5} (I am not completely sure)",
]

# Sure of the answer, or doubt about something before it (controls: 1.0 before and after).
SURE = [
    r"At first I was not sure, but the answer is \boxed{5}.",
    r"I was not sure about step 2, so I checked it: 2 + 3 = 5. The answer is \boxed{5}.",
    "\\boxed{5}\n\nI am sure of this.",
    r"\boxed{5}. I double-checked it, and I am confident.",
    r"The answer is \boxed{5}, and I am sure.",
    r"The answer is $5$, whether or not $x$ is even.",
    r"\boxed{5}. I'm not sure why the problem gives $y$, but it is not needed.",
    r"So the answer is $\boxed{5}$, or anything equivalent.",
    r"\boxed{5}. I believe this is correct.",
    r"\boxed{5}. I can check: 2 + 3 = 5.",
    "\\boxed{5}\n\nI have high confidence in this.",
    r"The chance of a tie might be higher, but the answer is \boxed{5}.",
    r"\boxed{5}. Guessing is not needed here since 2 + 3 = 5.",
]

# cis θ in prose and in degrees. Before: 0 (read as c·i·s times a number, or the argument
# alone), except the marked controls; after: 1.0.
CIS_PROSE = [
    ("the answer is 2 cis 30 degrees", r"\sqrt{3}+i"),
    ("The answer is 2 cis 30°.", r"\sqrt{3}+i"),
    (r"\boxed{2\operatorname{cis} 30^\circ}", r"\sqrt{3}+i"),
    (r"\boxed{2\operatorname{cis}(30^\circ)}", r"\sqrt{3}+i"),
    (r"$z = 2\text{cis}\,30^{\circ}$", r"\sqrt{3}+i"),
    ("The answer is 2 cis pi/6.", r"\sqrt{3}+i"),
    ("z = 2cis(pi/6)", r"\sqrt{3}+i"),
    ("2cis(pi/6)", r"\sqrt{3}+i"),
    ("So z = 4 cis(π/2).", "4i"),  # control: 1.0 before
    ("The answer is 2cis(pi/6).", r"\sqrt{3}+i"),  # control: 1.0 before
]

# cis read as a number it is not (controls: 0 before and after).
CIS_WRONG = [
    ("The answer is 2 cis 60 degrees.", r"\sqrt{3}+i"),
    ("the answer is 2 cis 30 degrees", "60"),
    ("The answer is 2 cis 30.", r"\sqrt{3}+i"),
    ("z = 2cis(pi/6)", r"\frac{\pi}{6}"),  # 1.0 before: read as its argument
    (r"\boxed{2\operatorname{cis}(60)}", r"1+\sqrt{3}i"),
]

# A coefficient glued to a function call, read as the call's argument. Before: 1.0; after: 0.
GLUED_CALL = [
    ("z = 2sin(pi/6)", r"\frac{\pi}{6}"),
    ("So z = 2cos(pi/6)", r"\frac{\pi}{6}"),
    ("y = 3tan(pi/4)", r"\frac{\pi}{4}"),
    ("x = 3sqrt(2)", "2"),
    ("x = 3log(2)", "2"),
    ("So the value is 2sin(pi/6).", r"\frac{\pi}{6}"),
]

# The call read whole (controls and rows: 1.0 after; before, the marked ones 0).
GLUED_CALL_RIGHT = [
    ("z = 2sin(pi/6)", "1"),  # 0 before
    ("x = 3sqrt(2)", r"3\sqrt{2}"),  # 0 before
    ("z = sin(pi/6)", r"\frac{1}{2}"),
    (r"x = 3\sqrt{2}", r"3\sqrt{2}"),
]

# What extract_answer reads in <answer> tags: the tag's content.
TAGGED = [
    ("<answer>[73, 30]</answer>", "[73, 30]"),  # ">" before
    ("<answer>12</answer>", "12"),  # ">" before
    ("Thinking aloud.\n<answer> x^2+2x+1 </answer>", "x^2+2x+1"),  # ">" before
    ("The sum is 4.\n<answer>\\boxed{4}</answer>", "4"),
    ("<ANSWER>7</ANSWER>", "7"),  # ">" before
]


@pytest.mark.parametrize("completion", REJECTS_ANOTHER)
def test_a_right_answer_that_rejects_another_value_keeps_full_marks(completion: str) -> None:
    assert _score(completion, "5") == 1.0


@pytest.mark.parametrize("completion", DENIES_THE_RIGHT)
def test_a_denial_of_the_right_value_earns_nothing(completion: str) -> None:
    assert _score(completion, "5") == 0.0


@pytest.mark.parametrize("completion", DESCRIBED)
def test_a_denial_in_the_description_does_not_deny_the_value(completion: str) -> None:
    assert _score(completion, "5") == 1.0


@pytest.mark.parametrize("completion", STILL_DENIED)
def test_a_denial_that_governs_the_value_still_denies_it(completion: str) -> None:
    assert _score(completion, "5") == 0.0


@pytest.mark.parametrize("completion", DOUBTED_AFTER)
def test_doubt_after_the_answer_earns_nothing(completion: str) -> None:
    assert _score(completion, "5") == 0.0


@pytest.mark.parametrize("completion", SURE)
def test_an_answer_given_without_doubt_keeps_full_marks(completion: str) -> None:
    assert _score(completion, "5") == 1.0


@pytest.mark.parametrize(("completion", "gold"), CIS_PROSE)
def test_cis_in_prose_and_in_degrees_is_read(completion: str, gold: str) -> None:
    assert _score(completion, gold) == 1.0


@pytest.mark.parametrize(("completion", "gold"), CIS_WRONG)
def test_cis_is_not_read_as_another_number(completion: str, gold: str) -> None:
    assert _score(completion, gold) == 0.0


@pytest.mark.parametrize(("completion", "gold"), GLUED_CALL)
def test_a_call_with_a_coefficient_is_not_its_argument(completion: str, gold: str) -> None:
    assert _score(completion, gold) == 0.0


@pytest.mark.parametrize(("completion", "gold"), GLUED_CALL_RIGHT)
def test_a_call_with_a_coefficient_is_read_whole(completion: str, gold: str) -> None:
    assert _score(completion, gold) == 1.0


@pytest.mark.parametrize(("completion", "answer"), TAGGED)
def test_extract_answer_reads_answer_tags(completion: str, answer: str) -> None:
    assert extract_answer(completion).answer == answer


# What follows the closing </answer> tag counts as what follows a box. Before: 1.0 (the
# tail was dropped), except the control; after: 0.
AFTER_TAG = [
    "<answer>5</answer> or 6",
    "<answer>5</answer>\nActually, it is 6.",
    "<answer>5</answer>\nJust kidding.",
    "<answer>5</answer>\nScratch that.",
    "<answer>5</answer>\nI am not sure.",
    "<answer>6</answer>\n<answer>5</answer>",  # two declared answers
    r"<answer>\boxed{5}</answer> \boxed{6}",  # a box after the tag
]
AFTER_TAG_RIGHT = [
    "<answer>5</answer>",
    "<answer>5</answer>\nHope this helps!",
    "<answer>5</answer>\nExplanation: 2 + 3 = 5.",
    "<answer>6</answer>\nActually, it is 5.",  # 0 before: a retraction names the answer
    "<answer>5</answer>\n<answer>5</answer>",
    "<think><answer>6</answer></think><answer>5</answer>",  # a tag in the reasoning
    "<answer>5</answer><answer></answer>",  # 0 before: an empty tag declares nothing
    r"<answer>\frac{10}{2}</answer><answer>5</answer>",
]

# A possibility before the value, an approximation or a disowning in emphasis after it.
# Before: 1.0; after: 0.
OFFERED = [
    "It might be 5.",
    "It could be $5$.",
    "So x could be 5.",
    "The answer might be 5.",
    r"The answer might be \boxed{5}.",
    r"It could be \boxed{5}.",
    r"It may be that the answer is \boxed{5}.",
    "It could be that the answer is 5.",
    r"\boxed{5} or so",
    r"\boxed{5}, give or take.",
    r"\boxed{5} **Just kidding.**",
    "\\boxed{5}\n\n*Scratch that.*",
]
# A guess or a doubt as a label or an adverb right before the value. Before: 1.0;
# after: 0.
GUESSED = [
    r"Not sure: \boxed{5}",
    r"Low confidence: \boxed{5}",
    r"Guess: \boxed{5}",
    "My guess: 5",
    r"Best guess: \boxed{5}",
    r"Probably \boxed{5}.",
    r"Likely \boxed{5}.",
    r"Most likely \boxed{5}.",
]
# Stated (controls: 1.0 before and after).
STATED = [
    "The most likely value is 5.",
    r"The most likely value is \boxed{5}.",
    "The probability is 5.",
    "The number of ways it could be done is 5.",
    "The answer should be 5.",
    r"The error is at most $\boxed{5}$.",
    r"It is at least \boxed{5}.",
    "So the result is\n\n5 возможно 5",
]


@pytest.mark.parametrize("completion", AFTER_TAG + OFFERED + GUESSED)
def test_an_offer_or_a_tail_that_takes_the_answer_back_earns_nothing(completion: str) -> None:
    assert _score(completion, "5") == 0.0


@pytest.mark.parametrize("completion", AFTER_TAG_RIGHT + STATED)
def test_an_answer_stated_plainly_keeps_full_marks(completion: str) -> None:
    assert _score(completion, "5") == 1.0


def test_a_quoted_box_does_not_shift_the_statement_a_frame_denies() -> None:
    # audit --search seed 71 (framed_untrue, then quoted_gold): the quote before the
    # statement hid its frame for a text answer (1.0 before).
    text = "You asked: is it \\boxed{\\text{yes}}? Let us see.\nI don't think the answer is yes."
    assert _score(text, r"\text{yes}") == 0.0
    assert _score("Yes. The answer is yes.", r"\text{yes}") == 1.0


@pytest.mark.parametrize(
    ("completion", "gold", "score"),
    [
        ("<answer>no</answer>\n<answer>yes</answer>", r"\text{yes}", 0.0),
        (r"<answer>yes</answer> \boxed{no}", r"\text{yes}", 0.0),
        ("<answer>0</answer>\n<answer>\\text{odd}</answer>", r"\text{odd}", 0.0),
        ("<answer>yes</answer>\n<answer>yes</answer>", r"\text{yes}", 1.0),
        ("<answer>\\text{odd}</answer>", r"\text{odd}", 1.0),
    ],
)
def test_two_declared_words_are_a_hedge(completion: str, gold: str, score: float) -> None:
    # audit --search seeds 1, 3, 5 on the final tree (tag_tail): a yes-or-no or text answer
    # is read after the tags were compared (1.0 before this change)
    assert _score(completion, gold) == score


def test_a_guess_after_hidden_text_is_still_a_guess() -> None:
    # audit --search seed 66 (box_denied, then near_white_gold): "}Probably" (1.0 before).
    text = r"{\color{#fafafa}\boxed{5}}Probably $\boxed{5}$."
    assert _score(text, "5") == 0.0


def test_a_word_of_another_script_makes_a_last_line_prose() -> None:
    # audit --search, seed 3 (math_forms, half-open): undelimited, hedge_gold, verified_after
    # turned 0 into 1.0; the same value offered twice is one answer either way.
    hedged = "So the result is\n\n[1, 3) возможно [1, 3)"
    assert _score(hedged, "[1, 3)") == 1.0
    assert _score(hedged.replace("[1, 3)", "[1, 4)", 1), "[1, 3)") == 0.0


# Another value offered after a box with a slash. Before: 1.0; after: 0 (hedged).
SLASHED = [
    r"\boxed{5} / 6",
    r"$\boxed{5}$ / $6$",
    r"The answer is $\boxed{5}$ / 6.",
]
# The same value after the slash, and a fraction in a later sentence (controls: 1.0).
SLASHED_RIGHT = [
    (r"\boxed{5} / 5", "5"),
    (r"\boxed{5}. 1/2 of them are red.", "5"),
    (r"$\boxed{\frac{1}{2}}$ / $0.5$", r"\frac{1}{2}"),
]


@pytest.mark.parametrize("completion", SLASHED)
def test_a_value_offered_after_a_slash_is_a_hedge(completion: str) -> None:
    assert _score(completion, "5") == 0.0


@pytest.mark.parametrize(("completion", "gold"), SLASHED_RIGHT)
def test_a_slash_that_offers_nothing_else_keeps_full_marks(completion: str, gold: str) -> None:
    assert _score(completion, gold) == 1.0


# A set in braces ending a sentence of prose, without math delimiters. Before: 0 (read
# as "{1, 2", the backslashes dropped); after: 1.0. Wrong sets stay 0.
SET_IN_PROSE = [
    ("The set is \\{1, 2\\}.", r"\{1, 2\}", 1.0),
    ("So the set is \\{1, 2\\}", r"\{1, 2\}", 1.0),
    ("The set is \\{1, 2\\}, not \\{1, 2, 3\\}.", r"\{1, 2\}", 1.0),
    ("The set is \\{1, 2, 3\\}.", r"\{1, 2\}", 0.0),
    ("The set is \\{1, 2\\}, not \\{1, 2\\}.", r"\{1, 2\}", 0.0),
]


@pytest.mark.parametrize(("completion", "gold", "score"), SET_IN_PROSE)
def test_a_set_in_prose_is_read_whole(completion: str, gold: str, score: float) -> None:
    assert _score(completion, gold) == score


RELATIONS = {r.name: r for r in relations(CHECK)}
_GOLDS = [
    "5", "42", r"\frac{1}{3}", "(1, 2)", "x^2+1", "i", "-i", "[1, 3)", r"12\text{ cm}",
    r"\{1, 2\}", r"\{-3, 0, 7\}",
]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "score"),
    [
        ("math/rejects_another", 1.0),
        ("math/described_denial", 1.0),
        ("math/cis_prose", 1.0),
        ("math/set_in_prose", 1.0),
        ("math/denies_itself", 0.0),
        ("math/doubted_after", 0.0),
        ("math/tag_tail", 0.0),
        ("math/box_denied", 0.0),
        ("math/framed_untrue", 0.0),
        ("math/disowned_after", 0.0),
    ],
)
@pytest.mark.parametrize("seed", range(4))
def test_the_eighth_relations_hold(name: str, score: float, seed: int) -> None:
    tried = 0
    for gold in _GOLDS:
        sample = Sample(id="r", completion=f"So \\boxed{{{gold}}}.", reference=gold)
        rewritten = RELATIONS[name].rewrite(sample, random.Random(seed))
        if rewritten is None:
            continue
        tried += 1
        assert CHECK(rewritten).score == score, rewritten.completion
    assert tried >= 2 or name in ("math/cis_prose", "math/set_in_prose")


@pytest.mark.parametrize("seed", range(6))
def test_gold_in_a_glued_call_earns_nothing(seed: int) -> None:
    sample = Sample(id="g", completion="So the result is 5.", reference="5")
    rewritten = RELATIONS["math/gold_in_a_term"].rewrite(sample, random.Random(seed))
    assert rewritten is not None
    assert CHECK(rewritten).score == 0.0, rewritten.completion


def test_a_form_relation_skips_the_question_restated_beside_a_hidden_box() -> None:
    # audit --search seed 6 on the final tree: question_echoed, hidden_percent_comment, then
    # repeating_decimal wrote 4/14 (the question's own fraction, 0) as 0.285714... (1.0):
    # the hidden box made the read a hedge, and the guard against restatements saw nothing.
    sample = Sample(
        id="q",
        prompt="Simplify 4/14.",
        completion="% \\boxed{\\frac{2}{7}}\n\\boxed{4/14}",
        reference="\\frac{2}{7}",
    )
    assert CHECK(sample).score == 0.0
    for seed in range(6):
        assert RELATIONS["math/repeating_decimal"].rewrite(sample, random.Random(seed)) is None
