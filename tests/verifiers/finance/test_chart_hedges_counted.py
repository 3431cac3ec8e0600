"""A chart claim that offers several figures for one value is a hedge that fails; it is
never dropped as a vacuous denial. Before, the hedge's claim was built with its fields out of
place (the scale landed in `negated`), so it read as a denial and was not counted, and the
sentences around it paid 1.0 (found by the bundled search, seed 20: `Revenue in 2021 was
[151,] not 886.` beside true claims). A hedged denial of a figure the chart shows is false
too; one of a figure it does not show ("maybe not 886") stays vacuous."""

from __future__ import annotations

from pathlib import Path

import pytest

from rewardsmith.verifiers import Sample
from rewardsmith.verifiers.finance.chart_claims import ChartClaims

CHART = {
    "pdf": str(Path(__file__).resolve().parents[3] / "datasets/finance/charts/grouped_bars.pdf"),
    "page": 1,
}
TRUE = " Operating costs rose from 2019 to 2023."
ROWS = [
    ("Revenue peaked in 2023. Revenue in 2021 was [151,] not 886." + TRUE, 0.0),  # before: 1.0
    ("Revenue in 2021 was 151 / 886." + TRUE, 0.0),  # before: 1.0
    ("Revenue in 2021 was 151 886." + TRUE, 0.0),
    ("Revenue in 2021 was maybe not 151." + TRUE, 0.0),  # before: 1.0
    ("Revenue in 2021 was maybe not 886." + TRUE, 1.0),
    ("Revenue in 2021 was 151, not 886." + TRUE, 1.0),
    ("Revenue in 2021 was 151." + TRUE, 1.0),
]


@pytest.mark.parametrize(("completion", "score"), ROWS)
def test_a_hedged_chart_value_is_counted(completion: str, score: float) -> None:
    assert ChartClaims()(Sample(id="c", completion=completion, reference=CHART)).score == score


def test_the_relation_offers_a_second_value_and_the_claims_earn_nothing() -> None:
    """`finance/chart_second_value` (changing) is how `audit --search` finds this class."""
    import random

    from rewardsmith.verifiers.finance.claim_relations import chart_relations

    check = ChartClaims()
    relation = next(r for r in chart_relations(check) if r.name == "finance/chart_second_value")
    right = Sample(id="r", completion="Revenue in 2021 was 151." + TRUE, reference=CHART)
    assert check(right).score == 1.0
    for seed in range(12):
        new = relation.rewrite(right, random.Random(seed))
        assert new is not None and check(new).score == 0.0, new.completion
