"""GSM8K's answer line ("#### 72") marks an answer as "Answer:" does: a different value
after it is a second answer, a hedge that earns nothing, as after "Answer:". Before, a
value after the line was read as the answer ("#### 29\n\n30" paid a gold of 30 where
"Answer: 29\n\n30" paid nothing; found by the math_tool search, envhole)."""

from __future__ import annotations

import pytest

from rewardsmith.verifiers import Sample, create

CHECK = create("math")

ROWS = [
    ("#### 29\n\n30", "30", 0.0),  # before: 1.0
    ("#### 30\n\n29", "30", 0.0),
    ("#### 29\n\nSo the result is 30.", "30", 0.0),  # before: 1.0
    ("#### 30", "30", 1.0),
    ("Work: 10 + 20 = 30.\n#### 30", "30", 1.0),
    ("#### 30\n\nI checked: 10 + 20 = 30.", "30", 1.0),
    ("#### 30\n30", "30", 1.0),
    ("#### 72 dollars", "72", 1.0),
    ("#### \\text{no}", "no", 1.0),
    ("Answer: 29\n\n30", "30", 0.0),  # the reading it now matches
    ("## 29\n\n30", "30", 1.0),  # a Markdown heading is no answer line
]


@pytest.mark.parametrize(("completion", "gold", "score"), ROWS)
def test_gsm8k_answer_line_marks_an_answer(completion: str, gold: str, score: float) -> None:
    assert CHECK(Sample(id="g", completion=completion, reference=gold)).score == score
