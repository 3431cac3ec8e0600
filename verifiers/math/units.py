"""Units at the end of an answer: recognised, never read as variables, never a free pass.

Two ways to get units wrong, both closed here:

* **a unit read as mathematics**: ``150 \\text{ cm}^2`` parsed as ``150*c*m**2`` fails a
  right answer. `split_unit` takes the unit off the end of an answer before parsing, in
  any of its spellings (``\\text{ cm}^2``, ``\\mathrm{cm^2}``, ``cm²``, ``square
  centimeters``, ``\\,\\text{sq cm}``, ``km/h``, ``^\\circ``);
* **mathematics read as a unit**: a value hidden in a "unit" must not vanish with it.
  Scale words (``5 \\text{ thousand}``, ``2 million``, ``a dozen``) are factors of the
  value, not units; a bare single letter after a number (``12 m``, ``5k``) is a variable
  (only ``\\text{ m}`` or ``\\mathrm{m}`` is a metre); and a unit of another dimension
  (``150 \\text{ cm}^3`` for ``150 \\text{ cm}^2``, ``5 \\text{ kg}`` for ``5 \\text{
  hours}``) makes the answer wrong.

A unit on only one side says nothing about the value (``12`` equals ``12 \\text{ cm}``).
Units of one dimension on both sides are converted exactly (``1.5 \\text{ m}`` equals
``150 \\text{ cm}``; radians and degrees through a factor of ``\\pi``). An angle has
no unit when it is written in radians: a multiple of pi without a unit is read in
radians against a degree, both ways (``\\frac{\\pi}{6}`` for ``30^\\circ`` and ``30^\\circ``
for ``\\frac{\\pi}{6}``), except where the question asks for radians
(`radians_asked`): then degrees answer nothing. Other words in a
text macro after a number (``5 \\text{ apples}``, ``0.06 \\text{ yuan}``) are a generic
unit: dropped, no dimension; words that qualify or compute (``5 \\text{ more}``,
``\\text{ squared}``) are not units.

    >>> quantity = split_unit(r"150 \\text{ cm}^2")
    >>> quantity.value, quantity.unit.dimension, quantity.unit.factor
    ('150', (('m', 2),), Fraction(1, 10000))
    >>> split_unit(r"5 \\text{ thousand}").value
    '\\\\left(5\\\\right) \\\\cdot 1000'
    >>> split_unit("12 m").unit is None
    True
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

__all__ = [
    "Conversion",
    "Quantity",
    "Unit",
    "as_angles",
    "conversion",
    "radians_asked",
    "split_unit",
]

Dimension = tuple[tuple[str, int], ...]


@dataclass(frozen=True, slots=True)
class Unit:
    """A unit: its spelling, its dimension in base units, and its size in them."""

    word: str
    dimension: Dimension
    """Sorted (base, power) pairs over m, g, s, deg, $; () for a generic unit ("apples")."""
    factor: Fraction
    """The unit in base units (cm: 1/100 of m)."""
    pi_power: int = 0
    """A power of pi in the factor (a radian is 180/pi degrees: factor 180, pi_power -1)."""


@dataclass(frozen=True, slots=True)
class Quantity:
    value: str
    """The answer without its unit (scale words folded in as factors)."""
    unit: Unit | None = None


_LENGTH = {
    "mm": "1/1000", "millimeter": "1/1000", "millimetre": "1/1000", "cm": "1/100",
    "centimeter": "1/100", "centimetre": "1/100", "m": "1", "meter": "1", "metre": "1",
    "km": "1000", "kilometer": "1000", "kilometre": "1000", "in": "127/5000",
    "inch": "127/5000", "inches": "127/5000", "ft": "381/1250", "foot": "381/1250",
    "feet": "381/1250", "yd": "1143/1250", "yard": "1143/1250", "mi": "201168/125",
    "mile": "201168/125",
}  # fmt: skip
_BASES: dict[str, tuple[str, int, str]] = {
    **{word: ("m", 1, size) for word, size in _LENGTH.items()},
    **{word: ("g", 1, size) for word, size in {
        "mg": "1/1000", "milligram": "1/1000", "g": "1", "gram": "1", "kg": "1000",
        "kilogram": "1000", "lb": "45359237/100000", "lbs": "45359237/100000",
        "pound": "45359237/100000", "oz": "45359237/1600000", "ounce": "45359237/1600000",
    }.items()},
    **{word: ("s", 1, size) for word, size in {
        "s": "1", "sec": "1", "second": "1", "min": "60", "minute": "60", "h": "3600",
        "hr": "3600", "hrs": "3600", "hour": "3600", "day": "86400", "week": "604800",
        "year": "31536000",
    }.items()},
    **{word: ("m", 3, size) for word, size in {
        "l": "1/1000", "liter": "1/1000", "litre": "1/1000", "ml": "1/1000000",
        "milliliter": "1/1000000", "millilitre": "1/1000000",
    }.items()},
    **{word: ("deg", 1, "1") for word in ("degree", "deg", "°", "circ")},
    **{word: ("$", 1, size) for word, size in {
        "dollar": "1", "usd": "1", "cent": "1/100", "$": "1",
    }.items()},
}  # fmt: skip
_RADIANS = frozenset({"rad", "radian"})
_RATES = {"mph": ("mi", "h"), "kph": ("km", "h")}
# One-letter units are units only inside a text macro (\text{ m}); bare, they are variables.
_ONE_LETTER = frozenset({"m", "g", "s", "h", "l"})
_SCALES = {
    "hundred": 100, "thousand": 10**3, "million": 10**6, "billion": 10**9,
    "trillion": 10**12, "dozen": 12, "lakh": 10**5, "crore": 10**7,
}  # fmt: skip
# Generic units: words that count things or name a currency, and say nothing of the value.
# A list of what is allowed, not of what is refused: any other word after a number
# ("hundreds", "thousandths", "below zero") might change the value, so it stays in it.
_GENERIC = frozenset((
    "unit", "people", "person", "persons", "student", "child", "children", "kid", "boy",
    "girl", "man", "men", "woman", "women", "adult", "friend", "player", "team", "worker",
    "way", "apple", "orange", "banana", "marble", "cookie", "candy", "candies", "book",
    "page", "point", "coin", "car", "item", "piece", "ball", "word", "letter", "game", "tree",
    "time", "egg", "cup", "bottle", "box", "boxes", "bag", "card", "stamp", "pencil", "pen",
    "ticket", "seat", "row", "house", "room", "sheep", "cow", "chicken", "leg", "wheel",
    "side", "edge", "vertex", "vertices", "face", "triangle", "square", "number", "digit",
    "integer", "solution", "pair", "cube", "tile", "step", "move", "handshake", "match",
    "goal", "vote", "question", "problem", "yuan", "euro", "rupee", "yen", "peso", "franc",
    "dollar", "cent",
))  # fmt: skip
_POWER_WORDS = {"square": 2, "sq": 2, "cubic": 3, "cu": 3}
_MACRO = r"\\(?:text|textrm|textnormal|textit|textbf|mathrm|mbox)\s*\{([^{}]*)\}"
_PIECE = re.compile(
    rf"(?P<macro>{_MACRO})|(?P<degree>\^\s*\{{?\s*\\circ\s*\}}?|\\circ|\\degree|°)"
    r"|(?P<power>\^\s*(?:\{\s*[23]\s*\}|[23])|[²³])|(?P<word>[A-Za-z]+\.?|/|\\\$)"
    r"|(?P<space>\s+|\\[,;:! ]|~)"
)
_TAIL_CHARS = 120
_VALUE_END = re.compile(r"[\w}\])!.|]$")


def _unit_word(word: str, wrapped: bool) -> tuple[str, int, Fraction, int] | None:
    """(base, power, factor, pi_power) of one unit word, or None."""
    key = word.rstrip(".").lower()
    if word.rstrip(".") == "L":
        key = "l"
    if len(key) == 1 and key in _ONE_LETTER and not wrapped:
        return None
    for candidate in (key, key[:-1] if key.endswith("s") and len(key) > 3 else key):
        if candidate in _BASES:
            base, power, size = _BASES[candidate]
            return base, power, Fraction(size), 0
        if candidate in _RADIANS:
            return "deg", 1, Fraction(180), -1
    return None


def _tokens(tail: str) -> list[tuple[str, bool]] | None:
    """The tail as (token, wrapped) pairs; None when something in it is not unit-like."""
    tokens: list[tuple[str, bool]] = []
    at = 0
    while at < len(tail):
        match = _PIECE.match(tail, at)
        if match is None:
            return None
        at = match.end()
        kind = match.lastgroup
        if kind == "macro":
            inner = match.group(2).replace("^", " ^")
            for part in re.findall(r"\^\s*\{?[23]\}?|[²³]|[A-Za-z]+\.?|/|°", inner):
                tokens.append((part, True))
        elif kind == "degree":
            tokens.append(("°", False))
        elif kind in ("power", "word"):
            tokens.append((match.group(), False))
    if any(t.lower() in ("/", "per") for t, _ in tokens):  # a rate: m/s, km/h are units
        tokens = [(t, True) for t, _ in tokens]
    return tokens


def _power_of(token: str) -> int | None:
    digits = re.sub(r"[^23²³]", "", token)
    return {"2": 2, "²": 2, "3": 3, "³": 3}.get(digits) if token[:1] in "^²³" else None


@dataclass
class _Reading:
    dims: dict[str, int]
    factor: Fraction = Fraction(1)
    pi_power: int = 0
    scale: int = 1
    generic: bool = False


def _read_unit(tokens: list[tuple[str, bool]]) -> _Reading | None:
    """Read the tokens as ``[scale] term (/ term)*``; None if they are not all a unit."""
    reading = _Reading({})
    at, sign, expecting = 0, 1, True
    while at < len(tokens) and tokens[at][0].lower() in _SCALES:
        reading.scale *= _SCALES[tokens[at][0].lower()]
        at += 1
    if at == len(tokens):
        return reading if reading.scale != 1 else None
    while at < len(tokens):
        token, wrapped = tokens[at]
        lowered = token.lower().rstrip(".")
        if lowered in ("/", "per"):
            if expecting:
                return None
            sign, expecting, at = -1, True, at + 1
            continue
        power = _POWER_WORDS.get(lowered, 1)
        if power != 1:
            at += 1
            if at == len(tokens):
                return None
            token, wrapped = tokens[at]
        found = _unit_word(token, wrapped)
        if found is None and lowered in _RATES:
            return _rate(reading, _RATES[lowered], tokens[at + 1 :])
        if found is None:
            return _generic(reading, tokens[at:])
        at += 1
        if at < len(tokens) and _power_of(tokens[at][0]):
            power *= _power_of(tokens[at][0]) or 1
            at += 1
        base, base_power, factor, pi_power = found
        reading.dims[base] = reading.dims.get(base, 0) + sign * base_power * power
        reading.factor *= factor ** (sign * power)
        reading.pi_power += sign * pi_power * power
        expecting = False
    return None if expecting else reading


def _rate(reading: _Reading, parts: tuple[str, str], rest: list) -> _Reading | None:
    if rest:
        return None
    top, bottom = (_unit_word(p, True) for p in parts)
    assert top is not None and bottom is not None
    reading.dims.update({top[0]: 1, bottom[0]: -1})
    reading.factor *= top[2] / bottom[2]
    return reading


def _singular(word: str) -> str:
    for ending in ("ies", "es", "s"):
        if word.endswith(ending) and word[: -len(ending)] + ("y" if ending == "ies" else "") in (
            _GENERIC
        ):
            return word[: -len(ending)] + ("y" if ending == "ies" else "")
    return word


def _generic(reading: _Reading, rest: list[tuple[str, bool]]) -> _Reading | None:
    """Count words and currencies ("apples", "yuan", "square units"): a generic unit."""
    words = [t.lower().rstrip(".") for t, _ in rest if _power_of(t) is None]
    if reading.dims or not words or not all(_singular(w) in _GENERIC for w in words):
        return None
    reading.generic = True
    return reading


def _as_unit(reading: _Reading, spelling: str) -> Unit | None:
    if reading.generic:
        return Unit(spelling, (), Fraction(1))
    dimension = tuple(sorted((b, p) for b, p in reading.dims.items() if p))
    return Unit(spelling, dimension, reading.factor, reading.pi_power) if dimension else None


def _spelling(tokens: list[tuple[str, bool]]) -> str:
    text = " ".join(t for t, _ in tokens if t.lower() not in _SCALES)
    text = text.replace("²", "^2").replace("³", "^3")
    return re.sub(r"\s*\^\s*\{?([23])\}?", r"^\1", text)


def _money_prefix(value: str) -> Quantity | None:
    if value.startswith(r"\$") and len(value) > 2:
        return Quantity(value[2:].strip(), Unit("$", (("$", 1),), Fraction(1)))
    return None


def split_unit(answer: str) -> Quantity:
    """The answer's value and its unit (None when it has none); see the module docstring."""
    text = answer.strip().rstrip(".").strip()
    head, tail = text[:-_TAIL_CHARS], text[-_TAIL_CHARS:]
    for start in _unit_starts(tail):
        tokens = _tokens(tail[start:])
        if not tokens:
            continue
        reading = _read_unit(tokens)
        value = (head + tail[:start]).rstrip()
        value = re.sub(r"(?:\\[,;:! ]|~)+$", "", value).rstrip()
        if reading is None or not value or not _VALUE_END.search(value):
            continue
        if reading.scale != 1:
            value = rf"\left({value}\right) \cdot {reading.scale}"
        unit = _as_unit(reading, _spelling(tokens)) if reading.dims or reading.generic else None
        return Quantity(value, unit)
    return _money_prefix(text) or Quantity(text)


def _unit_starts(tail: str) -> list[int]:
    """Where a unit may begin: after the value's last digit, bracket or space, leftmost
    first (the longest unit wins)."""
    starts = [m.end() for m in re.finditer(r"[\d)\]}!]|\s|\\[,;:! ]|~", tail)]
    return [s for s in starts if s < len(tail)]


@dataclass(frozen=True, slots=True)
class Conversion:
    """The factor ``ratio * pi^pi_power`` that turns one unit into another."""

    ratio: Fraction = Fraction(1)
    pi_power: int = 0

    @property
    def is_identity(self) -> bool:
        return self.ratio == 1 and self.pi_power == 0

    @property
    def latex(self) -> str:
        ratio = self.ratio
        text = str(ratio.numerator) if ratio.denominator == 1 else (
            rf"\frac{{{ratio.numerator}}}{{{ratio.denominator}}}"
        )  # fmt: skip
        return text + (rf" \cdot \pi^{{{self.pi_power}}}" if self.pi_power else "")


def conversion(gold: Unit | None, answer: Unit | None) -> Conversion | None:
    """What turns the answer's value into the gold's unit: the identity when either has no
    dimension to compare, None when the dimensions differ."""
    if gold is None or answer is None or not gold.dimension or not answer.dimension:
        return Conversion()
    if gold.dimension != answer.dimension:
        return None
    return Conversion(answer.factor / gold.factor, answer.pi_power - gold.pi_power)


_RADIAN = Unit("rad", (("deg", 1),), Fraction(180), -1)
_ASKS_RADIANS = re.compile(r"\bradians?\b", re.IGNORECASE)


def _degrees(quantity: Quantity) -> bool:
    return quantity.unit is not None and quantity.unit.dimension == (("deg", 1),)


def _in_radians(quantity: Quantity) -> Quantity:
    """A multiple of pi with no unit, as an angle in radians; anything else unchanged."""
    if quantity.unit is None and "\\pi" in quantity.value:
        return Quantity(quantity.value, _RADIAN)
    return quantity


def as_angles(gold: Quantity, answer: Quantity) -> tuple[Quantity, Quantity]:
    """Gold and answer with a bare multiple of pi read in radians when the other side is
    in degrees (``\\frac{\\pi}{6}`` and ``30^\\circ`` are one angle), not as a number whose
    unit was left off."""
    if _degrees(gold):
        return gold, _in_radians(answer)
    if _degrees(answer):
        return _in_radians(gold), answer
    return gold, answer


def radians_asked(gold: str, answer: str, prompt: str) -> bool:
    """True when the question asks for radians, the gold is a multiple of pi with no unit,
    and the answer is in degrees: the right angle in the wrong unit."""
    gold_quantity, answer_quantity = split_unit(gold), split_unit(answer)
    in_radians = _in_radians(gold_quantity).unit is _RADIAN
    return in_radians and _degrees(answer_quantity) and bool(_ASKS_RADIANS.search(prompt))
