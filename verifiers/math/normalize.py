"""Normalise an extracted answer string before it is parsed.

Pure string rewriting with linear-time regular expressions, so it is safe on model text in
any process. It removes what carries no mathematical meaning (math delimiters, spacing
macros, ``\\left``/``\\right``, brace groups around the whole answer,
trailing units (`rewardsmith.verifiers.math.units`), degree
signs, thousands separators) and
records the one thing that does and is removed: a percent sign.

    >>> normalise(r"$\\dfrac{3}{4}\\text{ cm}$")
    Normalised(text='\\\\frac{3}{4}', percent=False)
    >>> normalise(r"1{,}000\\%")
    Normalised(text='1000', percent=True)
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from fractions import Fraction

from rewardsmith.verifiers.math.boxes import without_outer_braces
from rewardsmith.verifiers.math.fast import as_number
from rewardsmith.verifiers.math.numerals import repeating_decimals
from rewardsmith.verifiers.math.units import split_unit

__all__ = [
    "LONE_I",
    "Normalised",
    "cis_as_exp",
    "cis_unread",
    "imaginary_units_agreed",
    "normalise",
    "unwrap_command",
]

_UNICODE = {
    "−": "-",
    "–": "-",
    "\u2010": "-",  # hyphen, non-breaking hyphen, figure dash, small and full-width minus
    "\u2011": "-",
    "\u2012": "-",
    "\ufe63": "-",
    "\uff0d": "-",
    "ℝ": r"\mathbb{R}",
    "×": r"\times ",
    "·": r"\cdot ",
    "÷": r"\div ",
    "π": r"\pi ",
    "∞": r"\infty ",
    "√": r"\sqrt ",
    "≤": r"\le ",
    "≥": r"\ge ",
    "≠": r"\ne ",
    "±": r"\pm ",
    "∪": r"\cup ",
    "°": "",
    "\\langle": "(",  # a vector <1, 2> is the tuple (1, 2)
    "\\rangle": ")",
    "⟨": "(",
    "⟩": ")",
    "\\lbrace": "\\{",  # a set written \lbrace 1, 2 \rbrace
    "\\rbrace": "\\}",
}
# A radical sign takes its whole radicand: "√15" is \sqrt{15}, never TeX's "\sqrt 15" (which
# is √1 then 5). A number, one letter, or a bracketed group; other radicands stay as they are.
_RADICAL = re.compile(r"([√∛∜])\s*(\d+(?:\.\d+)?|[A-Za-z](?![A-Za-z])|\([^()]*\)|\{[^{}]*\})")
_ROOT_INDEX = {"√": "", "∛": "[3]", "∜": "[4]"}
_DROP = re.compile(
    r"\\(?:displaystyle|textstyle|left|right|bigl|bigr|Bigl|Bigr|big|Big|quad|qquad|"
    r"mathrm|mathbf|mathit|mathsf|boldsymbol)(?![A-Za-z])|(?<!\\)\\[!,;: ]|~"
)
_DEGREES = re.compile(r"\^\s*\{?\s*\\circ\s*\}?|\\circ|\\degree")
_TEXT_MACROS = (
    "text", "textbf", "textit", "textrm", "textnormal", "texttt", "mbox", "operatorname",
    "mathrm",
)  # fmt: skip
_THOUSANDS = re.compile(r"(?<![\d.])(\d{1,3})((?:,\d{3})+)(?![\d,])")
_WORD_SEPARATORS = re.compile(
    r"\s+(?:or|and)\s+|(?<=[)\]}])\s*(?:or|and)\s*(?=[(\[{\\])|\\lor|\\vee"
    r"|\\text\{\s*(?:or|and)\s*\}"
)
_SPACES = re.compile(r"\s+")
_PERCENT_WORDS = re.compile(r"\s*\b(?:percent(?:age)?|pct)\b", re.IGNORECASE)
_SPACE_THOUSANDS = re.compile(r"-?\d{1,3}(?: \d{3})+(?:\.\d+)?")
_THIN_SPACE_GROUPS = re.compile(r"(\d)(?:\\,|\\ |\\;|~)(?=\d{3}(?!\d))")
# "16,\!386" and "14 {, }916" are the separator "," typeset with a kerning or brace guard.
_GUARDED_COMMA = re.compile(r"(\d)(?:,\\!|\s*\{\s*,\s*\}\s*)(?=\d{3}(?!\d))")
# "1.2e3", "6.02E+23": scientific notation, not 1.2 * e * 3 (a digit on both sides of e).
_E_NOTATION = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)[eE]([+-]?\d{1,6})(?![\w.])")
_REALS = re.compile(r"\\mathbb\s*\{?\s*R\s*\}?(?![A-Za-z^_])")
# TeX's "{3 \over 4}" is \frac{3}{4}; "\over" splits its whole group.
_OVER_GROUP = re.compile(r"\{([^{}]*)\\over(?![A-Za-z])([^{}]*)\}")
_OVER_WHOLE = re.compile(r"([^{}]*)\\over(?![A-Za-z])([^{}]*)")
# A mixed number is a whole value: the whole answer, or an item of a tuple, set or interval,
# or the value after a relation sign ("x = 4\frac{2}{3}", "(1\frac12, 3)"). Written in TeX
# (braced or with digit arguments, "4\frac23") or in plain text with a proper fraction
# ("4 2/3"; "4 5/3" is not a mixed number and stays unread).
_ITEM_START = r"(?:^|(?<=[=,;(\[<>])|(?<=\\le)|(?<=\\ge)|(?<=\\leq)|(?<=\\geq))"
_ITEM_END = r"(?=\s*(?:$|[,;)\]<>=]|\\[lg]e))"
_MIXED_NUMBER = re.compile(
    _ITEM_START
    + r"(\s*)(-?)(\d+)(?:\s*\\frac(?:\{(\d+)\}\{(\d+)\}|(\d)(\d))| (\d+)/(\d+))"
    + _ITEM_END
)


_PUNCTURED = re.compile(
    r"\(\s*-\s*\\infty\s*,\s*\\infty\s*\)\s*\\(?:setminus|backslash)\s*\\\{([^{}]{1,200})\\\}"
    r"|[a-z]\s*(?:\\neq?|!=)\s*(-?\d+(?:\.\d+)?)"
)


# "{x | x > 2}", "\{x \in \mathbb{R} \mid 1 \le x < 3\}": the set of the variable's values
# where a condition of inequalities holds is that condition (read as an interval). A
# condition with an equation ("x^2 = 4") is left alone: its set is not read off the text.
_SET_BUILDER = re.compile(
    r"\\\{\s*([a-zA-Z])\s*(?:\\in\s*(?:\\mathbb\s*\{?\s*R\s*\}?|\\R)\s*)?"
    r"(?:\\mid|\||:|\\vert)\s*([^{}]*?(?:<|>|\\[lg]eq?|\\neq?)[^{}]*?)\s*\\\}"
)


def _set_builder(text: str) -> str:
    match = _SET_BUILDER.fullmatch(text.strip())
    if match is None or "=" in match[2].replace("\\leq", "").replace("\\geq", ""):
        return text
    letters = set(re.findall(r"(?<!\\)\b[a-zA-Z]\b", match[2]))
    return match[2] if letters == {match[1]} else text


def _punctured_line(text: str) -> str:
    """The real line without finitely many plain numbers, as a union of open intervals."""
    match = _PUNCTURED.fullmatch(text.strip())
    if match is None:
        return text
    numbers = [as_number(p.strip()) for p in (match[1] or match[2]).split(",")]
    if any(n is None for n in numbers):
        return text
    points = sorted({n.value for n in numbers if n is not None})
    ends = ["-\\infty", *(f"{p.numerator}/{p.denominator}" for p in points), "\\infty"]
    return " \\cup ".join(f"({a}, {b})" for a, b in itertools.pairwise(ends))


@dataclass(frozen=True, slots=True)
class Normalised:
    """An answer ready to parse, and whether a percent sign was removed from it."""

    text: str
    percent: bool


def unwrap_command(text: str, command: str) -> str:
    """Replace every ``\\command{X}`` by ``X`` (one brace level, no nesting inside X)."""
    return re.sub(rf"\\{command}\s*\{{([^{{}}]*)\}}", r" \1 ", text)


def _over_to_frac(text: str) -> str:
    """``{a \\over b}`` and a whole ``a \\over b`` as ``\\frac{a}{b}``."""
    if "\\over" not in text:
        return text
    text = _OVER_GROUP.sub(r"{\\frac{\1}{\2}}", text)
    whole = _OVER_WHOLE.fullmatch(text)
    return rf"\frac{{{whole[1].strip()}}}{{{whole[2].strip()}}}" if whole else text


def _strip_delimiters(text: str) -> str:
    text = text.strip()
    for left, right in (("$$", "$$"), ("$", "$"), (r"\(", r"\)"), (r"\[", r"\]")):
        if text.startswith(left) and text.endswith(right) and len(text) >= len(left) * 2:
            text = text[len(left) : len(text) - len(right)].strip()
    return text.replace("$", " ")


# cis θ (cos θ + i sin θ) as e^{iθ}: the name, in a command or bare, then its argument, a
# group, a fraction or one token (``\pi/3`` whole).
_CIS = re.compile(
    r"(?:\\(?:operatorname|mathrm|text|textrm)\s*\{\s*cis\s*\}|(?<![A-Za-z\\])cis(?![A-Za-z]))"
    r"(?:\s|\\[,;: !])*"
)
_CIS_TOKEN = re.compile(
    r"-?(?:\d+(?:\.\d+)?(?![\d.])|\\[A-Za-z]+|(?:pi|theta)(?![A-Za-z])|[A-Za-zπθ](?![A-Za-z]))"
    r"(?:\s*/\s*(?:\d+|\\[A-Za-z]+))?"
)
# A degree mark after an angle: the sign, ^\circ, or the word ("cis 30 degrees").
_CIS_DEGREES = re.compile(
    r"\s*(?:\^\s*\{?\s*\\circ\s*\}?|°|(?:\\text\s*\{\s*)?(?:degrees?|deg)\b(?:\s*\})?)"
)
_DEGREES_IN = re.compile(r"\^\s*\{?\s*\\circ\s*\}?|°|\b(?:degrees?|deg)\b")
_CIS_WORD = re.compile(r"\s*\\(?:text|textrm|mathrm)\s*\{\s*cis\s*\}\s*|\s*cis\s*")
_PLAIN_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_CLOSE = {"(": ")", "{": "}"}


def _group_end(text: str, start: int) -> int | None:
    """The index after the bracket closing the one at ``start`` (``(`` or ``{``)."""
    opening, depth = text[start], 0
    for k in range(start, min(len(text), start + 500)):
        depth += (text[k] == opening) - (text[k] == _CLOSE[opening])
        if depth == 0:
            return k + 1
    return None


def _cis_argument(text: str, start: int) -> tuple[str, int] | None:
    """The argument of cis at ``start`` and the index after it, or None."""
    if text.startswith("\\left(", start):
        right = text.find("\\right)", start)
        return (text[start + 6 : right], right + 7) if right > 0 else None
    if start < len(text) and text[start] in _CLOSE:
        end = _group_end(text, start)
        return (text[start + 1 : end - 1], end) if end else None
    if text.startswith("\\frac", start) or text.startswith("\\dfrac", start):
        brace = text.find("{", start)
        first = _group_end(text, brace) if brace > 0 else None
        second = _group_end(text, first) if first and text[first : first + 1] == "{" else None
        return (text[start:second], second) if second else None
    token = _CIS_TOKEN.match(text, start)
    return (token.group(), token.end()) if token else None


def cis_as_exp(text: str) -> str:
    """``cis θ`` written as ``e^{i(θ)}``; a number of degrees (``cis 30°``, ``cis(30^\\circ)``,
    ``cis 30 degrees``) as its radians. A bare number (``cis 60``: degrees or radians?)
    and any other angle in degrees are left unread (`cis_unread`).

    >>> cis_as_exp(r"2\\operatorname{cis}\\frac{\\pi}{3}")
    '2e^{i(\\\\frac{\\\\pi}{3})}'
    >>> cis_as_exp("2 cis 30 degrees")
    '2 e^{i(\\\\frac{\\\\pi}{6})}'
    >>> cis_as_exp(r"\\text{cis}")
    '\\\\text{cis}'
    """
    if "cis" not in text:
        return text
    out, last = [], 0
    for name in _CIS.finditer(text):
        if name.start() < last:
            continue
        found = _cis_argument(text, name.end())
        if found is None:
            continue
        argument, end = found
        mark = _CIS_DEGREES.match(text, end)
        degrees = _DEGREES_IN.sub("", argument).strip() if _DEGREES_IN.search(argument) else None
        if mark is not None and degrees is None:
            degrees, end = argument.strip(), mark.end()
        if degrees is not None:  # "cis 30°" is e^{i pi/6}; another angle in degrees is unread
            if not _PLAIN_NUMBER.fullmatch(degrees):
                continue
            argument = _radians(degrees)
        elif _PLAIN_NUMBER.fullmatch(argument.strip()) and float(argument) != 0:
            continue  # "cis 60": degrees or radians? (`cis_unread`)
        out.append(f"{text[last : name.start()]}e^{{i({argument})}}")
        last = end
    return "".join(out) + text[last:]


def _braced_root(radical: re.Match[str]) -> str:
    """A radical sign and its radicand as TeX: ``√(x+1)`` -> ``\\sqrt{x+1}``, ``∛8`` ->
    ``\\sqrt[3]{8}``."""
    radicand = radical[2]
    if radicand[0] in "({":
        radicand = radicand[1:-1]
    return rf"\sqrt{_ROOT_INDEX[radical[1]]}{{{radicand}}}"


def _radians(degrees: str) -> str:
    """A number of degrees as a multiple of pi in lowest terms (``30`` is ``\\frac{\\pi}{6}``:
    the cost estimate reads ``\\frac{90\\pi}{180}`` in an exponent as a huge power)."""
    turn = Fraction(degrees) / 180
    sign, top = ("-" if turn < 0 else ""), abs(turn.numerator)
    pi = "\\pi" if top == 1 else f"{top}\\pi"
    return f"{sign}{pi}" if turn.denominator == 1 else rf"{sign}\frac{{{pi}}}{{{turn.denominator}}}"


def cis_unread(text: str) -> bool:
    """Whether `text` still names cis where `cis_as_exp` read no argument (``2 cis 60``:
    degrees or radians?). Read as letters it would be the product c·i·s, a number the
    answer never meant."""
    return bool(_CIS.search(text)) and not _CIS_WORD.fullmatch(text)


def normalise(text: str) -> Normalised:
    """Canonical text for parsing; see the module docstring for what is removed."""
    text = cis_as_exp(text)  # before "°" is dropped
    text = _RADICAL.sub(_braced_root, text)
    for char, replacement in _UNICODE.items():
        if char in text:
            text = text.replace(char, replacement)
    text = _strip_delimiters(text)
    text = repeating_decimals(text)  # "x = 0.\overline{3}": numerals.py
    text = _E_NOTATION.sub(r"\1 \\times 10^{\2}", text)
    text = _set_builder(text)  # {x | x > 2} is x > 2
    text = _REALS.sub(r"(-\\infty, \\infty)", text)  # the real line is an interval
    text = _punctured_line(text)  # R \ {1} and x \ne 1 are (-oo, 1) U (1, oo)
    text = split_unit(text).value  # a trailing unit says nothing about the value (units.py)
    text = re.sub(r"\\[dtc]frac(?![A-Za-z])", r"\\frac", text)
    text = re.sub(r"\\[dt]binom(?![A-Za-z])", r"\\binom", text)
    text = text.replace(r"\$", " ")
    text = _DEGREES.sub("", text)
    text = _PERCENT_WORDS.sub("%", text)
    percent = "%" in text
    text = text.replace(r"\%", " ").replace("%", " ")
    text = _WORD_SEPARATORS.sub(", ", text)
    for command in _TEXT_MACROS:
        text = unwrap_command(text, command)
    text = _over_to_frac(text)
    text = _GUARDED_COMMA.sub(r"\1,", text)
    text = _THIN_SPACE_GROUPS.sub(r"\1", text)  # 2\,500 is 2500, not 2 * 500
    text = _DROP.sub(" ", text)
    text = text.replace("{,}", ",")
    text = without_outer_braces(text.strip())  # \boxed{{(1, 2)}}, \boxed{\mathbf{(1, 2)}}
    if not any(bracket in text for bracket in "([{"):
        text = _THOUSANDS.sub(lambda m: m.group(1) + m.group(2).replace(",", ""), text)
    text = _SPACES.sub(" ", text).strip().rstrip(".").strip()
    if _SPACE_THOUSANDS.fullmatch(text):  # a whole answer "1 000 000"
        text = text.replace(" ", "")
    text = _MIXED_NUMBER.sub(_mixed_as_sum, text)  # "4\frac{1}{2}" is 4 1/2, not 4 * 1/2
    return Normalised(text, percent)


# The letters i and j standing alone: not in a word, a command, a subscript or a call.
LONE_I = re.compile(r"(?<![A-Za-z\\_])(?<!_\{)i(?![A-Za-z_(])")
_LONE_J = re.compile(r"(?<![A-Za-z\\_])(?<!_\{)j(?![A-Za-z_(])")


def imaginary_units_agreed(gold: str, answer: str) -> tuple[str, str]:
    """Both sides with one imaginary unit: engineers write j for i (``3+4j`` is ``3+4i``).
    Only where one side has j and no i and the other has i and no j; where both sides
    have j, or neither has i, a j is a variable, as written.

    >>> imaginary_units_agreed("3+4i", "3+4j")
    ('3+4i', '3+4i')
    >>> imaginary_units_agreed("5", "5j")
    ('5', '5j')
    """
    gold_j, answer_j = _LONE_J.search(gold), _LONE_J.search(answer)
    gold_i, answer_i = LONE_I.search(gold), LONE_I.search(answer)
    if answer_j and not answer_i and gold_i and not gold_j:
        return gold, _LONE_J.sub("i", answer)
    if gold_j and not gold_i and answer_i and not answer_j:
        return _LONE_J.sub("i", gold), answer
    return gold, answer


def _mixed_as_sum(match: re.Match[str]) -> str:
    space, sign, whole, *fraction = match.groups()
    pairs = zip(fraction[::2], fraction[1::2], strict=True)  # braced, digit arguments, plain
    top, bottom = next((t, b) for t, b in pairs if t is not None)
    plain = fraction[4] is not None
    if plain and int(top) >= int(bottom):
        return match.group(0)  # "4 5/3" is no mixed number: left for the parser to refuse
    return f"{space}{sign}({whole}+\\frac{{{top}}}{{{bottom}}})"
