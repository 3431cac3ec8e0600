"""Characters read as printed: look-alike digits become digits, raised digits powers.

The rule: a character is read as what a reader sees it mean, never as what a compatibility
mapping (NFKC) makes of it.

* decimal digits of any script (Unicode category Nd: fullwidth ``１２``, mathematical bold
  ``𝟏𝟐``, Arabic-Indic ``١٢``, Devanagari, ...) are those digits: ``12``;
* fullwidth punctuation and mathematical alphanumeric letters are their ASCII forms
  (``－５`` is -5, ``𝐱`` is x);
* superscript digits are exponents and subscript digits subscripts, as printed: ``2³`` is
  ``2^{3}`` (8, not 23), ``x₁`` is ``x_{1}``; vulgar fractions are fractions
  (``½`` is ``\\frac{1}{2}``);
* bidirectional controls (U+202A-U+202E, U+2066-U+2069), which make the text display in
  another order than it is written, are refused: what is shown is not what is read.

Other numeric symbols (circled ``①``, Roman ``Ⅻ``) are left as they are: an answer made of
them does not parse, a format failure. Zero-width characters are removed earlier
(`rewardsmith.verifiers.math.spelling`).

    >>> plain_glyphs("１２ and 2³ and ½").text
    '12 and 2^{3} and \\\\frac{1}{2}'
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from fractions import Fraction

__all__ = ["Glyphs", "plain_glyphs"]

_SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻", "0123456789+-")
_SUBSCRIPTS = str.maketrans("₀₁₂₃₄₅₆₇₈₉₊₋", "0123456789+-")
_RAISED = re.compile("[⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻]+")
_LOWERED = re.compile("[₀₁₂₃₄₅₆₇₈₉₊₋]+")
_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069]")
_NON_ASCII = re.compile(r"[^\x00-\x7f]")


@dataclass(frozen=True, slots=True)
class Glyphs:
    text: str
    refused: str | None = None


def _one(char: str) -> str:
    code = ord(char)
    if unicodedata.category(char) == "Nd":
        return str(unicodedata.digit(char))
    if 0xFF01 <= code <= 0xFF5E or 0x1D400 <= code <= 0x1D7FF:  # fullwidth, math letters
        return unicodedata.normalize("NFKC", char)
    if unicodedata.category(char) == "No" and unicodedata.name(char, "").startswith("VULGAR"):
        value = Fraction(unicodedata.numeric(char)).limit_denominator(1000)
        return rf"\frac{{{value.numerator}}}{{{value.denominator}}}"
    return char


def plain_glyphs(text: str) -> Glyphs:
    """The text with digits read as printed (see the module docstring), or why not."""
    if text.isascii():
        return Glyphs(text)
    if _BIDI.search(text):
        return Glyphs(text, "bidirectional control characters reorder what is shown")
    text = _RAISED.sub(lambda m: "^{" + m.group().translate(_SUPERSCRIPTS) + "}", text)
    text = _LOWERED.sub(lambda m: "_{" + m.group().translate(_SUBSCRIPTS) + "}", text)
    return Glyphs(_NON_ASCII.sub(lambda m: _one(m.group()), text))
