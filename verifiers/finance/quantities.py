"""One reading of financial quantities in words, shared by every finance verifier.

`figures` reads the digits of one figure ("(1,234.5)", "$1.2bn", "18.5%"); this module
reads what the words around figures say about them, once, for `numeric_answer`,
`grounding`, `chart_claims`, `table_match`, `consistency` and `cross_document`:

- **scale phrases** (`stated_scale`): "in thousands", "(Millions of dollars)", "Millions"
  alone in a header cell, "(in mln)", "$m", "€ thousands", "USD mn", "(000s)", "in
  thousands?" in a question;
- **currencies** (`currency_of`): symbols, ISO codes and words ("$", "USD", "dollars",
  "€", "EUR", "euros", "£", "pounds", "¥", "yen", "CHF", "francs"), as one symbol each;
- **direction** (`direction_of`): words that say a figure went up (rose, grew, climbed,
  jumped, higher) or down (fell, slid, declined, dropped, slipped, dipped, lower);
- **sign in words** (`negative_in_words`): "a loss of 12.5", "net loss of 899", "a decrease
  of 18.5%", "fell 18.5%", "down 3%" state a negative figure; "fell to 122,445" states a
  level, not a change, and is not negative;
- **separators** (`model_text`): "122 445" and "122 445" (thin space) are one figure in a
  model's answer, and "(899) thousand" is ``(899 thousand)``; page text is not rewritten
  (a PDF line "Region B6 137 796" holds two figures);
- **fiscal years** (`fiscal_year`): "FY2024", "FY 2024", "fiscal 2024", "Year ended Dec
  31, 2024", "2024A" all name the year 2024.

Percent and ratio: a percentage is a unit (``"%"``); a ratio has none; a percentage point
(``"pp"``) is a difference of percentages. A percent sign on a ratio is 100 times off and
never equals it (`numeric.same_quantity`).

    >>> stated_scale("(Millions of dollars)"), stated_scale("What was it, in thousands?")
    (1000000.0, 1000.0)
    >>> currency_of("151 million euros"), currency_of("$151m"), currency_of("151")
    ('€', '$', '')
    >>> direction_of("Revenue slid in 2024"), direction_of("costs climbed")
    (-1, 1)
    >>> negative_in_words("Revenue showed a decrease of "), negative_in_words("fell to ")
    (True, False)
    >>> model_text("122 445 thousand; (899) thousand")
    '122,445 thousand; (899 thousand)'
    >>> fiscal_year("Year ended Dec 31, 2024"), fiscal_year("FY2023")
    (2024, 2023)
"""

from __future__ import annotations

import re
import unicodedata
from decimal import Decimal

__all__ = [
    "CURRENCY_WORDS",
    "DOWN_WORDS",
    "UP_WORDS",
    "both_directions",
    "currency_of",
    "direction_of",
    "fiscal_year",
    "model_text",
    "negative_after",
    "negative_in_words",
    "scale_of_word",
    "sign_words_after",
    "stated_scale",
]

_SCALES: dict[str, float] = {
    "thousand": 1e3, "thousands": 1e3, "k": 1e3, "000": 1e3, "000s": 1e3, "tsd": 1e3,
    "million": 1e6, "millions": 1e6, "mn": 1e6, "mm": 1e6, "m": 1e6, "mio": 1e6, "mln": 1e6,
    "billion": 1e9, "billions": 1e9, "bn": 1e9, "b": 1e9, "bln": 1e9,
    "trillion": 1e12, "trillions": 1e12, "tn": 1e12,
}  # fmt: skip
_LONG = r"(thousands?|millions?|billions?|trillions?|mln|mio|mn|mm|bln|bn|tn|tsd|'?000s?)"
_ANY = r"(thousands?|millions?|billions?|trillions?|mln|mio|mn|mm|bln|bn|tn|tsd|'?000s?|k|m|b)"
_CUR = r"(?:[$€£¥]|\b(?:usd|eur|gbp|jpy|chf|us\$)\b)"
_SCALE_PHRASES = [
    # "in thousands", "in $ millions", "in USD mn", "$ in millions", "in thousands?"
    re.compile(rf"\bin\s+(?:{_CUR}\s*)?{_LONG}(?![\w])", re.I),
    # "$m", "€ thousands", "USD mn", "US$ bn", "(€k)"
    re.compile(rf"{_CUR}\s*{_ANY}(?![\w])", re.I),
    # "(Millions of dollars)", "(000s)", "(in mln)", "($000)", "(thousands of euros)"
    re.compile(rf"\(\s*(?:in\s+)?(?:{_CUR}\s*)?{_LONG}(?:\s+of\s+[a-z. ]+)?\s*\)", re.I),
    # "millions of dollars", "thousands of US dollars"
    re.compile(rf"\b{_LONG}\s+of\s+(?:us\s+)?(?:dollars|euros|pounds|yen|francs)\b", re.I),
    # a header cell that is the scale alone: "Millions", "Thousands"
    re.compile(r"^\s*(thousands|millions|billions)\s*$", re.I | re.M),
]

CURRENCY_WORDS: dict[str, str] = {
    "$": "$", "usd": "$", "us$": "$", "dollar": "$", "dollars": "$",
    "€": "€", "eur": "€", "euro": "€", "euros": "€",
    "£": "£", "gbp": "£", "pound": "£", "pounds": "£", "sterling": "£",
    "¥": "¥", "jpy": "¥", "yen": "¥", "chf": "CHF", "franc": "CHF", "francs": "CHF",
}  # fmt: skip
_CURRENCY = re.compile(
    r"us\$|[$€£¥]|\b(?:usd|eur|gbp|jpy|chf|dollars?|euros?|pounds?|sterling|yen|francs?)\b",
    re.I,
)

UP_WORDS = (
    r"rose|rise[sn]?|rising|increased?|increases|increasing|grew|grow[sn]?|growing|"
    r"climbed|climbs?|gained|gains?|jumped|jumps?|soared|surged|advanced|expanded|improved|"
    r"rocketed|skyrocketed|spiked|recovered|rebounded|higher|up"
)
DOWN_WORDS = (
    r"fell|falls?|fallen|falling|decreased?|decreases|decreasing|declined?|declines|"
    r"declining|dropped|drops?|slid|slides?|sliding|slipped|slips?|dipped|dips?|plunged|"
    r"plummeted|tumbled|sank|shrank|contracted|eased|collapsed|slumped|crashed|lower(?:ed)?|"
    r"down"
)
_UP = re.compile(rf"\b(?:{UP_WORDS})\b", re.I)
_DOWN = re.compile(rf"\b(?:{DOWN_WORDS})\b", re.I)
_NEGATIVE_BEFORE = re.compile(
    rf"(?:\b(?:losses|loss|deficit|decrease|decline|drop|fall|reduction|contraction|"
    rf"shortfall|outflow|negative|minus)\s*(?:of|was|were|is|at|:|-|totall?ing|amounting\s+to)?"
    rf"|\b(?:{DOWN_WORDS})\s*(?:by)?)"
    r"\s*(?:about|approximately|roughly|some|around|nearly|almost)?\s*(?:[$€£¥]|usd|eur)?\s*$",
    re.I,
)
_SPACED = re.compile(r"(?<![\d,.])\d{1,3}(?:[ \u00a0\u2009\u202f]\d{3})+(?![\d,]|\.\d)")
_LATEX_GROUP = re.compile(r"(?<=\d)\{,\}(?=\d{3})")
"""LaTeX's thousands separator, ``122{,}445`` (a comma in braces, so it sets no space)."""
_PAREN_SCALE = re.compile(
    r"\((\s*[$€£¥]?\s*\d[\d,.]*)\)\s*(thousands?|millions?|billions?|mn|bn|m|k)\b", re.I
)
_FISCAL = re.compile(
    r"\b(?:fy|fiscal(?:\s+year)?|year\s+ended|years\s+ended|ye)\s*'?\s*"
    r"(?:[a-z]{3,9}\.?\s+\d{1,2},?\s+)?((?:19|20)\d{2}|\d{2})\b|\b((?:19|20)\d{2})[ae]\b",
    re.I,
)


def stated_scale(text: str) -> float:
    """The multiplier `text` declares for its bare amounts (a caption, a header cell, a
    question): 1.0 when it declares none."""
    text = unicodedata.normalize("NFKC", text[:10_000])
    found = [(m.start(), m) for p in _SCALE_PHRASES for m in [p.search(text)] if m]
    if not found:
        return 1.0
    match = min(found, key=lambda pair: pair[0])[1]
    word = next(g for g in match.groups() if g).lower().lstrip("'")
    return _SCALES.get(word, 1.0)


def currency_of(text: str) -> str:
    """The one currency `text` names ("$", "€", "£", "¥", "CHF"), "" for none, or "?" when
    it names several different ones."""
    found = {CURRENCY_WORDS[m.group(0).lower()] for m in _CURRENCY.finditer(text[:10_000])}
    return "" if not found else found.pop() if len(found) == 1 else "?"


def direction_of(text: str) -> int:
    """+1 when `text` says up, -1 when it says down, 0 for neither or both."""
    up, down = bool(_UP.search(text)), bool(_DOWN.search(text))
    return 1 if up and not down else -1 if down and not up else 0


def both_directions(text: str) -> bool:
    """Does `text` say both up and down ("rebounded in 2020 after falling in 2019")?"""
    return bool(_UP.search(text)) and bool(_DOWN.search(text))


def negative_in_words(before: str) -> bool:
    """Do the words just before a figure make it negative ("a loss of", "fell", "a decrease
    of")? A level reached ("fell to", "declined from") is not."""
    return bool(_NEGATIVE_BEFORE.search(before[-80:]))


_E_NOTATION = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?[eE][+-]?\d{1,3})(?![\w.])")


# A currency word may come first: "$289 thousand dollars negative".
_NEGATIVE_AFTER = re.compile(
    r"^(?:\s*(?:usd|eur|gbp|jpy|chf|dollars?|euros?|pounds?|sterling|yen|francs?)\b)?"
    r"(?:\s*(?:lower|less|smaller|down|decrease|decline|drop|fall|reduction|loss)\b"
    r"|\s*[,(]?\s*negative\b(?:\s*\))?)",
    re.I,
)


def negative_after(after: str) -> bool:
    """Do the words just after a figure make it negative ("18.5% lower", "a 5% decline",
    "122,445 thousand (negative)")?"""
    return sign_words_after(after) > 0


def sign_words_after(after: str) -> int:
    """How many characters at the start of `after` are words that make the figure before
    them negative (`negative_after`); 0 where there are none."""
    found = _NEGATIVE_AFTER.match(after[:40])
    return found.end() if found else 0


_SHORT_FISCAL = re.compile(r"\bFY\s?['’-]?(\d{2})\b", re.I)
"""A fiscal year in two digits ("FY24", "FY'24", "FY 24"): the 2000s' year, as "FY2024"."""


_FOOTNOTE_MARK = re.compile(r"(?<=[\w%)])[¹²³⁴⁵⁶⁷⁸⁹⁰]+(?!\w)")
"""A superscript footnote mark glued to a figure or its scale word ("122,445¹ thousand",
"thousand²"): NFKC would make it a digit of the figure."""

_MARKER = re.compile(
    r"(?<=\d)(\s?(?:thousands?|millions?|billions?|trillions?|mn|bn|m|k)\b)?"
    r"(?:\s+\([1-9]\)|\s+\([ac-jl-z]\)|\s?\[[1-9]\]|\*{1,3}|[†‡§])(?![\w(\[])"
)
"""A footnote marker written after a figure or its scale word ("122,445 (1) thousand",
"122,445 thousand (1)", "122,445 (a)", "122,445* thousand", "122,445 [1]"): one digit or
letter in brackets (a scale letter, "(m)", aside) or a star or dagger, no second figure (a
hedge) or negative."""


def model_text(text: str) -> str:
    """A model's text with its figures in one form: footnote marks glued on or written
    after a figure dropped ("122,445¹", "122,445 (1) thousand"), digit groups separated by
    spaces, thin spaces or LaTeX's ``{,}`` joined with commas, E-notation written out
    ("1.22e5" is 122000), a scale after a parenthesised figure put inside, and a two-digit
    fiscal year written in four ("FY24" is "FY2024": a year, not the figure 24)."""
    text = _FOOTNOTE_MARK.sub("", text)
    text = _MARKER.sub(lambda m: m.group(1) or "", text)
    text = _SHORT_FISCAL.sub(lambda m: f"FY{2000 + int(m.group(1))}", text)
    text = _E_NOTATION.sub(lambda m: format(Decimal(m.group(1)), "f"), text)
    text = _LATEX_GROUP.sub(",", text)
    text = _SPACED.sub(lambda m: re.sub(r"[ \u00a0\u2009\u202f]", ",", m.group(0)), text)
    return _PAREN_SCALE.sub(r"(\1 \2)", text)


def fiscal_year(text: str) -> int | None:
    """The year a fiscal-year label names ("FY2024", "FY 24", "Year ended Dec 31, 2024",
    "2024A"), or None."""
    match = _FISCAL.search(text)
    if match is None:
        return None
    year = match.group(1) or match.group(2)
    return int(year) if len(year) == 4 else 2000 + int(year)


def scale_of_word(word: str) -> float:
    """``"mln"`` → 1e6; 1.0 for a word that is no scale."""
    return _SCALES.get(word.lower().lstrip("'"), 1.0)
