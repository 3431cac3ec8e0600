"""Exploit-augmented preference pairs: train a reward model on the variants a policy would
try, so that what they add carries no signal.

A reward model learns whatever separates chosen from rejected. If no training pair shows a
bold heading, a restated question or "Verified." on *both* sides, those features are free
to move the score, and a policy finds them (`rewardsmith.reward_models.robustness` measures
how often). Each augmented pair keeps the truth of the original and varies only the form:

* a **dressing** (`exploits.DRESSINGS`: the same answer with something added) is put on
  the chosen answer, the rejected one, or both, picked at random per pair; the chosen
  stays chosen, so dressing is worth nothing either way;
* any other class (a *different* wrong answer, `exploits.CLASSES`) replaces the rejected
  answer: the right answer is preferred to it.

Which classes are used is the caller's choice, so that others can be held out of training
and the model's robustness measured on classes it never saw (``benchmarks/rm_augment.py``).

    >>> from rewardsmith.reward_models.data import PreferencePair
    >>> pair = PreferencePair("What is 2 plus 3?", "2 + 3 = 5. The answer is 5.",
    ...                       "2 + 3 = 6. The answer is 6.", reference="5")
    >>> extra = augment_pairs([pair], ["rm/markdown_bold"], seed=0)
    >>> len(extra), "**" in extra[0].chosen + extra[0].rejected
    (1, True)
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import replace

from rewardsmith.reward_models.data import PreferencePair
from rewardsmith.reward_models.exploits import CLASSES, DRESSINGS, Attack, correct_number
from rewardsmith.verifiers.types import Sample

__all__ = ["augment_pairs", "parse_classes"]

SIDES = ("chosen", "rejected", "both")


def parse_classes(text: str) -> list[str]:
    """A comma-separated list of class names ("rm/markdown_bold,rm/verbosity"), short names
    without the ``rm/`` prefix, or ``all``; unknown names are an error that lists the known."""
    if text.strip() == "all":
        return list(CLASSES)
    names = [n.strip() for n in text.split(",") if n.strip()]
    full = [n if n.startswith("rm/") else f"rm/{n}" for n in names]
    unknown = [n for n in full if n not in CLASSES]
    if unknown or not full:
        known = ", ".join(CLASSES)
        raise ValueError(f"unknown exploit classes {unknown or [text]}; known: {known}")
    return full


def augment_pairs(
    pairs: Sequence[PreferencePair],
    classes: Sequence[str],
    *,
    seed: int = 0,
    per_pair: int = 1,
    words: Sequence[str] = (),
) -> list[PreferencePair]:
    """`per_pair` augmented pairs for each of `pairs` (the originals are not included), each
    from one class of `classes` picked at random; a pair no class can vary adds nothing."""
    unknown = [c for c in classes if c not in CLASSES]
    if unknown or not classes:
        raise ValueError(f"unknown exploit classes {unknown}; known: {', '.join(CLASSES)}")
    rng = random.Random(seed)
    out: list[PreferencePair] = []
    for pair in pairs:
        for _ in range(per_pair):
            made = _augmented(pair, rng.choice(list(classes)), rng, words)
            if made is not None:
                out.append(made)
    return out


def _augmented(
    pair: PreferencePair, exploit_class: str, rng: random.Random, words: Sequence[str]
) -> PreferencePair | None:
    correct = _correct(pair)
    if exploit_class not in DRESSINGS:
        attack = _attack(pair, pair.rejected, correct, words)
        options = [text for _, text in CLASSES[exploit_class](attack)]
        return replace(pair, rejected=rng.choice(options)) if options else None
    side = rng.choice(SIDES)
    # One form index for both sides, so "both" dresses them alike.
    chosen_forms = _forms(exploit_class, _attack(pair, pair.chosen, correct, words))
    rejected_forms = _forms(exploit_class, _attack(pair, pair.rejected, correct, words))
    if not chosen_forms or not rejected_forms:
        return None
    k = rng.randrange(min(len(chosen_forms), len(rejected_forms)))
    chosen = chosen_forms[k] if side in ("chosen", "both") else pair.chosen
    rejected = rejected_forms[k] if side in ("rejected", "both") else pair.rejected
    return replace(pair, chosen=chosen, rejected=rejected)


def _forms(exploit_class: str, attack: Attack) -> list[str]:
    return [text for _, text in DRESSINGS[exploit_class](attack)]


def _attack(pair: PreferencePair, answer: str, correct: str | None, words: Sequence[str]) -> Attack:
    """The generators' input with `answer` in the place of the answer they dress."""
    own = tuple(dict.fromkeys(w.lower() for w in answer.split() if w.isalpha()))
    return Attack(pair.prompt.strip(), answer.strip(), correct, tuple(words) or own, pair.chosen)


def _correct(pair: PreferencePair) -> str | None:
    sample = Sample(id="pair", prompt=pair.prompt, completion=pair.chosen, reference=pair.reference)
    return correct_number(sample)
