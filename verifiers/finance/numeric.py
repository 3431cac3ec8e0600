"""Numeric answer: a model's figure against a gold figure, under a stated tolerance policy.

The policy, in the order it is tried:

1. **Same quantity**: ``|got - gold| <= max(rel_tol * |gold|, abs_tol)`` on absolute values
   (value × scale), so ``1.2 billion`` equals ``1,200 million`` equals ``1200000000``.
2. **FinQA-style rounding** (Chen et al. 2021, "FinQA: A Dataset of Numerical Reasoning over
   Financial Data"): a more precise answer passes when, rounded to the decimals the gold
   was written with (in the gold's scale), it equals the gold: gold ``12.35``, answer
   ``12.3456`` passes; answer ``12.3`` does not. Only for a gold written with at least
   `MIN_ROUNDED_DIGITS` significant digits: rounding to a gold of one digit ("0", "1",
   "3 million", "5%") would pass everything within half of that digit (49% for a gold 0,
   $1.49 billion for a gold of 1 billion), so such a gold is matched as a quantity only.
3. **Percent as ratio**: ``12.5%`` and ``0.125`` are the same answer (``percent_as_ratio``);
   ``25 bp`` is ``0.25%``.

Scale is reported separately and jointly, as in TAT-QA (Zhu et al. 2021): the evidence says
whether the digits match (``number_match``), whether the stated scale matches
(``scale_match``), and whether the quantity matches (``joint``). The score is the joint one,
unless ``scale_weight`` splits it: ``score = (1 - w)·number_match + w·scale_match`` for an
answer whose quantity is wrong.

    >>> from rewardsmith.verifiers.types import Sample
    >>> check = NumericAnswer()
    >>> check(Sample(id="1", completion="<answer>$1.2 billion</answer>",
    ...              reference={"answer": "1,200", "scale": "million"})).status
    <Status.PASS: 'pass'>
    >>> v = check(Sample(id="2", completion="Net loss: 4,500", reference="(4,500)"))
    >>> v.status, v.feedback
    (<Status.FAIL: 'fail'>, 'the sign is wrong: expected -4500, got 4500')
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

from rewardsmith.verifiers.exploits import Exploit
from rewardsmith.verifiers.finance.figures import (
    SCALE_WORDS,
    Figure,
    find_figures,
    is_year,
    parse_figure,
    restates,
    scale_from_header,
    scale_name,
)
from rewardsmith.verifiers.protocol import Cost
from rewardsmith.verifiers.types import Failure, Sample, Verdict

__all__ = [
    "HedgedAnswer",
    "NumericAnswer",
    "TolerancePolicy",
    "answer_figure",
    "gold_figure",
    "same_quantity",
    "tagged_answer",
]

MAX_ANSWER_CHARS = 100_000
_MAX_TAIL = 4_000
_SENTENCE = re.compile(r"(?<=[.;!?])\s+|\n+")
_WORDS = re.compile(r"\b[A-Za-z]{2,}\b(?<!thousand)(?<!million)(?<!billion)")
_RETRACTING = re.compile(
    r"\b(?:or|alternatively|otherwise|actually|wait|correction|rather|instead|i\s+mean|"
    r"possibly|perhaps|maybe|might|could|unless|however|answer)\b",
    re.IGNORECASE,
)
MIN_ROUNDED_DIGITS = 2
"""Significant digits a gold needs before answers that round to it pass (FinQA rounding)."""


def significant_digits(figure: Figure) -> int:
    """Digits written in `figure`, leading zeros aside: 3 for ``0.185``, 1 for ``3``, 0 for
    ``0`` (from its value and written decimals, so a float gold counts as it prints)."""
    digits = round(abs(figure.value) * 10**figure.decimals)
    return len(str(digits)) if digits else 0


@dataclass(frozen=True)
class TolerancePolicy:
    rel_tol: float = 1e-6
    """Relative tolerance on the absolute value."""
    abs_tol: float = 0.0
    """Absolute tolerance on the absolute value."""
    round_to_gold: bool = True
    """Accept a more precise answer that rounds to the gold (FinQA style)."""
    percent_as_ratio: bool = True
    """Treat 12.5% and 0.125 as the same answer."""

    def __post_init__(self) -> None:
        if self.rel_tol < 0 or self.abs_tol < 0:
            raise ValueError("rel_tol and abs_tol must be >= 0 (use 0 for exact comparison)")


def _candidates(got: Figure, gold: Figure, policy: TolerancePolicy) -> list[float]:
    """The model's absolute value, converted to the gold's unit where the policy allows."""
    value = got.absolute
    if got.unit == "bp":
        value, unit = value / 100, "%"
    else:
        unit = got.unit
    gold_unit = "%" if gold.unit in ("%", "bp") else ""
    if unit == "%" and gold_unit == "" and policy.percent_as_ratio:
        return [value / 100, value]
    if unit != "%" and gold_unit == "%" and policy.percent_as_ratio:
        return [value * 100, value]
    return [value]


def same_quantity(got: Figure, gold: Figure, policy: TolerancePolicy = TolerancePolicy()) -> bool:
    """True when `got` states the gold's quantity under `policy`."""
    target = gold.absolute / 100 if gold.unit == "bp" else gold.absolute
    for value in _candidates(got, gold, policy):
        tol = max(policy.rel_tol * abs(target), policy.abs_tol)
        if abs(value - target) <= tol:
            return True
        if policy.round_to_gold and gold.scale and significant_digits(gold) >= MIN_ROUNDED_DIGITS:
            rounded = round(value / gold.scale, gold.decimals) * gold.scale
            if math.isclose(rounded, target, rel_tol=1e-9, abs_tol=1e-12):
                return True
    return False


def gold_figure(reference: Any) -> Figure | None:
    """The gold as a `Figure`: a number, a string, or ``{"answer": ..., "scale": ...}``."""
    scale_word = ""
    if isinstance(reference, dict):
        scale_word = str(reference.get("scale") or "").strip().lower()
        reference = reference.get("answer")
    if isinstance(reference, bool):
        return None
    if isinstance(reference, int | float):
        figure: Figure | None = Figure(float(reference), decimals=_float_decimals(reference))
    elif isinstance(reference, str):
        figure = parse_figure(reference)
    else:
        return None
    if figure is None or not math.isfinite(figure.value):
        return None
    if scale_word:
        if scale_word == "percent":
            return Figure(figure.value, figure.scale, "%", figure.decimals, figure.text)
        if scale_word not in SCALE_WORDS:
            return None
        return Figure(
            figure.value,
            figure.scale * SCALE_WORDS[scale_word],
            figure.unit,
            figure.decimals,
            figure.text,
        )
    return figure


def _float_decimals(value: float) -> int:
    text = repr(float(value))
    return 0 if "e" in text or text.endswith(".0") else len(text.split(".")[1])


def tagged_answer(text: str) -> str | None:
    """The content of the last ``<answer>...</answer>``, found in linear time (a lazy regex
    is quadratic on thousands of unclosed tags)."""
    end = text.rfind("</answer>")
    start = text.rfind("<answer>", 0, end) if end >= 0 else -1
    return text[start + len("<answer>") : end] if start >= 0 else None


class HedgedAnswer(ValueError):
    """A marked answer offers several different figures ("122,445 or 150,239")."""

    def __init__(self, figures: list[str]) -> None:
        super().__init__(f"the answer offers several different figures: {', '.join(figures)}")
        self.figures = figures


def _amounts(span: str) -> list[Figure]:
    """The figures of `span`, its bare years left out when it states anything else ("122,445
    thousand in 2024" answers 122,445 thousand; "2024" alone answers 2024)."""
    figures = find_figures(span)
    amounts = [f for f in figures if not is_year(f)]
    return amounts or figures


def _stated_after(tail: str, figure: Figure) -> Figure | None:
    """A different amount stated after the marked answer, as a second answer or a
    retraction ("</answer> (or 150,239)", "</answer> Actually 150,239.", "Answer: ..."):
    in a sentence with a word that offers or retracts one, or with at most two other words.
    A percentage beside an amount, a year, or the same quantity again is not one."""
    for sentence in _SENTENCE.split(tail[:_MAX_TAIL]):
        others = [f for f in _amounts(sentence) if not is_year(f) and not restates(figure, f)]
        if others and (_RETRACTING.search(sentence) or len(_WORDS.findall(sentence)) <= 2):
            return others[0]
    return None


def answer_figure(text: str) -> Figure | None:
    """The model's figure: inside ``<answer>``, after "answer:", or the last one written.

    A scale stated after the figure ("1,200 (in thousands)") applies when the figure has none.
    A marked answer holding several different figures raises `HedgedAnswer` (restating the
    same quantity, "$1.2 billion (1,200 million)", is not a hedge; a year beside the amount
    is a date), and so does a different amount stated after it (`_stated_after`); free text
    is read for its last figure, so the reasoning before it may hold any numbers.
    """
    tagged = tagged_answer(text)
    marked = list(re.finditer(r"answer\s*(?:is)?\s*[:=]\s*([^\n]*)", text, re.IGNORECASE))
    span = tagged if tagged is not None else marked[-1].group(1) if marked else text[-2000:]
    figures = _amounts(span)
    if not figures:
        return None
    # A marked answer starts with its figure; free text ends with its conclusion.
    figure = figures[0] if tagged is not None or marked else figures[-1]
    if (tagged is not None or marked) and not all(restates(figure, f) for f in figures[1:]):
        raise HedgedAnswer([f.text for f in figures][:10])
    if tagged is not None or marked:
        end = text.rfind("</answer>") + len("</answer>") if tagged is not None else marked[-1].end()
        other = _stated_after(text[end:], figure)
        if other is not None:
            raise HedgedAnswer([figure.text, other.text])
    if figure.scale == 1.0:
        header_scale = scale_from_header(span)
        if header_scale != 1.0:
            return Figure(figure.value, header_scale, figure.unit, figure.decimals, figure.text)
    return figure


@dataclass(frozen=True)
class NumericAnswer:
    """Pass when the model's figure states the gold quantity under the tolerance policy."""

    name: ClassVar[str] = "numeric_answer"
    version: ClassVar[str] = "3"
    cost: ClassVar[Cost] = Cost.CHEAP
    takes_structured_reference: ClassVar[bool] = True  # JSON-text references are decoded

    policy: TolerancePolicy = TolerancePolicy()
    """How close is equal (tolerances, FinQA rounding, percent as ratio)."""
    scale_weight: float = 0.0
    """Share of the score given to the scale alone when the quantity is wrong (TAT-QA's
    separate scale score); 0 scores only the joint match."""

    def __post_init__(self) -> None:
        if not 0.0 <= self.scale_weight <= 1.0:
            raise ValueError("scale_weight must be in [0, 1]")

    def __call__(self, sample: Sample) -> Verdict:
        gold = gold_figure(sample.reference)
        if gold is None:
            return Verdict.errored(
                self.name,
                self.version,
                Failure.BAD_REFERENCE,
                "numeric_answer needs `reference`: a number, a figure string, or "
                '{"answer": ..., "scale": "thousand|million|billion|percent"}',
            )
        text = sample.completion_text
        if len(text) > MAX_ANSWER_CHARS:
            return Verdict.failed(
                self.name,
                self.version,
                Failure.INPUT_TOO_LARGE,
                feedback=f"answer longer than {MAX_ANSWER_CHARS} characters",
            )
        try:
            got = answer_figure(text)
        except HedgedAnswer as hedge:
            return Verdict.failed(
                self.name, self.version, evidence={"hedged": hedge.figures}, feedback=str(hedge)
            )
        if got is None:
            return Verdict.failed(
                self.name, self.version, Failure.FORMAT, feedback="no figure found in the answer"
            )
        return self._grade(got, gold)

    def exploits(self, sample: Sample) -> Iterator[Exploit]:
        """Wrong scale, lost sign and hedged variants of a right answer."""
        from rewardsmith.verifiers.finance.exploits import figure_exploits

        yield from figure_exploits(sample)

    def _grade(self, got: Figure, gold: Figure) -> Verdict:
        joint = same_quantity(got, gold, self.policy)
        number = math.isclose(abs(got.value), abs(gold.value), rel_tol=1e-9) or same_quantity(
            Figure(got.value, 1.0, got.unit, got.decimals),
            Figure(gold.value, 1.0, gold.unit, gold.decimals),
            self.policy,
        )
        scale = got.scale == gold.scale
        evidence = {
            "answer": got.text,
            "answer_value": got.absolute,
            "gold_value": gold.absolute,
            "number_match": number,
            "scale_match": scale,
            "joint": joint,
            "answer_scale": scale_name(got.scale),
            "gold_scale": scale_name(gold.scale),
        }
        if joint:
            return Verdict.passed(self.name, self.version, evidence=evidence)
        feedback = self._why(got, gold, number)
        number_ok = number and got.value * gold.value >= 0
        w = self.scale_weight
        score = 0.0 if w == 0 else (1 - w) * number_ok + w * scale
        return Verdict.graded(
            self.name, self.version, min(score, 0.999), evidence=evidence, feedback=feedback
        )

    def _why(self, got: Figure, gold: Figure, number: bool) -> str:
        flipped = Figure(-got.value, got.scale, got.unit, got.decimals)
        if got.value and same_quantity(flipped, gold, self.policy):
            return f"the sign is wrong: expected {gold.absolute:g}, got {got.absolute:g}"
        if number and got.scale != gold.scale:
            return (
                f"the scale is wrong: {scale_name(got.scale) or 'units'} given, "
                f"{scale_name(gold.scale) or 'units'} expected"
            )
        return f"expected {gold.absolute:g}, got {got.absolute:g}"
