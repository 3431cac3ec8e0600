"""Finding the final answer in a completion."""

from __future__ import annotations

import pytest

from rewardsmith.verifiers.math.extract import extract_answer, matching_braces

EXTRACTIONS = [
    # (completion, answer, method)
    (r"so \boxed{42}.", "42", "boxed"),
    (r"\boxed{\frac{1}{2}} is it", r"\frac{1}{2}", "boxed"),
    (r"nested \boxed{\{1, \{2\}\}}", r"\{1, \{2\}\}", "boxed"),
    (r"first \boxed{3}, finally \boxed{3}", "3", "boxed"),
    (r"a box in a box \boxed{\boxed{5}}", "5", "boxed"),
    (r"an empty box first \boxed{} then \boxed{5}", "5", "boxed"),
    (r"\boxed{15}. The answer is 15 because 3 * 5 = 15.", "15", "boxed"),
    (r"\boxed{15}" + "\n\nThe answer above is correct.", "15", "boxed"),
    (r"\boxed{\frac{1}{2}}. Final Answer: $\frac{1}{2}$", r"\frac{1}{2}", "boxed"),
    (r"\fbox{17}", "17", "boxed"),
    (r"\boxed {7}", "7", "boxed"),
    ("The answer is 12.", "12", "answer_phrase"),
    ("The answer is 3.5.", "3.5", "answer_phrase"),
    ("Final Answer: $\\frac{3}{4}$. Done", r"\frac{3}{4}", "answer_phrase"),
    ("**Answer:** 7", "7", "answer_phrase"),
    ("The answer is 12 because 3 * 4 = 12.", "12", "answer_phrase"),
    ("So the answer is 5, since the rest cancel.", "5", "answer_phrase"),
    ("answer is (B)", "(B)", "answer_phrase"),
    ("We get\n$x = 5$", "x = 5", "final_math"),
    ("We get\n$$\n\\frac{1}{3}\n$$", r"\frac{1}{3}", "final_math"),
    (r"so \(2\pi\)", r"2\pi", "final_math"),
    ("8 * 8\nwhich is 64 in total.", "64", "last_number"),
    ("Each side measures 5cm", "5", "last_number"),
    ("so the area is $12$ square units", "12", "final_math"),
    ("so the area is $12$ square units!", "12", "final_math"),
    ("<think>it is 4</think>\nThe answer is 5.", "5", "answer_phrase"),
    ("<think>\\boxed{4}</think>\n$5$", "5", "final_math"),
    ("It is 1,234 apples", "1,234", "last_number"),
    ("The ratio is 3/4", "3/4", "last_number"),
    ("#### 18", "18", "answer_phrase"),  # GSM8K's answer line marks an answer
    (
        "So \\boxed{200}, then \\boxed{255}. Final Answer: The final answer is $10,455$.",
        "10,455",
        "final_statement",
    ),
    ("Final Answer: Jane started growing Sphere 3 hours ago.", "3", "answer_phrase"),
    ("Final Answer: at least 3 hours", "at least 3 hours", "answer_phrase"),
    ("Answer $ \\frac{1}{2} \\$ = 5 $", r"\frac{1}{2} \$ = 5", "answer_phrase"),
    ("Take $d = 90/n$ for each $n$. Therefore, there are 12 sequences.", "12", "conclusion"),
    ("Take $d = 90/n$. Therefore, there are 12 or 13 sequences.", "d = 90/n", "final_math"),
    ("The total is\n1 000", "1 000", "last_number"),
    ("I don't know.", None, "none"),
    ("", None, "none"),
]


@pytest.mark.parametrize(("text", "answer", "method"), EXTRACTIONS)
def test_extraction(text: str, answer: str | None, method: str) -> None:
    found = extract_answer(text)
    assert (found.answer, found.method) == (answer, method)
    assert found.problem is None


def test_strict_mode_accepts_only_a_box() -> None:
    assert extract_answer("The answer is 12.", strict=True).answer is None
    assert extract_answer(r"The answer is \boxed{12}.", strict=True).answer == "12"


def test_different_boxes_are_hedging() -> None:
    found = extract_answer(r"\boxed{3} or \boxed{4}")
    assert found.problem == "hedged" and set(found.candidates) == {"3", "4"}


def test_spacing_differences_are_not_hedging() -> None:
    assert extract_answer(r"\boxed{\dfrac{1}{2}} ... \boxed{ \frac{1}{2} }").problem is None


PROBLEMS = [
    # (completion, problem): no answer may be taken from these
    (r"We get $12$ and then we multi", "truncated"),
    (r"Substituting $x = 12$ into the second equation gives", "truncated"),
    (r"We try $1$, then $12$, and th", "truncated"),
    (r"So far $12$, hence $y = 12 + ", "truncated"),
    ("The first part gives 12 and the second part gives th", "truncated"),
    ("So we have 12, which we now divide by", "truncated"),
    ("Take $d = 90/n$ for each $n$. Therefore, there are 12 distinct seq", "truncated"),
    (r"\boxed{15}. The answer is 12.", "hedged"),
    (r"\boxed{15}. Final answer: $12$", "hedged"),
    (r"\boxed{15} or $12$", "hedged"),
    (r"\boxed{15} (or 12)", "hedged"),
    (r"\boxed{15}, or maybe 12", "hedged"),
    (r"\boxed{C}. The answer is D.", "hedged"),
    (r"\boxed{3\boxed{4}}", "hedged"),
    (r"\boxed{\boxed{3}\boxed{4}}", "hedged"),
    ("Final Answer: $3$ or $4$", "hedged"),
    ("It is either $3$ or $4$.", "hedged"),
    ("It is either 3 or 4.", "hedged"),
    (r"\boxed{}", "empty_box"),
    (r"\boxed{ \, }\boxed{\text{}}", "empty_box"),
    (r"<think>\boxed{5}</think>", "reasoning_only"),
    (r"<think>\boxed{5}</think> I am not sure.", "reasoning_only"),
    (r"<think>the answer is \boxed{5}", "reasoning_only"),
    (r"<reasoning>\boxed{5}</reasoning>", "reasoning_only"),
]


@pytest.mark.parametrize(("text", "problem"), PROBLEMS)
def test_problems_are_reported(text: str, problem: str) -> None:
    found = extract_answer(text)
    assert found.problem == problem, found
    if problem != "hedged":
        assert found.answer is None


def test_unbalanced_box_is_reported() -> None:
    found = extract_answer(r"the answer is \boxed{\frac{1}{2}")
    assert found.answer is None and found.problem == "unbalanced"


def test_escaped_braces_do_not_close_a_box() -> None:
    assert matching_braces(r"{\}}") == {0: 3}


@pytest.mark.parametrize(
    "text",
    [
        "x" * 1_000_000,
        "\\boxed{" * 100_000,
        "}" * 500_000 + "{" * 500_000,
        "$$" * 200_000,
        "\\[" * 300_000,
        "answer is " * 100_000,
        "\\boxed{1}" * 50_000,
        "\\boxed{1} " + "Final Answer: $" * 60_000,
        "Final Answer: $" + "\\$" * 400_000,
        "$x$ " + "Therefore 1. " * 70_000,
        "Final Answer: " + "3 hours " * 100_000,
    ],
    ids=[
        "plain",
        "open-boxes",
        "braces",
        "dollars",
        "display",
        "phrases",
        "many-boxes",
        "final-statements",
        "escaped-dollars",
        "conclusions",
        "prose-numbers",
    ],
)
def test_megabyte_inputs_end(text: str) -> None:
    # Linear scans: each of these returns (the test would hang, not fail, otherwise).
    found = extract_answer(text)
    methods = {"boxed", "final_statement", "answer_phrase", "conclusion", "final_math"}
    assert found.method in methods | {"last_number", "none"}
