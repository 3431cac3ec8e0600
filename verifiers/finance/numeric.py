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
   ``25 bp`` is ``0.25%``. A percent sign on a ratio is read as a percentage: ``0.815%``
   is 0.00815, never the ratio 0.815.

The answer is read with `quantities` (the reading every finance verifier shares): "122 445
thousand" is one figure, "(899) thousand" and "a loss of 899 thousand" are -899 thousand,
"a decrease of 18.5%" and "fell 18.5%" are -18.5% (unless the question itself asks for the
size of a loss or a decrease), a bare figure takes the scale the question declares ("in
thousands?"), and a currency other than the gold's (``"currency"`` in the reference, or
its symbol) fails. The answer is one figure: two ``<answer>`` tags with different figures,
a hedge in words inside the answer ("or", "maybe", "probably", "not sure"), or a
different amount anywhere after the closing tag fail as hedges.

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
    >>> v = check(Sample(id="2", completion="Net income: 4,500", reference="(4,500)"))
    >>> v.status, v.feedback
    (<Status.FAIL: 'fail'>, 'the sign is wrong: expected -4500, got 4500')
    >>> check(Sample(id="3", completion="A net loss of 4,500", reference="(4,500)")).status
    <Status.PASS: 'pass'>
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

from rewardsmith.verifiers.exploits import Exploit
from rewardsmith.verifiers.finance.figures import (
    SCALE_WORDS,
    Figure,
    find_figure_spans,
    find_figures,
    is_garbled,
    is_year,
    parse_figure,
    restates,
    scale_from_header,
    scale_name,
    sign_unknown,
    without_denied,
)
from rewardsmith.verifiers.finance.grounding_ties import PRIOR_LABEL, figure_years, named_years
from rewardsmith.verifiers.finance.quantities import (
    currency_of,
    model_text,
    negative_after,
    negative_in_words,
    sign_words_after,
    stated_scale,
)
from rewardsmith.verifiers.protocol import Cost
from rewardsmith.verifiers.types import Failure, Sample, Verdict

__all__ = [
    "HedgedAnswer",
    "NumericAnswer",
    "OtherPeriod",
    "StackedScale",
    "TolerancePolicy",
    "answer_figure",
    "answer_lines",
    "gold_figure",
    "same_quantity",
    "tagged_answer",
]

MAX_ANSWER_CHARS = 100_000
_HEDGE_WORDS = re.compile(
    r"\b(?:alternatively|otherwise|maybe|perhaps|possibly|probably|likely|might|"
    r"could|unless|guess|unsure|not\s+sure|uncertain|somewhere|between|unverified|not|"
    r"wrong|incorrect|inaccurate|kidding|joking|"
    r"(?:less|more|fewer|greater)\s+than|at\s+(?:least|most)|up\s+to|or\s+(?:more|less)|"
    r"nearly|almost|give\s+or\s+take|plus\s+or\s+minus)\b"
    r"|\?|±|\+\s*/\s*-|\+-",
    re.IGNORECASE,
)
"""Words that make a figure a bound, a range or a guess rather than the answer (an
approximation, "about", "approximately", "~", is not one; "or" between two figures is a
hedge only when they differ, which the figures say)."""
_POINTS = re.compile(r"percentage\s+points?|\bp\.?p\.?\b|\bppts?\b", re.IGNORECASE)
COUNT_UNITS = re.compile(
    r"\b(?:shares|units|customers|clients|employees|people|staff|tonnes|tons|barrels|users|"
    r"subscribers|stores|items|vehicles|contracts|transactions|kg|km|mwh|gwh|hours|days)\b",
    re.IGNORECASE,
)
_ZERO = re.compile(r"^\s*(?:[-–—]|nil|none|zero)\s*\.?\s*$", re.IGNORECASE)
_MAGNITUDE_ASKED = re.compile(
    r"\b(?:loss(?:es)?|deficit|decrease|decline|drop|fall|reduction|shortfall|outflow)\b"
    r"|how\s+much\s+did\s+.{0,60}\b(?:fall|decline|decrease|drop)",
    re.IGNORECASE,
)
_MAX_TAGS = 50
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
        return [value / 100]  # "0.815%" is 100 times smaller than the ratio 0.815
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
        if policy.round_to_gold and _restated_coarser(got, target):
            return True
    return False


def _restated_coarser(got: Figure, target: float) -> bool:
    """ "$122.4 million" for 122,445 thousand: a scale-word restatement of three or more
    significant digits that the gold rounds to at the answer's precision."""
    if got.scale == 1.0 or got.unit in ("%", "bp") or significant_digits(got) < 3:
        return False
    return abs(target / got.scale - got.value) <= 0.5 * 10.0**-got.decimals * (1 + 1e-9)


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
    """The content of the last ``<answer>...</answer>`` (in any letter case), found in
    linear time (a lazy regex is quadratic on thousands of unclosed tags)."""
    tags = all_tagged(text)
    return tags[-1] if tags else None


class HedgedAnswer(ValueError):
    """A marked answer offers several different figures ("122,445 or 150,239")."""

    def __init__(self, figures: list[str]) -> None:
        super().__init__(f"the answer offers several different figures: {', '.join(figures)}")
        self.figures = figures


class StackedScale(HedgedAnswer):
    """A figure with a second scale word after its own ("117,999 thousand million",
    "118 million million"): which quantity it states is not written, so it states none."""

    def __init__(self, figure: str, extra: str) -> None:
        ValueError.__init__(
            self, f"the figure {figure!r} has a second scale after it ({extra!r}): ambiguous"
        )
        self.figures = [figure, extra]


class OtherPeriod(HedgedAnswer):
    """Free text gives each of its figures for another year than the one asked ("2024:
    150,239; 2023: 122,445" for a 2024 question answers no 2024 figure with 122,445)."""

    def __init__(self, figure: str, year: int, asked: set[int]) -> None:
        ValueError.__init__(
            self,
            f"the figure {figure!r} is given for {year}, the question asks about "
            f"{', '.join(map(str, sorted(asked)))}",
        )
        self.figures = [figure, str(year)]


# A scale word right after a figure that has its own ("thousand (of) million").
_SECOND_SCALE = re.compile(
    r"\s*(?:of\s+)?(thousands?|millions?|billions?|trillions?|mln|mio|mn|mm|bln|bn|tn|k|m|b)\b",
    re.IGNORECASE,
)


def _signed_amounts(span: str) -> list[Figure]:
    """`_amounts` of `span`, each with the sign its words give it ("159 thousand (negative)")."""
    spans = [(f, start) for f, start, _ in find_figure_spans(span)]
    amounts = [(f, start) for f, start in spans if not is_year(f)] or spans
    return [_signed(span, f, start, False) for f, start in amounts]


def _amounts(span: str) -> list[Figure]:
    """The figures of `span`, its bare years left out when it states anything else ("122,445
    thousand in 2024" answers 122,445 thousand; "2024" alone answers 2024)."""
    figures = find_figures(span)
    amounts = [f for f in figures if not is_year(f)]
    return amounts or figures


_OFFERED = re.compile(
    r"\b(?:or|also|too|alternatively|actually|instead|rather|could|might|maybe|perhaps|"
    r"possibly|plausible|wait|correction|answer|otherwise|either)\b|\?",
    re.IGNORECASE,
)
_CITE = re.compile(
    r"[(\[]?\b(?:p\.|pp\.|pg\.|page|source|note|notes|section|table|figure|fig\.|exhibit|"
    r"item|chapter|line|footnote|appendix|schedule)[:\s]*\d{1,5}[a-z]?\b[)\]]?",
    re.I,
)


_RETRACTED = re.compile(
    r"\b(?:wrong|incorrect|inaccurate|kidding|joking|unverified|unsure|uncertain|"
    r"not\s+(?:right|correct|accurate|sure|certain|confident)|(?:a|my|wild|rough)\s+guess|"
    r"disregard|retract|scratch\s+that)\b|n't\s+(?:be\s+)?(?:right|correct|sure|certain)",
    re.IGNORECASE,
)
"""Words after the answer that take it back or doubt it ("That is wrong.", "Just
kidding.", "(unverified guess)"): the answer is then not stated, whatever figure it holds."""
_GENERIC = frozenset(
    re.findall(
        r"[a-z]+",
        "the it its this that these is was were are be been being so thus hence therefore "
        "value figure amount number answer result total correct right true actual actually "
        "reported final exact exactly approximately about roughly which equals equal comes "
        "for year period fiscal and dollars dollar usd thousand thousands million millions "
        "billion billions",
    )
)
"""Words that say nothing about which quantity a figure is ("It is X", "The correct value
is X"): a sentence of only these and the question's own words restates the answer."""


def _stated_after(tail: str, figure: Figure, question: str = "") -> Figure | None:
    """A different amount offered after the marked answer as a second answer or a
    retraction ("</answer> Though 150,239 is also plausible", "Actually 150,239", a bare
    "(150,239)", "It is 150,239."): in a sentence with a word that offers or retracts one,
    with at most two other words, or with no word that names another quantity than the
    question's and no year. Context ("For comparison, 2023 revenue was 150,239", "Cost of
    sales was 44,943"), a page cite, a percentage beside an amount, a year, or the same
    quantity again is not one. The whole tail is read (the answer is capped at
    `MAX_ANSWER_CHARS`), so padding cannot push a second answer out of sight."""
    asked = set(re.findall(r"[a-z]{2,}", question.lower()))
    for sentence in re.split(r"(?<=[.;!])\s+|\n+", _CITE.sub(" ", tail)):
        others = [
            f
            for f in _amounts(sentence)
            if not is_year(f) and not restates(figure, f) and not _same_digits(figure, f)
        ]
        if not others:
            continue
        words = re.findall(r"\b[A-Za-z]{2,}\b", sentence)
        named = [w for w in words if w.lower() not in _GENERIC and w.lower() not in asked]
        has_year = any(is_year(f) for f in find_figures(sentence))
        if _OFFERED.search(sentence) or len(words) <= 2 or not (named or has_year):
            return others[0]
    return None


def _same_digits(answer: Figure, other: Figure) -> bool:
    """`other` repeats the answer bare, in the answer's scale or in a page's ("<answer>117,999
    thousand</answer> Revenue was 117,999 (p. 2)"; "<answer>5.23 million</answer>
    Borrowings were 5,230 (p. 3)", a page in thousands): the same figure, not a second one."""
    if other.scale != 1.0 or other.unit not in ("", answer.unit):
        return False
    if other.value == answer.value:
        return True
    return any(
        math.isclose(other.value * scale, answer.absolute, rel_tol=1e-9)
        for scale in (1e3, 1e6, 1e9)
    )


_OPEN_TAG = re.compile(r"<answer>", re.IGNORECASE)
_CLOSE_TAG = re.compile(r"</answer>", re.IGNORECASE)
_TAGGED = re.compile(r"<answer>.*?(?:</answer>|$)", re.IGNORECASE | re.DOTALL)
"""A tag in any letter case: ``<ANSWER>`` is as much an answer to a reader as ``<answer>``,
so a second answer cannot hide in it."""


def all_tagged(text: str) -> list[str]:
    """The contents of every ``<answer>...</answer>`` (any letter case), in order (linear
    time: each search starts where the last one ended)."""
    out, at = [], 0
    while (start := _OPEN_TAG.search(text, at)) is not None:
        end = _CLOSE_TAG.search(text, start.end())
        if end is None:
            break
        out.append(_json_as_text(text[start.end() : end.start()]))
        at = end.end()
    return out[:_MAX_TAGS]


_UNIT_KEYS = frozenset(("unit", "units", "scale", "currency"))


def _json_as_text(content: str) -> str:
    """A JSON object answer as the words it states (``{"revenue": 122445, "unit": "thousand
    USD"}`` is "122445 thousand USD"): its one figure and its unit, scale or currency
    fields. Anything else, or an object of several figures, is left as written."""
    if not content.strip().startswith("{"):
        return content
    try:
        data = json.loads(content)
    except ValueError:
        return content
    if not isinstance(data, dict):
        return content
    words = [str(v) for k, v in data.items() if str(k).lower() in _UNIT_KEYS and isinstance(v, str)]
    figures = [
        str(v)
        for k, v in data.items()
        if str(k).lower() not in _UNIT_KEYS
        and ((isinstance(v, int | float) and not isinstance(v, bool)) or isinstance(v, str))
    ]
    if len(figures) != 1 or len(figures) + len(words) != len(data):
        return content
    return " ".join([figures[0], *words])


_ANSWER_LINE = re.compile(r"answer\s*(?:is)?\s*[:=]\s*([^\n]*)", re.IGNORECASE)


def answer_lines(text: str, tags: list[str]) -> list[str]:
    """The "answer:" lines of a tagged text, outside its tags ("Answer: 150,239" before
    ``<answer>122,445</answer>`` is a second answer, not reasoning); none without tags,
    where the last such line is the answer itself."""
    if not tags:
        return []
    outside = _TAGGED.sub("\n", text)  # the tags' own answers are compared as tags
    return [_CITE.sub(" ", m.group(1)) for m in _ANSWER_LINE.finditer(outside)]


def _signed(span: str, figure: Figure, start: int, magnitude_asked: bool) -> Figure:
    """`figure` with the sign its words give it ("a loss of 899", "fell 18.5%")."""
    end = start + len(figure.text)
    if magnitude_asked or figure.value <= 0:
        return figure
    if not (negative_in_words(span[:start]) or negative_after(span[end:])):
        return figure
    return Figure(-figure.value, figure.scale, figure.unit, figure.decimals, figure.text)


def answer_span(text: str) -> str:
    """The part of `text` that states the answer: the last tag, the last "answer:" line,
    or the end of free text."""
    tags = all_tagged(text)
    marked = list(_ANSWER_LINE.finditer(text))
    return tags[-1] if tags else marked[-1].group(1) if marked else text[-2000:]


def _unit_clash(reference: Any, gold: Figure, text: str) -> str:
    """Why the answer's unit is not the gold's: percentage points for a percentage, a
    count ("shares") for an amount, a currency on a percentage, or another currency."""
    span = answer_span(model_text(text))
    unit = str(reference.get("unit", "")) if isinstance(reference, dict) else ""
    if _POINTS.search(span) and gold.unit == "%" and not _POINTS.search(unit):
        return "percentage points given for a percentage"
    counted = COUNT_UNITS.search(span)
    if counted and counted.group(0).lower() not in unit.lower():
        return f"{counted.group(0)} given for the gold's amount"
    if gold.unit in ("%", "bp") and currency_of(span):
        return "a currency given for a percentage"
    return _currency_clash(reference, gold, text)


def _currency_clash(reference: Any, gold: Figure, text: str) -> str:
    """ "€ given, $ expected" when the answer names a currency other than the gold's."""
    named = reference.get("currency") if isinstance(reference, dict) else None
    expected = (
        currency_of(str(named)) if named else gold.unit if gold.unit not in ("", "%", "bp") else ""
    )
    given = currency_of(answer_span(model_text(text)))
    if expected and given and given != expected:
        return f"{given} given, {expected} expected"
    return ""


def answer_figure(text: str, prompt: str = "") -> Figure | None:
    """The model's figure: inside ``<answer>``, after "answer:", or the last one written.

    A scale stated after the figure ("1,200 (in thousands)") applies when the figure has
    none, and else the scale the question declares (`prompt`: "in thousands?"). The words
    before the figure give its sign (`quantities.negative_in_words`) unless the question
    asks for the size of a loss or a decrease. A marked answer holding several different
    figures, a hedge in words, several tags that differ, or a different amount after it
    raise `HedgedAnswer` (restating the same quantity, "$1.2 billion (1,200 million)", is
    not a hedge; a year beside the amount is a date); free text is read for its last
    figure, so the reasoning before it may hold any numbers.
    """
    text = model_text(text)
    tags = all_tagged(text)
    marked = list(_ANSWER_LINE.finditer(text))
    span = tags[-1] if tags else marked[-1].group(1) if marked else text[-2000:]
    # A page or note cited beside the answer ("(p. 3)", "Note 7") is not a figure of it.
    uncited = _CITE.sub(lambda cite: " " * len(cite.group(0)), span)
    spans = [s for s in find_figure_spans(uncited) if not is_year(s[0])] or find_figure_spans(
        uncited
    )
    if not spans:
        return Figure(0.0, text=span.strip()) if _ZERO.match(span) else None
    is_marked = bool(tags) or bool(marked)
    if not is_marked:
        # "X, not Y" concludes on X in free text too: its last figure, Y, is taken back.
        span, spans = without_denied(span, spans)
        spans = _up_to_asked_year(span, spans, prompt)
    # A marked answer starts with its figure; free text ends with its conclusion.
    figure, start, end = spans[0] if is_marked else spans[-1]
    if is_garbled(figure) or sign_unknown(figure):  # "12,2445 thousand", "△122,445": no
        return None  # grouping, or no sign, is written, so no quantity is stated
    second = _SECOND_SCALE.match(span, end) if figure.scale != 1.0 else None
    if second is not None:
        raise StackedScale(figure.text, second.group(1))
    if is_marked:
        span, spans = without_denied(span, spans)
        others = [f for f, _, _ in spans]
        signed = _signed(span, figure, start, False)
        _refuse_hedges(text, span, tags, marked, (figure, signed), others, prompt)
    else:
        _refuse_doubted_conclusion(span, spans)
    figure = _signed(span, figure, start, bool(_MAGNITUDE_ASKED.search(prompt)))
    if figure.scale == 1.0 and figure.unit not in ("%", "bp"):
        scale = scale_from_header(span)
        scale = scale if scale != 1.0 else stated_scale(prompt)
        if scale != 1.0:
            return Figure(figure.value, scale, figure.unit, figure.decimals, figure.text)
    return figure


def _up_to_asked_year(
    text: str, spans: list[tuple[Figure, int, int]], question: str
) -> list[tuple[Figure, int, int]]:
    """Free text's figures up to its conclusion: the last one not given for another year
    than the question names ("2024: 122,445 (2023: 150,239)" concludes on 122,445 for a
    2024 question; so does "122,445 (PY: 150,239)", the prior year's being the year
    before the figure's before it, else before the one asked). A figure with no year
    written beside it, or a question naming none, leaves the last figure the conclusion;
    when every figure is given for another year, the text answers nothing asked
    (`OtherPeriod`)."""
    asked = named_years(question)
    if not asked:
        return spans
    years = figure_years(text, spans)
    for k, (_, start, _) in enumerate(spans):  # "122,445 (PY: 150,239)": the year before
        previous_end = spans[k - 1][2] if k else 0
        if years[k] is None and PRIOR_LABEL.search(text, previous_end, start):
            current = years[k - 1] if k and years[k - 1] else min(asked)
            years[k] = current - 1
    for k in range(len(spans) - 1, -1, -1):
        if years[k] is None or years[k] in asked:
            return spans[: k + 1]
    raise OtherPeriod(spans[-1][0].text, years[-1] or 0, asked)


_DOUBT = re.compile(
    r"\b(?:maybe|perhaps|possibly|probably|guess|unsure|not\s+sure|uncertain|alternatively|"
    r"between|at\s+(?:least|most)|up\s+to|or\s+(?:more|less))\b|\?|±|\+\s*/\s*-",
    re.IGNORECASE,
)
"""Words that make free text's concluding figure a guess or a bound ("Maybe 34,030
thousand.", "between 30,000 and 34,030 thousand"); fewer than a marked answer's
`_HEDGE_WORDS`, since a concluding sentence also says how the figure came about."""
_OR_BETWEEN = re.compile(r"[\s,;:(]*(?:and/)?or\b[\s,]*(?:[a-z]+[\s,]+)?", re.IGNORECASE)
"""What joins two figures offered as alternatives ("35,000, or maybe 34,030 thousand")."""
_ANSWER_MARKS = re.compile(r"</?answer>", re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.!?;](?=\s)|\n")


def _refuse_doubted_conclusion(span: str, spans: list[tuple[Figure, int, int]]) -> None:
    """Raise `HedgedAnswer` when free text's conclusion, the sentence of its last figure,
    doubts that figure or offers another beside it with "or": read for its last figure
    alone, "35,000, or maybe 34,030 thousand" would answer 34,030 thousand."""
    figure, start, end = spans[-1]
    opened = _sentence_start(span, start)
    offered = False  # "... in 2022. (or 289 thousand)": the sentence offers it as another
    while opened > 0 and _OR_BETWEEN.match(span, opened):  # "... (or 159 thousand)" goes on
        opened, offered = _sentence_start(span, opened - 1), True
    closed = _SENTENCE_END.search(span, end)
    sentence = span[opened : closed.end() if closed else len(span)]
    doubt = _DOUBT.search(sentence)
    if doubt is not None:
        raise HedgedAnswer([figure.text, doubt.group(0)])
    last = _signed(span, figure, start, False)
    for other, other_start, other_end in spans[:-1]:
        gap = other_end + sign_words_after(span[other_end:])  # "289 thousand negative, or"
        if scale_word := _SECOND_SCALE.match(span, gap):  # "[289] thousand, or": unread scale
            gap = scale_word.end()
        joined = other_end >= opened and (
            offered or _OR_BETWEEN.fullmatch(span, gap, start) is not None
        )
        # Each with the sign its words give it: "a loss of 289, or 289" offers two answers,
        # and so does a figure of no known sign ("▲289, or 289").
        signed = _signed(span, other, other_start, False)
        if (
            joined
            and not is_year(other)
            and (sign_unknown(other) or not same_quantity(signed, last))
        ):
            raise HedgedAnswer([other.text, figure.text])


def _sentence_start(text: str, at: int) -> int:
    """Where the sentence holding index `at` begins."""
    return max((m.end() for m in _SENTENCE_END.finditer(text, 0, at)), default=0)


def _same_stated(a: Figure, b: Figure) -> bool:
    """The same quantity written twice: equal, or two scaled restatements ("$1.2 billion",
    "1,200 million"); a bare "1" does not restate "0 thousand", nor a figure of no known
    sign ("△122,445", `sign_unknown`) any figure."""
    if sign_unknown(a) or sign_unknown(b):
        return False
    if math.isclose(a.absolute, b.absolute, rel_tol=1e-9, abs_tol=1e-12):
        return True
    return a.scale != 1.0 and b.scale != 1.0 and restates(a, b)


def _in_page_units(answer: Figure, line: Figure) -> bool:
    """An "answer:" line stating the answer's digits with no scale: a claim in the page's
    own units ("Answer: Total assets were 53,840 (p. 3)." beside "53,840 thousand"). Two
    tags are held to the same quantity (`_same_stated`): there the bare one is an answer."""
    return line.scale == 1.0 and line.value == answer.value and line.unit == answer.unit


def _refuse_hedges(
    text: str,
    span: str,
    tags: list[str],
    marked: list[re.Match[str]],
    stated: tuple[Figure, Figure],
    figures: list[Figure],
    question: str = "",
) -> None:
    """Raise `HedgedAnswer` when the marked answer offers more than one figure, another
    answer (a tag, an "answer:" line) states another, or the text after it offers another
    or takes the answer back. `stated` is the answer's figure as written and with the sign
    its words give it: other answers are compared signed ("<answer>159 thousand
    (negative)</answer>" then "<answer>159 thousand</answer>" states two quantities)."""
    figure, signed = stated
    if not all(restates(figure, f) for f in figures[1:]):
        raise HedgedAnswer([f.text for f in figures][:10])
    earlier = tags[:-1] if tags else [m.group(1) for m in marked[:-1]]
    for answer in (span, *earlier):  # a hedge in words in any of the answers given
        hedge = _HEDGE_WORDS.search(answer)
        if hedge is not None:
            raise HedgedAnswer([figure.text, hedge.group(0)])
    for other in earlier:  # an earlier answer must state the same quantity, not round to it
        found = _signed_amounts(other)
        if not found or not all(_same_stated(signed, f) for f in found):
            raise HedgedAnswer([figure.text, other.strip()[:40]])
    for line in answer_lines(text, tags):  # an "answer:" line beside the tags is an answer
        found = _signed_amounts(_ANSWER_MARKS.sub(" ", line))
        if found and not all(_same_stated(signed, f) or _in_page_units(signed, f) for f in found):
            raise HedgedAnswer([figure.text, line.strip()[:40]])
    # Everything after the first answer is "after the answer": an amount offered between two
    # equal tags is as much a second answer as one offered after the last.
    first_close = _CLOSE_TAG.search(text)
    end = first_close.end() if tags and first_close else marked[0].end()
    tail = _ANSWER_MARKS.sub("\n", text[end:])
    retracted = _RETRACTED.search(_CITE.sub(" ", tail))
    if retracted is not None:
        raise HedgedAnswer([figure.text, retracted.group(0)])
    after = _stated_after(tail, figure, question)
    if after is not None:
        raise HedgedAnswer([figure.text, after.text])


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
            got = answer_figure(text, sample.question)
        except HedgedAnswer as hedge:
            return Verdict.failed(
                self.name, self.version, evidence={"hedged": hedge.figures}, feedback=str(hedge)
            )
        if got is None:
            return Verdict.failed(
                self.name, self.version, Failure.FORMAT, feedback="no figure found in the answer"
            )
        wrong_unit = _unit_clash(sample.reference, gold, text)
        if wrong_unit:
            return Verdict.failed(
                self.name, self.version, evidence={"unit": wrong_unit},
                feedback=f"the unit is wrong: {wrong_unit}",
            )  # fmt: skip
        return self._grade(got, gold)

    def exploits(self, sample: Sample) -> Iterator[Exploit]:
        """Wrong scale, lost sign, hedged, second-tag, hedged-in-words, figure-after-tag,
        wrong-currency and ratio-as-percent variants of a right answer."""
        from rewardsmith.verifiers.finance.claim_exploits import figure_word_exploits
        from rewardsmith.verifiers.finance.exploits import figure_exploits

        yield from figure_exploits(sample)
        yield from figure_word_exploits(sample)

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
