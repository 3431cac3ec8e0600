"""Tables whose totals hold whatever the statement says earn nothing from `consistency`.

Before, with no PDF reference, a table of zeros (every total 0 = 0 + 0), a statement cut
to one entry and a "Total" equal to it, and a column copied three times (three checks
from one) all passed: a check that cannot fail counted like one that can. `audit --search`
finds the class with the relations ``finance/consistency_zeroed`` and
``finance/consistency_single_item`` (tests/cli/search_sets/finance_statements, budget 120,
seed 0, on the old verifier: 1.0 for zeros on all three rows)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from rewardsmith.verifiers.finance import Consistency
from rewardsmith.verifiers.finance.relations import consistency_relations
from rewardsmith.verifiers.types import Sample, Status

ROWS = Path(__file__).parents[2] / "cli" / "search_sets" / "finance_statements"
STATEMENTS = [json.loads(line) for line in (ROWS / "references.jsonl").read_text().splitlines()]
NEEDS_ONE = Consistency(min_checks=1)


def _table(*rows: str) -> str:
    header, *body = rows
    width = header.count("|") - 1
    return "\n".join([header, "|" + "---|" * width, *body])


ZEROS = _table("| Item | 2024 |", "| Revenue | 0 |", "| Cost | - |", "| Total | 0 |")
ONE_ENTRY = _table("| Item | 2024 |", "| Revenue | 100 |", "| Total | 100 |")
TOTALS_OF_ONE = _table("| Item | 2024 |", "| Total | 1 |", "| Total | 1 |", "| Total | 1 |")
COPIED = _table(
    "| Item | 2024 | 2024 | 2024 |",
    "| Revenue | 120 | 120 | 120 |",
    "| Total | 120 | 120 | 120 |",
)
WRONG_OF_ONE = _table("| Item | 2024 |", "| Total | 1 |", "| Total | 1 |", "| Total | 5 |")
RIGHT = _table(
    "| Item | 2024 | 2023 |",
    "| Revenue | 120 | 100 |",
    "| Cost | (20) | (30) |",
    "| Total | 100 | 70 |",
)


def _check(table: str, verifier: Consistency = NEEDS_ONE) -> tuple[Status, float | None]:
    verdict = verifier(Sample(id="t", completion=table))
    return verdict.status, verdict.score


@pytest.mark.parametrize("verifier", [Consistency(), NEEDS_ONE], ids=["min0", "min1"])
def test_a_table_of_zeros_fails(verifier: Consistency) -> None:
    assert _check(ZEROS, verifier) == (Status.FAIL, 0.0)


@pytest.mark.parametrize("table", [ONE_ENTRY, TOTALS_OF_ONE, COPIED])
def test_checks_that_cannot_fail_do_not_meet_the_minimum(table: str) -> None:
    assert _check(table) == (Status.FAIL, 0.0)


@pytest.mark.parametrize("table", [ONE_ENTRY, TOTALS_OF_ONE])
def test_with_no_minimum_they_are_nothing_to_check(table: str) -> None:
    assert _check(table, Consistency())[0] is Status.SKIP


def test_a_failed_check_fails_however_little_else_there_is() -> None:
    assert _check(WRONG_OF_ONE, Consistency()) == (Status.FAIL, 0.0)


def test_a_real_statement_still_passes() -> None:
    assert _check(RIGHT) == (Status.PASS, 1.0)
    for row in STATEMENTS:
        assert _check(row["completion"]) == (Status.PASS, 1.0), row["id"]


RELATIONS = {r.name: r for r in consistency_relations(None)}


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("name", sorted(RELATIONS))
@pytest.mark.parametrize("row", STATEMENTS, ids=lambda r: r["id"])
def test_each_relation_does_what_its_kind_says(row: dict, name: str, seed: int) -> None:
    relation = RELATIONS[name]
    made = relation.rewrite(Sample(id="r", completion=row["completion"]), random.Random(seed))
    if made is None:
        return
    status, score = _check(str(made.completion))
    if relation.kind == "preserving":
        assert (status, score) == (Status.PASS, 1.0), made.completion
    else:
        assert score == 0.0, made.completion
