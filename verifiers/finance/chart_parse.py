"""Reading a completion as claims about a chart (for `chart_claims`): which series and
categories each clause names, what it claims (a value, a peak, a trend, a change, a
comparison), with the figure's sign, unit, scale and currency as `quantities` reads them.
A clause the chart cannot decide becomes an ``unchecked`` claim, which fails.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, replace

from rewardsmith.verifiers.finance.chart_sentences import (
    clauses,
    comparative,
    off_chart,
    ordered,
    sentences,
)
from rewardsmith.verifiers.finance.figures import (
    Figure,
    find_figure_spans,
    sign_unknown,
    without_denied,
)
from rewardsmith.verifiers.finance.quantities import (
    both_directions,
    currency_of,
    direction_of,
    model_text,
    negative_in_words,
)

__all__ = ["MAX_CLAIMS", "Claim", "parse_claims"]

_MAX = re.compile(r"\b(highest|peak(ed|s)?|maximum|largest|biggest|record high|most)\b", re.I)
_MIN = re.compile(r"\b(lowest|minimum|smallest|least|trough|bottomed)\b", re.I)
_RATIO_WORDS = re.compile(r"\b(?:half|twice|double|triple|third|quarter|times)\b", re.I)
_FLAT = re.compile(r"\b(?:flat|unchanged|stable|steady|level)\b", re.I)
_FACTORS = {"doubled": 2.0, "tripled": 3.0, "quadrupled": 4.0, "halved": 0.5}
_MULTIPLE = re.compile(r"\b(?:doubled|tripled|quadrupled|halved)\b", re.I)
_EVERY = re.compile(
    r"\b(every|each)\s+year\b|\bsteadily\b|\bconsecutive|\bconsistently\b|\bcontinuously\b|"
    r"\bwithout\s+(?:interruption|a\s+break|pause)\b|\buninterrupted\b|\byear\s+after\s+year\b|"
    r"\b(?:year[- ]over[- ]year|year[- ]on[- ]year)\b(?=.*\bfrom\b.*\bto\b)",
    re.I,
)
"""Words that claim every step moved ("rose every year", "grew consistently", "increased
year over year from 2019 to 2023"), not only the two ends."""
_YOY = re.compile(
    r"year[- ]over[- ]year|year[- ]on[- ]year|\byoy\b|from the (previous|prior) year", re.I
)
_NEGATION = re.compile(
    r"\b(?:not(?! only)|never|no longer|neither|nor|cannot|fail(?:s|ed)? to)\b|n't\b", re.I
)
_MODAL = re.compile(
    r"\b(?:probably|possibly|perhaps|maybe|might|may\s+(?:have|be)|could|likely|unsure|"
    r"uncertain|not\s+sure|i\s+think|i\s+guess|guess)\b",
    re.I,
)
"""Words that make a claim a guess ("Revenue in 2021 was probably 151"): hedged, so it
fails, as a hedged figure fails `numeric_answer`."""
MAX_CLAIMS = 200
MAX_TEXT = 50_000


@dataclass(frozen=True)
class Claim:
    kind: str
    """``value``, ``max``, ``min``, ``trend``, ``monotonic``, ``change``, ``change_pct``,
    ``compare`` (stated +1: the first term is higher) or ``unchecked`` (always false)."""
    series: str
    categories: tuple[str, ...]
    stated: float | None = None
    """The figure claimed (a value, a change); for a trend +1 (up) or -1 (down)."""
    text: str = ""
    hedged: bool = False
    negated: bool = False
    """The sentence denies the claim ("did not peak in 2021")."""
    scale: float = 1.0
    """The scale word written with `stated` ("151 million": 1e6); 1 when none."""
    unit: str = ""
    """``"%"`` when `stated` was written as a percentage."""
    currency: str = ""
    """The currency the clause names ("euros": "€"), "" when none."""
    other: str = ""
    """For ``compare``: the series of the second term (the same series when empty);
    for ``unchecked``: why the chart cannot decide the claim."""
    by: float | None = None
    """For ``compare``: the gap it states ("higher ... by 47", "47 higher than"), in the
    `scale` and `unit` written with it; None when it states none."""


def _names(series: list[str]) -> dict[str, re.Pattern[str]]:
    """How each series may be named: in full, or without a parenthesis ("(%)")."""
    out = {}
    for name in series:
        core = re.sub(r"\s*\(.*?\)\s*", " ", name).strip() or name
        out[name] = re.compile(rf"(?<!\w)({re.escape(name)}|{re.escape(core)})(?!\w)", re.I)
    return out


def parse_claims(text: str, series: list[str], categories: list[str]) -> list[Claim]:
    """The claims in `text` about a chart with these series and categories. A clause
    that states a figure the chart cannot check (a year off the chart, no series of the
    chart, several at once) is an ``unchecked`` claim, which fails: it is never dropped."""
    names = _names(series)
    out: list[Claim] = []
    for sentence in sentences(model_text(text[:MAX_TEXT])):
        # "was 151, not 190" claims 151: the figure denied after another is no claim, and
        # its "not" no denial of the claim (`figures.without_denied`)
        sentence = unicodedata.normalize("NFKC", sentence)
        sentence, _ = without_denied(sentence, find_figure_spans(sentence))
        # a guess anywhere in the sentence ("151 (approximately; I am not sure)") is a
        # guess of each of its clauses
        doubted = bool(_MODAL.search(sentence))
        for clause in clauses(sentence):
            found = _clause_claims(clause, series, categories, names)
            out += [replace(c, hedged=True) for c in found] if doubted else found
        if len(out) >= MAX_CLAIMS:
            break
    return out[:MAX_CLAIMS]


def _clause_claims(
    clause: str, series: list[str], categories: list[str], names: dict[str, re.Pattern[str]]
) -> list[Claim]:
    named = [s for s, pattern in names.items() if pattern.search(clause)]
    if not named and len(series) == 1:
        named = list(series)
    negations = len(_NEGATION.findall(clause))
    if negations > 1:
        return []  # "it is not true that it did not rise": not one decidable claim
    cats = _categories_in(clause, categories)
    stripped = _strip(clause, categories, names)
    spans = find_figure_spans(stripped)
    figures = [_signed(f, stripped[:start], stripped[end:]) for f, start, end in spans]
    if any(sign_unknown(f) for f in figures):  # "[151]", "△151": which sign is not written
        why = "states a figure of no known sign (in square brackets or after a triangle)"
        return [Claim("unchecked", named[0] if named else "", (), text=clause, other=why)]
    currency = currency_of(stripped)
    missing = off_chart(clause, categories)
    if missing and (figures or direction_of(clause) or comparative(clause)):
        return [Claim("unchecked", named[0] if named else "", (), text=clause, other=missing)]
    compared = _comparison(clause, named, cats, names)
    if compared is not None:  # "was not higher than" is graded as the denial it is
        compared = _with_gap(compared, stripped, currency)
        return [replace(compared, negated=bool(negations), hedged=bool(_MODAL.search(clause)))]
    if len(named) >= 2 and compared is None and re.search(r"\band\b", clause):
        return _split_at_and(clause, series, categories, names)
    if len(named) != 1:
        if (figures and cats) or (len(named) >= 2 and cats and _RATIO_WORDS.search(clause)):
            why = "names no series of the chart" if not named else "names several series"
            return [Claim("unchecked", named[0] if named else "", (), text=clause, other=why)]
        return []
    if cats and both_directions(_strip(clause, categories, names)) and compared is None:
        why = "says both up and down: which move is claimed cannot be read"
        return [Claim("unchecked", named[0], (), text=clause, other=why)]
    claims = _claims(named[0], clause, ordered(cats, clause), figures, categories)
    if not claims and _states_something(clause, figures):
        why = "names no category of the chart the claim could be checked at"
        return [Claim("unchecked", named[0], (), text=clause, other=why)]
    hedged = bool(_MODAL.search(clause))
    claims = [replace(c, currency=currency, hedged=c.hedged or hedged) for c in claims]
    return [replace(c, negated=True) for c in claims] if negations else claims


def _states_something(clause: str, figures: list[Figure]) -> bool:
    """The clause claims a figure, a move, a peak or a multiple of its series ("Revenue
    reached 300", "Revenue doubled", "Average revenue was 300"): a claim, so one the chart
    cannot place is refused, never dropped."""
    return bool(
        figures
        or direction_of(clause)
        or _MAX.search(clause)
        or _MIN.search(clause)
        or _MULTIPLE.search(clause)
    )


def _split_at_and(
    clause: str, series: list[str], categories: list[str], names: dict[str, re.Pattern[str]]
) -> list[Claim]:
    """ "In 2021, revenue was 151 and operating costs were 104": one claim per part, a part
    with no category taking the one category of the part before it."""
    out: list[Claim] = []
    carried = ""
    for part in re.split(r"\band\b", clause):
        cats = _categories_in(part, categories)
        if len(cats) == 1:
            carried = cats[0]
        elif not cats and carried:
            part = f"{part} in {carried}"
        named = [s for s, pattern in names.items() if pattern.search(part)]
        if len(named) >= 2:
            why = "names several series"
            return [Claim("unchecked", named[0], (), text=clause, other=why)]
        out += _clause_claims(part, series, categories, names)
    return out


_NEGATIVE_WORD_AFTER = re.compile(r"^\s*[,(]?\s*negative\b", re.I)


def _signed(figure: Figure, before: str, after: str = "") -> Figure:
    """ "a loss of 12.5" and "12.5 (negative)" state -12.5."""
    negative = negative_in_words(before) or _NEGATIVE_WORD_AFTER.match(after) is not None
    if figure.value > 0 and negative:
        return Figure(-figure.value, figure.scale, figure.unit, figure.decimals, figure.text)
    return figure


def _comparison(
    clause: str, named: list[str], cats: list[str], names: dict[str, re.Pattern[str]]
) -> Claim | None:
    """ "Revenue in 2021 was lower than in 2022", "Revenue in 2021 was higher than
    operating costs": the first term against the one after "than"."""
    found = comparative(clause)
    if found is None or not named:
        return None
    sign, than = found
    if len(named) == 1 and len(cats) == 2:
        first = min(cats, key=clause.find)
        second = next(c for c in cats if c != first)
        return Claim("compare", named[0], (first, second), float(sign), clause)
    if len(named) == 2 and len(cats) == 1:
        after = [s for s in named if names[s].search(clause, than)]
        before = [s for s in named if s not in after]
        if len(after) == 1 and len(before) == 1:
            return Claim("compare", before[0], (cats[0], cats[0]), float(sign), clause,
                         other=after[0])  # fmt: skip
    return Claim("unchecked", named[0], (), text=clause, other="a comparison of unclear terms")


_GAP_BEFORE = re.compile(r"(?:\bby|\b(?:gap|difference|margin)\s+(?:of|was|is)?)\s*$", re.I)
_GAP_AFTER = re.compile(r"\s*(?:higher|more|lower|less|above|below|greater|smaller)\b", re.I)


def _with_gap(claim: Claim, stripped: str, currency: str) -> Claim:
    """A comparison with the gap it states ("higher than operating costs by 47", "47 more
    than in 2019", "a gap of 47"): one figure written as the gap, else none (a figure that
    is a value, "Revenue, at 151, was higher", states no gap)."""
    if claim.kind != "compare":
        return claim
    spans = find_figure_spans(stripped)
    if len(spans) != 1:
        return claim
    figure, start, end = spans[0]
    if not (_GAP_BEFORE.search(stripped[:start]) or _GAP_AFTER.match(stripped, end)):
        return claim
    unit = "%" if figure.unit == "%" else ""
    return replace(claim, by=abs(figure.value), scale=figure.scale, unit=unit, currency=currency)


def _categories_in(sentence: str, categories: list[str]) -> list[str]:
    found = []
    for c in categories:
        for m in re.finditer(
            rf"(?:(?<![\w.,])|(?<=FY)|(?<=FY ))(?:FY\s?)?{re.escape(c)}(?![\w%])", sentence
        ):
            found.append((m.start(), c))
    return [c for _, c in sorted(found)]


def _strip(sentence: str, categories: list[str], names: dict[str, re.Pattern[str]]) -> str:
    """The sentence without its category labels and series names (a year is no figure)."""
    blank = lambda m: " " * len(m.group(0))  # noqa: E731 - positions are kept
    for c in categories:
        sentence = re.sub(
            rf"(?:(?<![\w.,])|(?<=FY)|(?<=FY ))(?:FY\s?)?{re.escape(c)}(?![\w%])", blank, sentence
        )
    for pattern in names.values():
        sentence = pattern.sub(blank, sentence)
    return sentence


def _claims(
    series: str, sentence: str, cats: list[str], figures: list[Figure], categories: list[str]
) -> list[Claim]:
    direction = float(direction_of(sentence))
    pct = [f for f in figures if f.unit == "%"]
    amounts = [f for f in figures if f.unit != "%"]
    if len(cats) == 2 and (_FLAT.search(sentence) or _MULTIPLE.search(sentence)):
        flat = _FLAT.search(sentence)
        factor = None if flat else _FACTORS[_MULTIPLE.search(sentence).group(0).lower()]  # type: ignore[union-attr]
        kind = "flat" if flat else "multiple"
        return [Claim(kind, series, tuple(cats), factor, sentence)]
    if direction and _EVERY.search(sentence):
        return [Claim("monotonic", series, tuple(categories), direction, sentence)]
    if direction and len(cats) == 1 and (_YOY.search(sentence) or pct):
        i = categories.index(cats[0])
        cats = [categories[i - 1], cats[0]] if i > 0 else cats
    if direction and len(cats) == 2 and len(amounts) == 2:  # "rose to 151 in 2021 from
        # 132.5 in 2020" (", a 14% increase"): two values, the trend, and any percentage
        in_text = sorted(cats, key=sentence.find)
        values = _values(series, in_text, amounts, sentence)
        change = [_change(series, tuple(cats), direction, pct[:1], sentence)] if pct else []
        return [*values, Claim("trend", series, tuple(cats), direction, sentence), *change]
    if direction and len(cats) == 2:
        return [_change(series, tuple(cats), direction, figures, sentence)]
    if len(cats) == 1 and (_MAX.search(sentence) or _MIN.search(sentence)):
        kind = "max" if _MAX.search(sentence) else "min"
        claims = [Claim(kind, series, tuple(cats), None, sentence)]
        return claims + _values(series, cats, figures, sentence)
    if cats and figures and not direction:
        return _values(series, cats, figures, sentence)
    return []


def _change(
    series: str, cats: tuple[str, ...], direction: float, figures: list[Figure], sentence: str
) -> Claim:
    if not figures:
        return Claim("trend", series, cats, direction, sentence)
    kind = "change_pct" if figures[0].unit == "%" else "change"
    stated = direction * abs(figures[0].value)
    hedged = len({abs(f.absolute) for f in figures}) > 1
    return Claim(kind, series, cats, stated, sentence, hedged, scale=figures[0].scale)


def _values(series: str, cats: list[str], figures: list[Figure], sentence: str) -> list[Claim]:
    if not figures:
        return []
    if len(figures) == len(cats):  # "118.5 in 2019 and 132.5 in 2020": in order
        return [
            Claim("value", series, (c,), f.value, sentence, scale=f.scale, unit=f.unit)
            for c, f in zip(cats, figures, strict=True)
        ]
    if len(cats) == 1:  # one value, several figures offered: a hedge
        f = figures[0]
        return [
            Claim(
                "value",
                series,
                (cats[0],),
                f.value,
                sentence,
                hedged=True,
                scale=f.scale,
                unit=f.unit,
            )
        ]
    return []
