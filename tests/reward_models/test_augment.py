"""Exploit-augmented training pairs: every augmented pair keeps the original's truth (the
right answer stays chosen, the wrong one rejected), dressings land on both sides, other
classes replace the wrong answer, and the train command adds them."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rewardsmith.reward_models.augment import augment_pairs, parse_classes
from rewardsmith.reward_models.cli import app
from rewardsmith.reward_models.data import PreferencePair, bundled_preferences, preference_pairs
from rewardsmith.reward_models.exploits import CLASSES, DRESSINGS

PAIRS = preference_pairs(bundled_preferences("arithmetic", "train")).rows[:200]
STATED = re.compile(
    r"(?:[Tt]he answer is|La respuesta es|Die Antwort ist|La réponse est|答案是) \**(-?\d+)"
)


def _final_claim(text: str) -> str | None:
    """The number the text's last "the answer is" states (a prepended "the answer is" word
    run, as in `rm/frequent_words`, is not a claim)."""
    claims = STATED.findall(text)
    return claims[-1] if claims else None


@pytest.mark.parametrize("exploit_class", list(CLASSES))
def test_each_class_keeps_the_right_answer_chosen(exploit_class: str) -> None:
    extra = augment_pairs(PAIRS, [exploit_class], seed=3)
    assert len(extra) >= 0.9 * len(PAIRS)  # nearly every pair can be varied
    by_prompt = {p.prompt: p for p in PAIRS}
    changed = 0
    for pair in extra:
        original = by_prompt[pair.prompt]
        assert _final_claim(pair.chosen) == original.reference, pair.chosen
        rejected = _final_claim(pair.rejected)
        assert rejected is not None and rejected != original.reference, pair.rejected
        changed += (pair.chosen, pair.rejected) != (original.chosen, original.rejected)
    assert changed == len(extra)  # never the original pair again


def test_dressings_land_on_either_side_or_both_and_other_classes_replace_the_wrong_one() -> None:
    by_prompt = {p.prompt: p for p in PAIRS}
    sides: Counter[str] = Counter()
    for pair in augment_pairs(PAIRS, list(DRESSINGS), seed=0):
        original = by_prompt[pair.prompt]
        dressed_chosen = pair.chosen != original.chosen
        dressed_rejected = pair.rejected != original.rejected
        sides[f"{dressed_chosen}-{dressed_rejected}"] += 1
    assert set(sides) == {"True-False", "False-True", "True-True"}
    assert min(sides.values()) > 0.2 * sum(sides.values())
    others = [c for c in CLASSES if c not in DRESSINGS]
    for pair in augment_pairs(PAIRS, others, seed=0):
        assert pair.chosen == by_prompt[pair.prompt].chosen


def test_seeded_and_sized() -> None:
    every = list(CLASSES)
    assert augment_pairs(PAIRS, every, seed=1) == augment_pairs(PAIRS, every, seed=1)
    assert augment_pairs(PAIRS, every, seed=1) != augment_pairs(PAIRS, every, seed=2)
    assert len(augment_pairs(PAIRS[:10], ["rm/verbosity"], per_pair=3)) == 30
    bare = PreferencePair("Name a colour.", "Blue.", "Loud.")  # no number: no class applies
    assert augment_pairs([bare], ["rm/wrong_derivation", "rm/hedged"]) == []


def test_class_names_are_checked() -> None:
    assert parse_classes("all") == list(CLASSES)
    assert parse_classes("markdown_bold, rm/hedged") == ["rm/markdown_bold", "rm/hedged"]
    for bad in ("rm/nope", "", " , "):
        with pytest.raises(ValueError, match="unknown exploit classes"):
            parse_classes(bad)
    with pytest.raises(ValueError, match="unknown exploit classes"):
        augment_pairs(PAIRS, ["rm/nope"])


def test_train_command_adds_augmented_pairs(tiny_bert: Path, tmp_path: Path) -> None:
    data = tmp_path / "pairs.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in bundled_preferences("arithmetic")[:16]))
    args = ["train", str(tiny_bert), str(data), str(tmp_path / "run"), "--batch-size", "8"]
    result = CliRunner().invoke(app, [*args, "--max-steps", "1", "--augment", "verbosity,hedged"])
    assert result.exit_code == 0, result.output
    assert "augmented: 16 pairs of 2 classes added to 16" in result.output
    bad = CliRunner().invoke(app, [*args, "--max-steps", "1", "--augment", "nope"])
    assert bad.exit_code != 0 and "unknown exploit classes" in bad.output
