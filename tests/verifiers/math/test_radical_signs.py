"""A radical sign takes its whole radicand: "√15" is the root of 15. Before, "√" became TeX's
`\\sqrt ` with no braces, which takes one digit (`\\sqrt 15` is √1 then 5): "3√15" paid a
gold of 15 (found by the bundled search, seed 7: `math/gold_in_a_term`), and "√15" failed a
gold of √15."""

from __future__ import annotations

import pytest

from rewardsmith.verifiers import Sample, create

CHECK = create("math")

ROWS = [
    ("3√15", "15", 0.0),  # before: 1.0
    ("That gives 3√15.", "15", 0.0),  # before: 1.0
    ("√16", "16", 0.0),
    ("3√5", "15", 0.0),
    ("√15", "\\sqrt{15}", 1.0),  # before: 0.0
    ("3√15", "3\\sqrt{15}", 1.0),  # before: 0.0
    ("∛27", "3", 1.0),  # before: 0.0
    ("∜16", "2", 1.0),
    ("√(x+1)", "\\sqrt{x+1}", 1.0),
    ("2√2", "\\sqrt{8}", 1.0),
    ("√16", "4", 1.0),
    ("√2", "\\sqrt{2}", 1.0),
    ("√12.5", "\\sqrt{12.5}", 1.0),
    ("√ 3", "\\sqrt{3}", 1.0),
]


@pytest.mark.parametrize(("completion", "gold", "score"), ROWS)
def test_a_radical_sign_takes_its_whole_radicand(completion: str, gold: str, score: float) -> None:
    assert CHECK(Sample(id="r", completion=completion, reference=gold)).score == score
