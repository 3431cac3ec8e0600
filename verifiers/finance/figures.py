"""Number normalisation for financial text: what figure a cell or a sentence states.

A figure in a report is rarely a bare float. The rules, applied in this order:

- footnote marks are dropped: ``1,234*``, ``1,234†``, ``1,234¹``, ``1,234 (a)``,
  ``1,234 (1)``, ``[3]``;
- currency symbols and codes, before or after the number, are dropped and kept as the
  unit: ``$``, ``€``, ``£``, ``¥``, ``USD``, ``EUR``, ``GBP`` (``1,234 USD``, ``1.234,50 €``);
- thousands separators are removed: ``1,234,567``, ``1 234 567`` (space or thin space),
  the Swiss ``1'234'567`` and the European form ``1.234.567,89``;
- a negative is a leading minus (``-``, ``−``, ``–``), parentheses ``(1,234)``, or a trailing
  minus ``1,234-``;
- a lone dash (``-``, ``–``, ``—``) means zero, as in statements where nil is printed as a dash;
- ``%`` and ``bp``/``bps`` are units (1 bp = 0.01 %);
- a scale word after the number multiplies it: ``1.2 billion``, ``3.4m``, ``$5bn``, ``7k``.

Scale headers ("in thousands", "$ millions", "(000s)", "€m") apply to a whole table; they are
read by `scale_from_header` and scored apart from the digits, as TAT-QA does (Zhu et al.
2021, "TAT-QA: A Question Answering Benchmark on a Hybrid of Tabular and Textual Content
in Finance", which scores the answer and its scale separately and jointly).

    >>> parse_figure("(1,234.5)").value
    -1234.5
    >>> f = parse_figure("$1.2 billion"); (f.value, f.scale, f.unit)
    (1.2, 1000000000.0, '$')
    >>> f.absolute
    1200000000.0
    >>> parse_figure("—").value
    0.0
    >>> scale_from_header("Consolidated balance sheet (in thousands of dollars)")
    1000.0
"""

from __future__ import annotations

import dataclasses
import math
import re
import unicodedata
from dataclasses import dataclass

from rewardsmith.verifiers.finance.quantities import stated_scale

__all__ = [
    "SCALE_WORDS",
    "Figure",
    "decimals_of",
    "find_figure_spans",
    "find_figures",
    "is_data_cell",
    "is_garbled",
    "is_year",
    "parse_figure",
    "restates",
    "scale_from_header",
    "scale_name",
    "sign_unknown",
    "without_denied",
]

MAX_FIGURE_CHARS = 64
"""A single figure longer than this is not a figure (and is never parsed)."""
MAX_TEXT_CHARS = 2_000_000
"""`find_figures` reads at most this much text."""

SCALE_WORDS: dict[str, float] = {
    "thousand": 1e3,
    "thousands": 1e3,
    "k": 1e3,
    "000": 1e3,
    "000s": 1e3,
    "'000": 1e3,
    "million": 1e6,
    "millions": 1e6,
    "mn": 1e6,
    "mm": 1e6,
    "m": 1e6,
    "mio": 1e6,
    "mln": 1e6,
    "billion": 1e9,
    "billions": 1e9,
    "bn": 1e9,
    "b": 1e9,
    "bln": 1e9,
    "trillion": 1e12,
    "trillions": 1e12,
    "tn": 1e12,
}
_SCALE_NAMES = {1.0: "", 1e3: "thousand", 1e6: "million", 1e9: "billion", 1e12: "trillion"}

_CURRENCIES = {"$": "$", "€": "€", "£": "£", "¥": "¥", "usd": "$", "eur": "€", "gbp": "£"}
_DASHES = "-‐‑‒–—―−"  # hyphen, en dash, em dash, minus sign and friends
_FOOTNOTE = re.compile(r"(\s*\[\d{1,2}\]|\s*\([a-z]\)|\s+\(\d{1,2}\)|[*†‡§¹²³⁴⁵⁶⁷⁸⁹⁰]+)$")
_CORE = re.compile(
    r"""^\+?(?P<neg>[-−–]|\()?\s*
        (?P<cur>[$€£¥]|usd|eur|gbp)?\s*
        (?P<neg2>[-−–])?\s*
        (?P<num>\d{1,3}(?:[,\u2009\u202f ]\d{3})+(?:\.\d+)?   # 1,234,567.89
              |\d{1,3}(?:['’]\d{3})+(?:\.\d+)?                  # 1'234'567.89 (Swiss)
              |\d{1,3}(?:\.\d{3})+,\d+                          # 1.234.567,89
              |\d+(?:\.\d+)?|\.\d+)
        \s*(?P<scale>thousands?|millions?|billions?|trillions?|mln|mn|mm|mio|bln|bn|tn|k|m|b)?\.?
        \s*(?P<cur2>[$€£¥]|usd|eur|gbp)?                        # 1,234 USD, 1.234,50 €
        \s*(?P<unit>%|percent|bps?|basis\ points?)?
        \s*(?P<close>\))?\s*(?P<cur3>[$€£¥]|usd|eur|gbp)?\s*(?P<trail>[-−])?$""",
    re.VERBOSE | re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Figure:
    """One stated figure: ``absolute = value * scale``, with its unit kept apart.

    `value` is the number as written (sign applied, separators removed), `scale` the
    multiplier written beside it (1 when none), `unit` one of ``""``, ``"%"``, ``"bp"`` or a
    currency symbol, `decimals` how many decimal places were written (for FinQA-style
    rounding), and `text` the original span.
    """

    value: float
    scale: float = 1.0
    unit: str = ""
    decimals: int = 0
    text: str = ""

    @property
    def absolute(self) -> float:
        return self.value * self.scale


def _clean(text: str) -> str:
    # Footnote marks go before NFKC, which would turn a superscript ¹ into a digit 1.
    text = _FOOTNOTE.sub("", text.strip())
    return _FOOTNOTE.sub("", unicodedata.normalize("NFKC", text).strip()).strip()


def decimals_of(number_text: str) -> int:
    """Decimal places written in a number's digits (``"1,234.50"`` → 2, ``"1.234,5"`` → 1)."""
    if re.fullmatch(r"\d{1,3}(?:\.\d{3})+,\d+", number_text):
        return len(number_text.rsplit(",", 1)[1])
    return len(number_text.rsplit(".", 1)[1]) if "." in number_text else 0


def _to_float(number_text: str) -> float:
    if re.fullmatch(r"\d{1,3}(?:\.\d{3})+,\d+", number_text):  # European 1.234,5
        return float(number_text.replace(".", "").replace(",", "."))
    return float(re.sub(r"[,'’\u2009\u202f ]", "", number_text))


def parse_figure(text: str) -> Figure | None:
    """The figure a cell or short span states, or None when it states no single figure."""
    if not isinstance(text, str) or len(text) > MAX_FIGURE_CHARS:
        return None
    cleaned = _clean(text)
    if cleaned and all(c in _DASHES for c in cleaned):
        return Figure(0.0, text=text)  # a dash is a printed zero
    match = _CORE.match(cleaned)
    if match is None:
        return None
    g = match.groupdict()
    if bool(g["neg"] == "(") != bool(g["close"]):
        return None  # unbalanced parenthesis: not a figure we can trust
    after = g["cur2"] or g["cur3"]  # "1,234 USD", "(1,234) USD"
    if (g["cur2"] and g["cur3"]) or (after and (g["cur"] or g["unit"])):
        return None  # "$1,234 USD", "5 € %": two currencies, or a currency on a percentage
    g["cur"] = g["cur"] or after
    value = _to_float(g["num"])
    negative = bool(g["neg"]) or bool(g["neg2"]) or bool(g["trail"])
    unit = _unit(g["unit"], g["cur"])
    scale = SCALE_WORDS[g["scale"].lower()] if g["scale"] else 1.0
    if not math.isfinite(value):
        return None
    decimals = decimals_of(g["num"])
    return Figure(-value if negative else value, scale, unit, decimals, text)


def is_data_cell(text: str) -> bool:
    """A cell that states a figure, not a bare year such as a column header ``2024``."""
    return parse_figure(text) is not None and not re.fullmatch(r"\s*(19|20)\d\d\s*", text)


def _unit(unit: str | None, currency: str | None) -> str:
    if unit:
        return "%" if unit.lower() in ("%", "percent") else "bp"
    return _CURRENCIES.get(currency.lower(), "") if currency else ""


# A sign touches its number ("- 159" is a dash cell, then 159); a "%" after a space must not
# start a column name ("2023 % change" is a year, then the header "% change").
_FIND = re.compile(
    r"""(?<![\w.,])
        \(?[-−–+]?(?:[$€£¥]\s?)?[-−–]?
        (?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d{1,3}(?:\.\d{3})+,\d+|\d+(?:\.\d+)?)
        (?!\d|[.,]\d)  # never the well-formed start of a longer run ("122,445" of "122,4450")
        (?:\s?(?:thousands?|millions?|billions?|trillions?|mln|mn|bln|bn|tn|k|m|b)\b)?
        (?:%|\s%(?!\s?(?:change|chg|growth|var))|\s?(?:percent\b|bps?\b|basis\ points?\b))?
        (?:\)|[-−](?![\d\w]))?""",
    re.VERBOSE | re.IGNORECASE,
)


def find_figures(text: str) -> list[Figure]:
    """Every figure stated in running text, in order (for grounding checks).

    Parentheses count as a negative only when they wrap the number alone; a trailing
    full stop or comma is punctuation, not a decimal point.
    """
    return [figure for figure, _, _ in find_figure_spans(text)]


def find_figure_spans(text: str) -> list[tuple[Figure, int, int]]:
    """`find_figures` with where each figure sits: (figure, start, end) in the NFKC form
    of `text` (the same as `text` for ordinary prose)."""
    # A superscript footnote mark glued on ("122,445¹") is a blank, not a digit after NFKC.
    text = _GLUED_MARK.sub(" ", text[:MAX_TEXT_CHARS])
    text = unicodedata.normalize("NFKC", text)
    found = [(figure, start, end) for figure, start, end in _glued_runs(text)]
    for match in _FIND.finditer(text):
        span = match.group(0)
        start = match.start() + len(span) - len(span.lstrip())
        end = match.end() - (len(span) - len(span.rstrip()))
        span = span.strip()
        if span.startswith("(") and not span.endswith(")"):
            span, start = span[1:], start + 1
        elif span.endswith(")") and not span.startswith("("):
            span, end = span[:-1], end - 1
        figure = parse_figure(span)
        if figure is not None:
            found.append((figure, start, end))
    return sorted((_sign_marked(text, *f) for f in found), key=lambda f: f[1])


_TRIANGLE = re.compile(r"[△▲▽▼]\s?$")


def _sign_marked(text: str, figure: Figure, start: int, end: int) -> tuple[Figure, int, int]:
    """A figure in square brackets ("[122,445]") or after a triangle ("△122,445") is kept
    with its mark (`sign_unknown`)."""
    if text[start - 1 : start] == "[" and text[end : end + 1] == "]" and start > 0:
        return dataclasses.replace(figure, text=f"[{figure.text}]"), start - 1, end + 1
    triangle = _TRIANGLE.search(text, max(0, start - 2), start)
    if triangle is not None:
        marked = text[triangle.start() : start] + figure.text
        return dataclasses.replace(figure, text=marked), triangle.start(), end
    return figure, start, end


def sign_unknown(figure: Figure) -> bool:
    """A figure whose sign is written in a mark read two ways: square brackets ("[250]":
    some reports print a negative so, others a restated or estimated figure) or a triangle
    ("△250", "▲250": a negative in Japanese reports, a rise elsewhere; "▼250" a fall, or
    nothing). The reader cannot tell which, so `numeric_answer` takes no answer from it
    and `grounding` grounds no claim by it (a citation "[p. 1]" or a footnote reference
    "[3]" below 10 is no such figure)."""
    bracketed = figure.text.startswith("[") and figure.text.endswith("]")
    return bracketed or figure.text[:1] in "△▲▽▼"


_GLUED_MARK = re.compile(r"(?<=[\w%)])[¹²³⁴⁵⁶⁷⁸⁹⁰]+(?!\w)")
"""Superscript footnote marks glued to a figure or its scale word ("122,445¹",
"thousand²")."""
_RUN = re.compile(
    r"(?<![\w.,])(?P<sign>\(|[-−–]\s?)?(?P<num>\d+(?:[.,]\d+)+)(?![\w])"
    r"(?:\s?(?P<scale>thousands?|millions?|billions?|trillions?|mln|mn|bln|bn|tn|k|m|b)\b)?"
    r"(?P<unit>%|\s%(?!\s?(?:change|chg|growth|var))|\s?(?:percent\b|bps?\b))?"
    r"(?P<close>\))?(?P<trail>[-−](?![\d\w]))?",
    re.IGNORECASE,
)
_YEAR_RUN = re.compile(r"(?:19|20)\d{2}(?:,(?:19|20)\d{2})+")
_MIN_RUN_DIGITS = 4
"""A run of fewer digits ("1,2", "3,5") is a list or a decimal comma: no figure."""


_EURO_DECIMAL = re.compile(r"\d+,\d{1,2}")
_SHAPED = re.compile(r"\d{1,2}(?:,\d{2})+,\d{3}(?:\.\d+)?|\d{1,3}(?:\.\d{3}){2,}|\d+,\d{1,2}")
"""Runs with a grouping of their own: Indian ("1,22,445"), dotted thousands ("1.234.567"),
a decimal comma ("1224,45")."""
_LEADING_RUN = re.compile(r"\s*\(?[-−–+]?\s*(?:[$€£¥]\s?)?(\d[\d.,]*\d)")


def is_garbled(figure: Figure) -> bool:
    """A figure read from a run whose separators follow no grouping ("12,2445", "122,4450",
    "122,445.0.5"): its digits are read, but which quantity it states is not written, so it
    answers nothing (`numeric_answer` refuses it; it grounds no claim it does not match)."""
    match = _LEADING_RUN.match(figure.text)
    if match is None or not re.search(r"[.,]", match.group(1)):
        return False
    token = match.group(1)
    return not (_FIND.fullmatch(token) or _SHAPED.fullmatch(token))


def _glued_runs(text: str) -> list[tuple[Figure, int, int]]:
    """Digit runs that no well-formed figure spans: digits glued after a grouped figure
    ("122,4450", "122,445,5", "122,445.0.5"), the Indian grouping ("1,22,445") and dotted
    thousands ("1.234.567"). Each reads as its digits with the separators taken out (one
    dot kept as the decimal point when it is the only one and after every comma), never as
    its well-formed start: "122,4450" is 1,224,450, not 122,445. A list of years
    ("2023,2024") and a run of fewer than `_MIN_RUN_DIGITS` digits read as nothing; a
    single comma before one or two digits is a decimal comma ("1224,45" is 1,224.45), and
    so is a shorter run's with a unit or scale word ("3,5%" is 3.5 %, "1,5 million"; a bare
    "1,2" stays nothing, a list). A run keeps its sign (a leading minus, parentheses
    around it, a trailing minus) and its unit ("%", "bp"), as `parse_figure` reads them."""
    found = []
    for match in _RUN.finditer(text):
        token = match.group("num")
        well_formed = _FIND.fullmatch(token)
        digits = re.sub(r"\D", "", token)
        decimal_comma = _EURO_DECIMAL.fullmatch(token)
        if well_formed or _YEAR_RUN.fullmatch(token):
            continue
        marked = match.group("scale") or match.group("unit")
        if len(digits) < _MIN_RUN_DIGITS and not (decimal_comma and marked):
            continue  # "notes 1,2": a list; "3,5%", "1,5 million": a decimal comma
        dots = token.count(".")
        if decimal_comma:  # "1224,45", "3,5": a decimal comma, 1,224.45 and 3.5
            value, decimals = float(token.replace(",", ".")), len(token.split(",")[1])
        elif dots == 1 and token.rfind(".") > token.rfind(","):
            value = float(token.replace(",", ""))
            decimals = len(token) - token.rfind(".") - 1
        else:
            value, decimals = float(digits), 0
        scale = SCALE_WORDS[match.group("scale").lower()] if match.group("scale") else 1.0
        sign, close = (match.group("sign") or "").strip(), match.group("close")
        start, end = match.start(), match.end()
        if (sign == "(") != bool(close):  # a parenthesis around other words: not the sign
            start += len(match.group("sign") or "") if sign == "(" else 0
            end -= 1 if close else 0
            sign = "" if sign == "(" else sign
        negative = bool(sign) or bool(match.group("trail"))
        unit = _unit(match.group("unit").strip(), None) if match.group("unit") else ""
        text_of = text[start:end]
        figure = Figure(-value if negative else value, scale, unit, decimals, text=text_of)
        found.append((figure, start, end))
    return found


def scale_from_header(text: str) -> float:
    """The multiplier a caption or header declares for a table ("in thousands" → 1000),
    as `quantities.stated_scale` reads it. Returns 1.0 when the text declares no scale."""
    return stated_scale(text)


_YEAR = re.compile(r"\(?(?:FY\s?)?(?:19|20)\d{2}\)?")


def is_year(figure: Figure) -> bool:
    """A bare year ("2024", "(2024)", "FY2024"): a date beside an amount, never an amount
    (no separator, scale, unit or decimals; "2,024" and "$2024" are amounts)."""
    return figure.scale == 1.0 and not figure.unit and bool(_YEAR.fullmatch(figure.text.strip()))


def restates(a: Figure, b: Figure) -> bool:
    """True when `b` states `a`'s quantity again (to the precision of the coarser of the
    two: "$122,445 thousand" and "$122.4 million"), or a different kind of fact (a
    percentage beside an amount); False for two different amounts (a hedge), and where
    either states no known sign ("[122,445]", "△122,445": `sign_unknown`)."""
    if sign_unknown(a) or sign_unknown(b):
        return False
    if (a.unit in ("%", "bp")) != (b.unit in ("%", "bp")):
        return True
    coarse, fine = (a, b) if _precision(a) >= _precision(b) else (b, a)
    return math.isclose(round(fine.absolute / coarse.scale, coarse.decimals), coarse.value)


_DENIED = re.compile(r"\s*[,;(]\s*not\s+")
"""What denies a figure after another ("122,445 thousand, not 150,239", "(not 150,239)"): a
comma, semicolon or parenthesis, then "not"."""


def without_denied(
    text: str, spans: list[tuple[Figure, int, int]]
) -> tuple[str, list[tuple[Figure, int, int]]]:
    """`text` and its figure spans without the figures denied after another ("$122,445
    thousand, not $150,239 thousand" states 122,445 thousand only: the denial is neither a
    second answer nor a doubt of the first). A denied figure that states the quantity of the
    one before it is kept, so it still takes that figure back. The denial's text becomes
    spaces: the other spans keep their places."""
    kept = spans[:1]
    for k in range(1, len(spans)):
        figure, start, end = spans[k]
        gap_start = spans[k - 1][2]
        if _DENIED.fullmatch(text, gap_start, start) is None or restates(kept[-1][0], figure):
            kept.append(spans[k])
            continue
        closed = end + 1 if text[end : end + 1] == ")" else end
        text = text[:gap_start] + " " * (closed - gap_start) + text[closed:]
    return text, kept


def _precision(figure: Figure) -> float:
    return figure.scale * 10.0**-figure.decimals


def scale_name(scale: float) -> str:
    """``1000.0`` → ``"thousand"``; unusual multipliers are written as a number."""
    return _SCALE_NAMES.get(scale, f"x{scale:g}")
