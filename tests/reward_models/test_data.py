"""Preference rows: each kind of bad input handled as the module table documents."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rewardsmith.reward_models.data import (
    MissingColumnError,
    as_text,
    bundled_preferences,
    pointwise_examples,
    preference_pairs,
    read_rows,
    step_examples,
)

GOOD = {"prompt": "2+2?", "chosen": "4", "rejected": "5"}


@pytest.mark.parametrize(
    ("row", "reason"),
    [
        ({"prompt": "2+2?", "chosen": "4", "rejected": "4"}, "identical"),
        ({"prompt": "2+2?", "chosen": "", "rejected": "5"}, "empty_chosen"),
        ({"prompt": "2+2?", "chosen": "  \n", "rejected": "5"}, "empty_chosen"),
        ({"prompt": "2+2?", "chosen": None, "rejected": "5"}, "not_text"),
        ({"prompt": "2+2?", "chosen": 4, "rejected": "5"}, "not_text"),
        ({"prompt": 7, "chosen": "4", "rejected": "5"}, "not_text"),
        ({"prompt": "2+2?", "rejected": "5"}, "missing_field"),
        ({**GOOD, "margin": float("nan")}, "bad_number"),
        ({**GOOD, "margin": "big"}, "bad_number"),
        ({"__error__": "f.jsonl:3: not JSON"}, "unreadable: f.jsonl:3: not JSON"),
    ],
)
def test_bad_rows_are_skipped_with_a_reason(row: dict, reason: str) -> None:
    loaded = preference_pairs([GOOD, row, GOOD])
    assert len(loaded.rows) == 2
    assert [(s.index, s.reason) for s in loaded.skipped] == [(1, reason)]


def test_empty_rejected_is_a_legitimate_bad_answer() -> None:
    loaded = preference_pairs([{"prompt": "2+2?", "chosen": "4", "rejected": ""}])
    assert loaded.rows[0].rejected == "" and not loaded.skipped


@pytest.mark.parametrize("missing", ["chosen", "rejected"])
def test_missing_column_names_it_and_the_fix(missing: str) -> None:
    rows = [{k: v for k, v in GOOD.items() if k != missing}]
    with pytest.raises(MissingColumnError, match=f"'{missing}'.*columns="):
        preference_pairs(rows)


def test_missing_prompt_column_means_an_implicit_prompt() -> None:
    assert preference_pairs([{"chosen": "4", "rejected": "5"}]).rows[0].prompt == ""


def test_column_mapping_margin_and_subset() -> None:
    row = {"q": "2+2?", "a": "4", "b": "5", "m": 1.5, "subset": "math"}
    pair = preference_pairs([row], {"prompt": "q", "chosen": "a", "rejected": "b", "margin": "m"})
    assert pair.rows[0] == pair.rows[0].__class__("2+2?", "4", "5", 1.5, "math")


def test_chat_messages_become_their_assistant_turns() -> None:
    chosen = [{"role": "user", "content": "2+2?"}, {"role": "assistant", "content": "4"}]
    rejected = [{"role": "user", "content": "2+2?"}, {"role": "assistant", "content": "5"}]
    pair = preference_pairs([{"chosen": chosen, "rejected": rejected}]).rows[0]
    assert (pair.chosen, pair.rejected) == ("4", "5")
    assert as_text([{"role": "assistant", "content": None}]) is None


def test_hugging_face_dataset_in() -> None:
    from datasets import Dataset

    data = Dataset.from_list([GOOD, {**GOOD, "rejected": "4"}])
    loaded = preference_pairs(data)
    assert len(loaded.rows) == 1 and loaded.skipped[0].reason == "identical"
    with pytest.raises(MissingColumnError):
        preference_pairs(data.remove_columns("chosen"))


def test_jsonl_parquet_and_saved_dataset_read_the_same(tmp_path: Path) -> None:
    from datasets import Dataset

    lines = [json.dumps(GOOD), "{not json", "[1, 2]", json.dumps({**GOOD, "chosen": "four"})]
    (tmp_path / "p.jsonl").write_text("\n".join(lines) + "\n")
    loaded = preference_pairs(read_rows(tmp_path / "p.jsonl"))
    assert [p.chosen for p in loaded.rows] == ["4", "four"]
    assert [s.index for s in loaded.skipped] == [1, 2]
    assert "p.jsonl:2" in loaded.skipped[0].reason
    Dataset.from_list([GOOD]).to_parquet(str(tmp_path / "p.parquet"))
    Dataset.from_list([GOOD]).save_to_disk(str(tmp_path / "saved"))
    for source in ("p.parquet", "saved"):
        assert preference_pairs(read_rows(tmp_path / source)).rows[0].chosen == "4"


def test_pointwise_and_step_rows() -> None:
    points = pointwise_examples(
        [{"completion": "4", "label": True}, {"completion": "5", "label": 2.0}]
    )
    assert [e.label for e in points.rows] == [1.0] and points.skipped[0].reason == "bad_number"
    steps = step_examples(
        [
            {"prompt": "q", "steps": ["a", "b"], "labels": [1, 0]},
            {"prompt": "q", "steps": ["a", "b"], "labels": [1]},
            {"prompt": "q", "steps": [], "labels": []},
        ]
    )
    assert steps.rows[0].labels == (1.0, 0.0)
    assert [s.reason for s in steps.skipped] == ["labels_do_not_match_steps"] * 2


def test_bundled_arithmetic_set_is_correct_and_split() -> None:
    from rewardsmith.datasets.preferences.generate_arithmetic import check, rows

    shipped = bundled_preferences("arithmetic")
    assert shipped == rows(0)  # the file is exactly what the generator makes
    assert len(bundled_preferences("arithmetic", "test")) == len(shipped) // 5
    words = {"plus": "+", "minus": "-", "times": "*"}
    for row in shipped:
        _, _, a, op, b = row["prompt"].rstrip("?").split()
        problem = (int(a), words[op], int(b))
        assert check(problem, row["chosen"]) and not check(problem, row["rejected"])
    assert {r["subset"] for r in shipped} == {"off_by_small", "magnitude", "sign", "wrong_operand"}


def test_bundled_length_set_is_correct_and_length_is_no_clue() -> None:
    """The verbosity set: exact truth, every subset present, length independent of truth."""
    from rewardsmith.datasets.preferences.generate_lengths import FINAL, length_subset, rows

    shipped = bundled_preferences("arithmetic_lengths")
    assert shipped == rows(1)
    for row in shipped:
        stated = [int(FINAL.search(row[k]).group(1)) for k in ("chosen", "rejected")]
        assert stated[0] == int(row["reference"]) != stated[1]
        assert row["subset"] == length_subset(row["chosen"], row["rejected"])
    by_subset = {
        s: sum(r["subset"] == s for r in shipped) for s in ("chosen_longer", "chosen_shorter")
    }
    assert min(by_subset.values()) > 0.8 * max(by_subset.values())  # neither length wins often
    assert len({len(r["chosen"]) for r in shipped}) > 15  # 4 styles times many numbers


def test_bundled_chain_set_is_what_the_generator_makes_and_labels_follow_the_error() -> None:
    from rewardsmith.datasets.steps.generate_chains import rows
    from rewardsmith.reward_models.data import bundled_steps

    shipped = bundled_steps("arithmetic_chains")
    assert shipped == rows(0)
    for row in shipped:
        k = row["error_step"]
        expected = (
            [1.0] * len(row["steps"])
            if k is None
            else [float(j < k) for j in range(len(row["steps"]))]
        )
        assert row["labels"] == expected and (k is None) == (row["subset"] == "right")
    positions = {r["error_step"] for r in shipped if r["error_step"] is not None}
    assert positions == {0, 1, 2, 3, 4}  # errors at every position, not only late ones
