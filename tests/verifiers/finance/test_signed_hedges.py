"""Two figures offered with "or" in free text are compared with the signs their words give
them: "a loss of $289 thousand, or 289 thousand" offers -289 and 289 thousand, a hedge, and
a figure of no known sign ("▲$289 thousand", "[289]") offered beside another is one too.
Two answers (tags, an "answer:" line) are compared signed as well, and a sign word may follow
a currency word ("$289 thousand dollars negative"; seeds 14 and 17).
Before, the earlier figure was compared unsigned, and a sign word after it ("289 thousand
negative, or ...") hid the "or": the bundled search chained `finance/negative_after` then
`finance/hedge_in_free_text` to 1.0 (seed 9)."""

from __future__ import annotations

import pytest

from rewardsmith.verifiers import Sample, create

CHECK = create("numeric_answer")
GAIN = {"answer": "289", "scale": "thousand", "currency": "USD"}
LOSS = {"answer": "-289", "scale": "thousand", "currency": "USD"}

ROWS = [
    ("It is $289 thousand negative, or 289 thousand.", GAIN, 0.0),  # before: 1.0
    ("It is $289 thousand (negative), or 289 thousand.", GAIN, 0.0),  # before: 1.0
    ("It is a loss of $289 thousand, or 289 thousand.", GAIN, 0.0),  # before: 1.0
    ("It is $289 thousand lower, or 289 thousand.", GAIN, 0.0),  # before: 1.0
    ("It is ▲$289 thousand, or 289 thousand.", GAIN, 0.0),  # before: 1.0 (seed 9 again)
    ("It is [289] thousand, or 289 thousand.", GAIN, 0.0),
    ("<answer>$289 thousand dollars negative</answer>", GAIN, 0.0),  # before: 1.0
    ("<answer>$289 thousand (negative)</answer>\n<answer>289 thousand</answer>", GAIN, 0.0),
    ("Answer: $289 thousand negative\n<answer>289 thousand</answer>", GAIN, 0.0),
    ("<answer>$289 thousand dollars negative</answer>", LOSS, 1.0),
    ("<answer>-$289 thousand</answer>\n<answer>289 thousand (negative)</answer>", LOSS, 1.0),
    ("It is $289 thousand, or $289 thousand.", GAIN, 1.0),
    ("It is $289 thousand, or 289,000 dollars.", GAIN, 1.0),
    ("It is $289 thousand negative.", LOSS, 1.0),
    ("It is $289 thousand negative, or -289 thousand.", LOSS, 1.0),
    ("It is a loss of $289 thousand, or a loss of 289 thousand.", LOSS, 1.0),
]


@pytest.mark.parametrize(("completion", "gold", "score"), ROWS)
def test_figures_offered_with_or_are_compared_signed(
    completion: str, gold: dict[str, str], score: float
) -> None:
    assert CHECK(Sample(id="h", completion=completion, reference=gold)).score == score
