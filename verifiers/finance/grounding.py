"""Grounding: every figure the model cites must appear in the source PDF.

The completion is prose. Each sentence's figures are taken with `figures.find_figures`; a
page citation in the same sentence ("(p. 3)", "[page 3]", "page 3") says where to look,
otherwise every page is searched. A model figure is grounded by a PDF figure on that page
when the digits match (for a figure written without a scale word), or the quantity
matches once the page's declared scale ("in thousands") applies to a printed figure
without a scale word of its own (a printed "$122,445 thousand" is not scaled again), or the
model rounded: ``round(pdf / model_scale, model_decimals)`` equals the model's value. A
rounded figure is grounded only by a printed figure whose row label the claim names (the
label's words, "total" and small words aside, are all in the claim's sentence): rounding
loses the digits that tell the figures of a page apart, and a page of forty regions grounds
most "$N.N million" claims by some region; exact digits still ground anywhere on the page.
Rounding also needs two or more significant digits, so "1 billion" cannot be grounded by
anything between 0.5 and 1.5 billion. So ``(412,300)`` in a row "Cost of revenue" on a page
"in thousands" grounds "Cost of revenue was $412.3 million", "$412,300 thousand" and
"412.3m" (scale rewrites) as well as "(412,300)". Years ("2024", "FY2024") are dates, never
figures: a claim's years are not checked and a page's header years ground nothing.

Signs. Statements print a cost in parentheses and prose states its size: "Cost of revenue
was $412.3 million (p. 2)" cites ``(412,300)`` by its magnitude. A positive figure is
grounded by a negative one only when the words before it in its clause say what it is: a
cost, expense, loss, outflow, charge, deduction, payment and the like (`OUTFLOW_WORDS`).
"Revenue was $412.3 million" is not grounded by ``(412,300)``, nor "net income of $5
million" by a net loss of ``(5,000)``.

Hedges. Two different quantities offered for one claim ("revenue was 122,445 or 150,239",
"between 40,000 and 45,000", "40,000-45,000", "40,000/45,000") ground neither: each is
listed as ``hedged``. A restatement of the same quantity ("$122,445 thousand, or $122.4
million") is not a hedge, nor is "from 150,239 to 122,445".

Figures below `ignore_below` written without unit, scale or decimals ("3 segments") are
not checked. Invented figures are named in the evidence. Every claim must hold (a claim
being one quantity cited on one page, however often it is repeated): the score is 1 when
every claim is grounded and 0 otherwise, so grounded figures never dilute an invented one.
A completion that cites no figure fails. Words are read with `quantities`: a figure's page
is the first citation after it in its sentence (else the last before it); "a net loss of",
"fell", "a decrease of" make a figure negative, grounded only by a negative printed figure
or one on a cost or loss row; a percentage is grounded only by a percentage; a currency
other than the page's grounds nothing; a rounded figure must name one row in its clause.
A figure cited on a page with no text layer (a scan) cannot be checked: it is listed under
``unchecked_scanned`` and left out of the score; if nothing is left, the verdict is an
infrastructure error (the reference is unusable), never a 0 or a 1.
"""

from __future__ import annotations

import dataclasses
import math
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import ClassVar

from rewardsmith.verifiers.exploits import Exploit
from rewardsmith.verifiers.finance.figures import (
    SCALE_WORDS,
    Figure,
    find_figure_spans,
    is_year,
    restates,
    scale_from_header,
    scale_name,
    sign_unknown,
    without_denied,
)
from rewardsmith.verifiers.finance.grounding_ties import (
    DERIVING,
    PRIOR_LABEL,
    YEAR_AS_AMOUNT,
    cited_year,
    column_years,
    derived,
    leading_year,
    move_to_level,
    quantities_named,
    unchecked_claims,
)
from rewardsmith.verifiers.finance.quantities import (
    currency_of,
    model_text,
    negative_after,
    negative_in_words,
    stated_scale,
)
from rewardsmith.verifiers.finance.reference import ExtractionLimits, load_document, problem_verdict
from rewardsmith.verifiers.protocol import Cost
from rewardsmith.verifiers.types import Failure, Sample, Verdict

__all__ = ["OUTFLOW_WORDS", "Cited", "Grounding", "cited_figures", "other_year", "printed_move"]

MAX_COMPLETION_CHARS = 100_000
MAX_FIGURES = 500
_CITATION = re.compile(r"[(\[]?\b(?:p\.|pp\.|pg\.|page)\s*(\d{1,5})\b[)\]]?", re.IGNORECASE)
_SENTENCE = re.compile(r"(?<=[.;!?])\s+(?=[A-Z(])|\n+")
OUTFLOW_WORDS = re.compile(
    r"\b(costs?|expenses?|expenditures?|spend(ing)?|spent|loss(es)?|outflows?|charges?|"
    r"deductions?|depreciation|amorti[sz]ation|impairments?|write-?downs?|paid|payments?|"
    r"repayments?|purchases?|capex|taxes|tax\s+expense|deficit|used\s+in)\b",
    re.IGNORECASE,
)
_LABEL_WORD = re.compile(r"[a-z][a-z0-9&'-]*|\d+[a-z][a-z0-9]*", re.IGNORECASE)
# Words a row label shares with any claim: they do not say which row a figure is on.
_GENERIC = frozenset(
    ("a", "an", "and", "the", "of", "for", "in", "on", "at", "to", "by", "from", "was",
     "were", "is", "are", "total", "totals", "net", "other")
)  # fmt: skip
_DOUBTED = re.compile(
    r"\b(?:not|never|no\s+longer|maybe|perhaps|possibly|probably|likely|might|may\s+(?:have|be)|"
    r"could|alternatively|otherwise|either|unsure|uncertain|guess|unverified)\b|n't\b|"
    r"^\W*or\b|\?",
    re.IGNORECASE,
)
"""A sentence that denies, doubts or offers an alternative to its figures ("Revenue was
not 122,445", "probably 122,445", "(p. 1), or maybe 150,239", "Or 150,239 (p. 1)"): what it
claims is not the figure, so the figure is no grounded claim (`hedged`)."""
_DASH_CELL = re.compile(r"(?<!\S)[-–—](?!\S)")
_HEDGE_BETWEEN = re.compile(r"^\s*(or|and/or|/|-|–|—|to)\s*$", re.IGNORECASE)
_CLAUSE = re.compile(r"[,;:]|\b(and|while|whereas|but)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Cited:
    """One figure of the completion, where it says it is, and how it is worded."""

    figure: Figure
    page: int | None
    outflow: bool
    """The words before it say it is a cost, expense, loss or outflow."""
    hedged: bool
    """It is one of several different quantities offered for one claim."""
    words: frozenset[str] = frozenset()
    """The words of its own clause, lower case (a rounded figure must name its row)."""
    negative: bool = False
    """The words before it make it negative ("a net loss of", "fell", "a decrease of")."""
    currency: str = ""
    """The currency written with it ("€", "$"), "" when none."""
    context: frozenset[str] = frozenset()
    """The words of its sentence: where its row is named when its clause names none
    ("Revenue was $122,445 thousand, that is $122.4 million")."""
    year: int | None = None
    """The year it is said to be for ("150,239 in 2023"), None when none is written."""
    why: str = ""
    """Set for a claim no printed digit can check (an amount in words, a multiple)."""
    derives: bool = False
    """Its clause says it is a change, difference or share ("fell by", "84.2% of")."""
    moved: int = 0
    """+1 or -1 when it is the level a quantity rose or fell to ("rose to 122,445")."""
    moved_from: Figure | None = None
    """The level a move to it started from ("from 150,239 to 122,445"), None if unsaid."""
    prior: bool = False
    """It is labelled the prior year's ("PY: 150,239") where no year of the claim says
    which year that is: only a printed figure of an earlier column of its row grounds it."""


@dataclass(frozen=True)
class Printed:
    """One figure printed on a page, with the words of its row label."""

    figure: Figure
    label: frozenset[str]
    year: int | None = None
    """The year of its column, from a header line of years above it."""
    line: frozenset[str] = frozenset()
    """The words of its whole line: a prose line's label is what comes before its first
    figure ("Page 250: segment revenue 250,007 thousand" is labelled "page")."""


def label_words(text: str) -> frozenset[str]:
    """The words of a label or sentence that can tell rows apart, lower case."""
    return frozenset(w.lower() for w in _LABEL_WORD.findall(text)) - _GENERIC


def printed_figures(page_text: str) -> list[Printed]:
    """Every figure on a page (years aside) with its row label: the words before the first
    figure on its line ("Region A4 4,827 4,896": both figures are Region A4's)."""
    out: list[Printed] = []
    years: list[int] = []
    for line in page_text.splitlines():
        years = column_years(line) or years
        spans = [s for s in find_figure_spans(line) if not is_year(s[0])]
        if spans:
            text = unicodedata.normalize("NFKC", line)
            label, words = label_words(text[: spans[0][1]]), label_words(text)
            for k, (figure, start, end) in enumerate(spans):
                column = k + len(_DASH_CELL.findall(line[:start]))  # a dash cell is a column
                # A column's year, else the year its own line gives it ("Revenue for 2024
                # was $122,445 thousand").
                year = (
                    years[column] if column < len(years) else cited_year(line[:start], line[end:])
                )
                out.append(Printed(figure, label, year, words))
    return out


def cited_figures(text: str) -> list[Cited]:
    """Every figure in the text with its cited page and wording, citations excluded. A
    figure's page is the first citation after it in its sentence, else the last before
    it ("Revenue was 122,445 (p. 1) and total assets 26,079 (p. 2)": one page each)."""
    out: list[Cited] = []
    for sentence in _SENTENCE.split(model_text(text)):
        cites = [(m.start(), int(m.group(1))) for m in _CITATION.finditer(sentence)]
        bare = _CITATION.sub(lambda m: " " * len(m.group(0)), sentence)
        # "7,884 (not 7,885)": the denied figure is no claim, and no doubt of the first.
        bare, spans = without_denied(bare, find_figure_spans(bare))
        hedged = _hedged(bare, spans)
        page_of_all = cites[0][1] if len(cites) == 1 else None
        opening = leading_year(_CLAUSE.split(bare, maxsplit=1)[0])
        doubted = bool(_DOUBTED.search(bare))
        for span in unchecked_claims(bare):
            why = f"{span!r}: an amount no printed digit can check"
            out.append(Cited(Figure(0.0, text=span), page_of_all, False, False, why=why))
        previous_end = 0
        said: list[Cited] = []  # this sentence's figures so far
        for i, (figure, start, end) in enumerate(spans):
            before = bare[previous_end:start]
            clause = _CLAUSE.split(before)[-1] if _CLAUSE.search(before) else before
            words = clause if clause.strip(" $€£¥") else bare[:start]
            outflow = bool(OUTFLOW_WORDS.search(words))
            after = [page for at, page in cites if at >= end]
            earlier = [page for at, page in cites if at < start]
            page = after[0] if after else earlier[-1] if earlier else None
            currency = _currency(figure, bare[max(0, start - 6) : end + 16])
            negative = negative_in_words(bare[:start]) or negative_after(bare[end:])
            context = label_words(bare)
            year = _year_of(bare, start, end, opening)
            prior = PRIOR_LABEL.search(bare, 0, start) is not None
            if prior:  # "In 2024, revenue was 122,445 (PY: 150,239)": 150,239 is 2023's
                current = next((c.year for c in reversed(said) if c.year), None)
                year = current - 1 if current else None
            labels = re.match(r"\s*:", bare[end:])  # "Revenue was 2024: 122,445": a label
            if is_year(figure) and YEAR_AS_AMOUNT.search(bare[:start]) and not labels:
                figure = Figure(figure.value, text=f"{figure.text} (as an amount)")
            if sign_unknown(figure) and not _reference_number(figure):  # "[122,445]", "△122,445"
                why = "its sign is written in a mark read two ways (brackets, a triangle)"
                out.append(Cited(figure, page, False, False, why=why))
                previous_end = end
                continue
            figure = _placed_scale(figure, bare[previous_end:start], bare[end:])
            moved, moved_from = move_to_level(bare, spans, i)
            out.append(
                Cited(figure, page, outflow, i in hedged or doubted, label_words(words), negative,
                      currency,
                      context, year, derives=_derives(figure, clause, bare[end:]), moved=moved,
                      moved_from=moved_from, prior=prior and year is None)
            )  # fmt: skip
            said.append(out[-1])
            previous_end = end
    return out[:MAX_FIGURES]


_YEAR_LABEL = re.compile(r"(?<![\w.,])(?:FY\s?)?((?:19|20)\d{2})[AE]?\s*:\s*(?:[$€£¥]\s?)?$", re.I)
"""A year written before a figure as its label ("2023: 150,239", "(FY2023: $150,239",
"2023A: 150,239")."""

_STOP = re.compile(r"(?<!\d)\.\s+")
"""A full stop inside one split sentence ("... (p. 1). <answer>122,445</answer>")."""


def _year_of(bare: str, start: int, end: int, opening: int | None) -> int | None:
    """The year the figure at `start:end` is said to be for: a year labelling it ("2023:
    150,239"), else one in its clause or just after it, else the year its sentence opens
    with. No year crosses a full stop: a year of the claim before an answer tag is not the
    answer's year."""
    label = _YEAR_LABEL.search(bare, 0, start)
    if label is not None:
        return int(label.group(1))
    stops = [m.end() for m in _STOP.finditer(bare, 0, start)]
    if stops:
        segment = bare[stops[-1] : start]
        opening = leading_year(_CLAUSE.split(segment, maxsplit=1)[0])
    else:
        segment = bare[:start]
    return cited_year(_CLAUSE.split(segment)[-1], bare[end:]) or opening


_BARE_SCALE_BEFORE = re.compile(
    r"\b(thousands?|millions?|billions?|trillions?|mn|bn)\s*(?:[$€£¥]\s?)?$", re.I
)
_PARENTHESIS_AFTER = re.compile(r"^\s*\([^()\d]{1,40}\)")


def _placed_scale(figure: Figure, before: str, after: str) -> Figure:
    """`figure` with the scale written apart from it: before it in its clause ("million
    122,445", "$ millions 122,445", "Revenue (in thousands) was 122,445", "in $ millions,
    was 122.4") or in parentheses right after it ("122,445 ($ million)"). A claim of
    122,445 million is not grounded by a printed 122,445 (thousand)."""
    if figure.scale != 1.0 or figure.unit in ("%", "bp"):
        return figure
    paren = _PARENTHESIS_AFTER.match(after)
    scale = stated_scale(paren.group(0)) if paren else 1.0
    if scale == 1.0:
        bare_word = _BARE_SCALE_BEFORE.search(before)
        scale = SCALE_WORDS[bare_word.group(1).lower()] if bare_word else stated_scale(before)
    if scale == 1.0:
        return figure
    text = f"{figure.text} ({scale_name(scale)})"
    return Figure(figure.value, scale, figure.unit, figure.decimals, text)


def _reference_number(figure: Figure) -> bool:
    """ "[3]": a footnote or source reference (a bare integer below 10), not a figure."""
    plain = figure.unit == "" and figure.scale == 1.0 and figure.decimals == 0
    return plain and 0 <= figure.value < 10


def _derives(figure: Figure, clause: str, after: str) -> bool:
    """ "fell by $27,794", "a change of 18.5%", "84.2% of total assets": a derived figure."""
    share = figure.unit == "%" and re.match(r"\s*of\b", after) is not None
    return share or DERIVING.search(clause) is not None


def _currency(figure: Figure, around: str) -> str:
    if figure.unit not in ("", "%", "bp"):
        return figure.unit
    return currency_of(around) if figure.unit == "" else ""


def _hedged(text: str, spans: list[tuple[Figure, int, int]]) -> set[int]:
    """Indices of figures offered as alternatives of one another (see module doc)."""
    hedged: set[int] = set()
    for i in range(len(spans) - 1):
        (a, _, a_end), (b, b_start, _) = spans[i], spans[i + 1]
        between = text[a_end:b_start]
        before = text[max(0, spans[i][1] - 12) : spans[i][1]].casefold()
        ranged = between.strip().casefold() == "and" and before.rstrip().endswith("between")
        alternative = bool(_HEDGE_BETWEEN.match(between)) and not (
            between.strip().casefold() == "to" and not before.rstrip().endswith("between")
        )
        if (ranged or alternative) and not restates(a, b):
            hedged |= {i, i + 1}
    return hedged


def _significant(figure: Figure) -> int:
    digits = re.sub(r"\D", "", figure.text.split("e")[0])
    return len(digits.lstrip("0"))


def _same_kind(figure: Figure, pdf: Figure) -> bool:
    """A percentage is grounded by a percentage, an amount by an amount."""
    return (figure.unit in ("%", "bp")) == (pdf.unit in ("%", "bp"))


def _grounded_by(cited: Cited, printed: Printed, page_scale: float, rounding: bool) -> bool:
    figure, pdf = cited.figure, printed.figure
    if not _same_kind(figure, pdf):
        return False
    if cited.year and printed.year and cited.year != printed.year:
        return False  # "Revenue was 150,239 in 2024": that is the 2023 column
    if cited.negative and figure.value > 0:  # "a net loss of 899", "fell 18.5%"
        if pdf.value > 0 and not OUTFLOW_WORDS.search(" ".join(printed.label)):
            return False  # a profit printed positive is no loss
        value = abs(pdf.value)
    else:
        magnitude = cited.outflow and pdf.value < 0 < figure.value  # a cost cited by its size
        value = abs(pdf.value) if magnitude else pdf.value
    # The same digits ground a figure written without a scale word ("122,445" as
    # printed); with one ("12,035 million"), the quantity must match.
    if figure.scale == 1.0 and math.isclose(figure.value, value, rel_tol=1e-9, abs_tol=1e-12):
        return True
    # The page's "in thousands" is the scale of figures printed without one of their own.
    for scale in {pdf.scale} if pdf.scale != 1.0 else {1.0, page_scale}:
        quantity = value * scale
        if math.isclose(figure.absolute, quantity, rel_tol=1e-9):
            return True
        if rounding and _significant(figure) >= 2 and figure.scale and printed.label <= cited.words:
            rounded = round(quantity / figure.scale, figure.decimals)
            if math.isclose(rounded, figure.value, rel_tol=1e-9, abs_tol=1e-12):
                return True
    return False


@dataclass(frozen=True)
class Grounding:
    """Pass when every cited figure is found in the PDF (on the cited page if given)."""

    name: ClassVar[str] = "grounding"
    version: ClassVar[str] = "5"
    cost: ClassVar[Cost] = Cost.CPU
    takes_structured_reference: ClassVar[bool] = True  # JSON-text references are decoded

    ignore_below: float = 10.0
    """Bare integers below this (counts, list numbers) are not checked."""
    limits: ExtractionLimits = field(default_factory=ExtractionLimits)
    """Limits for reading the PDF."""

    def __call__(self, sample: Sample) -> Verdict:
        reference = sample.reference
        path = reference.get("pdf") if isinstance(reference, dict) else reference
        if not isinstance(path, str) or not path:
            return Verdict.errored(
                self.name,
                self.version,
                Failure.BAD_REFERENCE,
                'grounding needs `reference`: {"pdf": path} or a path',
            )
        text = sample.completion_text
        if len(text) > MAX_COMPLETION_CHARS:
            return Verdict.failed(
                self.name,
                self.version,
                Failure.INPUT_TOO_LARGE,
                feedback=f"completion longer than {MAX_COMPLETION_CHARS} characters",
            )
        cited = [c for c in cited_figures(text) if c.why or self._checked(c.figure)]
        if not cited:
            # Nothing cited, nothing grounded: an empty or refusing answer earns nothing.
            return Verdict.failed(
                self.name, self.version, Failure.FORMAT, feedback="the completion cites no figures"
            )
        cited_pages = {c.page for c in cited}
        pages = None if None in cited_pages else sorted(p for p in cited_pages if p is not None)
        result = load_document(path, pages, tables=False, limits=self.limits)
        if result.document is None and pages and "does not exist" in result.problem:
            return self._grade(cited, {})  # every cited page is past the end: invented
        if result.document is None:
            return problem_verdict(self.name, self.version, result)
        document = result.document
        scanned = set(document.pages_without_text)
        # A figure cited on a page with no text layer cannot be checked either way.
        checkable = [c for c in cited if c.page not in scanned]
        if not checkable or len(scanned) == len(document.text):
            return Verdict.errored(
                self.name,
                self.version,
                Failure.BAD_REFERENCE,
                "the cited pages have no text layer (a scan?): nothing to ground against",
                evidence={"pages_without_text": sorted(scanned)},
            )
        verdict = self._grade(checkable, document.text)
        if len(checkable) < len(cited):
            unchecked = [
                {"figure": c.figure.text, "page": c.page} for c in cited if c.page in scanned
            ]
            evidence = {**verdict.evidence, "unchecked_scanned": unchecked[:50]}
            verdict = dataclasses.replace(verdict, evidence=evidence)
        return verdict

    def exploits(self, sample: Sample) -> Iterator[Exploit]:
        """Gamed variants of a grounded answer (`finance.exploits.grounding_exploits`)."""
        from rewardsmith.verifiers.finance.claim_exploits import grounding_word_exploits
        from rewardsmith.verifiers.finance.prose_exploits import grounding_exploits

        yield from grounding_exploits(sample, self)
        yield from grounding_word_exploits(sample)

    def _checked(self, figure: Figure) -> bool:
        plain = figure.unit == "" and figure.scale == 1.0 and figure.decimals == 0
        return not (plain and abs(figure.value) < self.ignore_below) and not is_year(figure)

    def _grade(self, cited: list[Cited], text: dict[int, str]) -> Verdict:
        on_page = {
            n: (printed_figures(t), scale_from_header(t), currency_of(t), label_words(t))
            for n, t in text.items()
        }
        # One quantity cited on one page is one claim however often it is repeated: a
        # grounded figure written fifty times must not dilute an invented one to 2%. The
        # claim is invented when any of its mentions is.
        claims: dict[tuple[float, str, int | None], str] = {}
        for c in cited:
            key = _key(c)
            why = self._why_not(c, on_page)
            if why or key not in claims:
                claims[key] = claims.get(key) or why
        invented = [
            {"figure": next(c.figure.text for c in cited if _key(c) == key), "page": key[2],
             "why": why}
            for key, why in claims.items() if why
        ]  # fmt: skip
        evidence = {"figures": len(claims), "mentions": len(cited), "invented": invented[:50]}
        feedback = ", ".join(
            f"{i['figure']} ({'p. ' + str(i['page']) if i['page'] else 'anywhere'}: {i['why']})"
            for i in invented[:5]
        )
        score = 0.0 if invented else 1.0  # every claim must hold: the worst claim's score
        return Verdict.graded(
            self.name,
            self.version,
            score,
            evidence=evidence,
            feedback=f"figures not in the PDF: {feedback}" if invented else "",
        )

    @staticmethod
    def _why_not(
        c: Cited, on_page: dict[int, tuple[list[Printed], float, str, frozenset[str]]]
    ) -> str:
        if c.why:
            return c.why
        if c.hedged:
            return "hedged: one of several different figures offered for one claim"
        if c.page is not None and c.page not in on_page:
            return "no such page"
        where = [c.page] if c.page is not None else list(on_page)
        for n in where:
            printed, scale, currency, page_words = on_page[n]
            if c.currency and currency not in ("", "?", c.currency):
                continue  # a figure in euros is not grounded by a page in dollars
            # A rounded figure must name one row: listing many labels names none.
            named = _named_rows(printed, c.words)
            if not named:  # its clause names no row: its sentence may
                c = dataclasses.replace(c, words=c.context)
                named = _named_rows(printed, c.words)
            claimed = quantities_named(c.words | c.context)
            if not named and claimed and not claimed & quantities_named(page_words):
                continue  # it names a quantity ("revenue", "turnover") no row here prints
            # A row the claim names ties even exact digits to it ("Cash was 26,079" is not
            # grounded by total assets); a claim that names no row is read on the page.
            tied = [p for p in printed if not named or not p.label or p.label in named]
            if c.prior:  # "PY: 150,239": a figure of an earlier column of its row
                tied = [p for p in tied if _earlier_column(p, printed)]
            if not named and claimed:
                tied = [p for p in tied if _of_quantity(p, claimed, c.words | c.context)]
            if any(
                _grounded_by(c, f, scale, len(named) == 1)
                and _moved_as_printed(c, f, printed, scale)
                for f in tied
            ):
                return ""
            rows = _named_rows(printed, c.context)
            terms = [(p.label, p.figure, p.year) for p in printed if p.label in rows]
            if c.derives and derived(c.figure, c.negative, terms, scale):
                return ""  # a difference, ratio or growth of figures on the rows it names
        return "not found"


def _earlier_column(printed: Printed, page: list[Printed]) -> bool:
    """Whether `printed` stands in a column of an earlier year than another of its row."""
    year = printed.year
    return year is not None and any(
        p.label == printed.label and p.year is not None and p.year > year for p in page
    )


def _moved_as_printed(c: Cited, level: Printed, printed: list[Printed], scale: float) -> bool:
    """A level moved to ("rose to 122,445", "from 150,239 to 122,445") moved that way on
    the page: the row's figure it started from (the one the claim names, else the row's
    latest earlier year) is of an earlier year, and below it for a rise, above for a fall.
    Unchecked where the page gives the row no other year."""
    if not (c.moved or c.moved_from) or level.year is None:
        return True
    row = [
        p
        for p in printed
        if p.label == level.label
        and p.year
        and p is not level
        and _same_kind(p.figure, level.figure)
    ]
    if c.moved_from is not None:
        start = dataclasses.replace(c, figure=c.moved_from, moved=0, moved_from=None)
        starts = [p for p in row if _grounded_by(start, p, scale, False)]
        if starts and all(p.year is not None and p.year >= level.year for p in starts):
            return False  # "fell from 26,079 (2024) to 28,147 (2023)": the years reversed
    else:
        starts = [p for p in row if p.year is not None and p.year < level.year]
        starts = sorted(starts, key=lambda p: p.year or 0)[-1:]

    def value(f: Figure) -> float:  # a figure printed without a scale takes the page's
        return f.absolute * (scale if f.scale == 1.0 else 1.0)

    return not c.moved or all(
        (value(level.figure) - value(p.figure)) * c.moved > 0
        for p in starts
        if p.year is not None and p.year < level.year
    )


def printed_move(c: Cited, page_text: str) -> int:
    """How the row that grounds `c` moved into `c`'s column from the year before: +1 up,
    -1 down, 0 where the page gives that row no earlier year (what "rose to" must match)."""
    printed, scale = printed_figures(page_text), scale_from_header(page_text)
    for level in printed:
        if level.year is None or not _grounded_by(c, level, scale, False):
            continue
        for direction in (1, -1):
            if not _moved_as_printed(
                dataclasses.replace(c, moved=direction), level, printed, scale
            ):
                return -direction
    return 0


def other_year(c: Cited, page_text: str) -> tuple[int, int, str] | None:
    """(the year of the printed figure that grounds `c`, another year of its row, that
    year's printed figure) on a page, or None where the page gives the row one year: what
    a claim may add as its prior-year figure ("2024: 122,445 (2023: 150,239)")."""
    printed, scale = printed_figures(page_text), scale_from_header(page_text)
    for level in printed:
        if level.year is None or not _grounded_by(c, level, scale, False):
            continue
        for p in printed:
            same_row = p.label == level.label and _same_kind(p.figure, level.figure)
            if same_row and p.year not in (None, level.year):
                return level.year, p.year or 0, p.figure.text
    return None


def _of_quantity(printed: Printed, claimed: set[str], words: frozenset[str]) -> bool:
    """Whether a claim naming the quantities `claimed` (and no row whole) may be grounded
    on `printed`'s row: a row (else its line) of one of those quantities under any of its
    names ("Debt" by "Borrowings"), or one naming no quantity that shares a word with the claim
    ("Operating income" by "Total operating result"). "Net income was 122,445" is not
    grounded by the revenue row, nor "Debt was 7,816" by property and equipment."""
    if not printed.label:
        return True
    of_row = quantities_named(printed.label) or quantities_named(printed.line)
    return bool(of_row & claimed) if of_row else bool(printed.line & words)


def _named_rows(printed: list[Printed], words: frozenset[str]) -> set[frozenset[str]]:
    """The row labels `words` name, the most specific only ("income tax expense" names
    that row, not also "Other income")."""
    named = {p.label for p in printed if p.label and p.label <= words}
    return {label for label in named if not any(label < other for other in named)}


def _key(c: Cited) -> tuple[float, str, int | None]:
    return (round(c.figure.absolute, 6), c.figure.unit, c.page)
