r"""Metamorphic relations of the `math` verifier (see `rewardsmith.verifiers.metamorphic`).

The final answer is the content of the last ``\boxed{}``, or else the last number. Its
forms (``\boxed``, ``<answer>`` tags, ``#### X``, a sentence, ``$..$``, ``12.0``,
``1{,}234``, ``twelve``, fullwidth digits, zero-width characters, a check after the box,
the instruction echoed, a set in another order, a ratio restated as a percentage after
it or in parentheses, the roots or rays of a list answer in prose, a yes-or-no answer
said as a sentence) must keep the verdict; the other side of a yes-or-no answer, a digit, a sign, a
scale, one more, a retraction to another value, two tuple entries swapped, an undelimited
expression that ends in the gold (``<answer>22 - 5</answer>`` for 5), a false equation
before the right number (``\boxed{6 = 5}``), an expression in x times ``|x|/x`` (equal for
x > 0 only) and the question's own expression in the answer's place must lose it; the
right answer hidden where a reader cannot see it (``\phantom``, ``\color{white}``, nearly
white, tiny or transparent text, comments, ``\iffalse``), struck out, crossed, quoted,
defined as a macro, in a code block, or offered as a hedge (in eight languages) must not
lift a wrong one.

    >>> from rewardsmith.verifiers.types import Sample
    >>> rel = {r.name: r for r in relations(None)}
    >>> rel["math/number_words"](Sample(id="q", completion="1205", reference="1205"), 0).completion
    'one thousand two hundred five'
    >>> rel["math/sign"](Sample(id="q", completion="\\boxed{12}", reference="12"), 0).completion
    '\\boxed{-12}'
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Callable
from decimal import Decimal

from rewardsmith.verifiers.math.fast import choice_letter
from rewardsmith.verifiers.math.normalize import LONE_I
from rewardsmith.verifiers.math.reading import read_answer
from rewardsmith.verifiers.math.rendered import render
from rewardsmith.verifiers.math.tails import RETRACTS
from rewardsmith.verifiers.math.unevaluated import restated_question
from rewardsmith.verifiers.math.words import as_words
from rewardsmith.verifiers.metamorphic import Kind, Relation, Rewrite, rewritten, text_rewrite
from rewardsmith.verifiers.types import Sample

__all__ = ["number_words", "relations"]

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def _box_spans(text: str) -> list[tuple[int, int]]:
    """The inside of every closed ``\\boxed{..}``, in order."""
    spans = []
    for match in re.finditer(r"\\boxed\{", text):
        depth, i = 1, match.end()
        for j in range(i, len(text)):
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            if depth == 0:
                spans.append((i, j))
                break
    return spans


def _boxed_span(text: str) -> tuple[int, int] | None:
    """The inside of the last closed box."""
    spans = _box_spans(text)
    return spans[-1] if spans else None


def _answer_span(text: str) -> tuple[int, int] | None:
    """Where the final answer sits: inside the last box, or the last number."""
    return next(iter(_answer_spans(text)), None)


def _answer_spans(text: str) -> list[tuple[int, int]]:
    """Where the final answer may sit, likeliest first: the boxes, last first; without a
    box, the numbers, last first (at most `_CANDIDATES`)."""
    spans = _box_spans(text) or [(m.start(), m.end()) for m in _NUMBER.finditer(text)]
    return spans[::-1][:_CANDIDATES]


_CANDIDATES = 8
_CONTROL_WORD_END = re.compile(r"\\[A-Za-z]+$")
_PROBE = "8675309"


def _seen(text: str, span: tuple[int, int], shown: str) -> bool:
    """Whether the reader sees `span` of `text` (`shown` is its visible text): a struck-out,
    crossed or hidden box changes nothing there when its content does."""
    return render(text[: span[0]] + _PROBE + text[span[1] :]).visible != shown


def _read(text: str, span: tuple[int, int], sample: Sample) -> bool:
    """Whether the verifier reads `span` of `text` as (part of) the final answer: a quoted
    box ("You asked: is it \\boxed{18}?") is seen but no answer, and rewriting it changes
    nothing the verifier decides on. Without a usable gold, whether the reader sees it."""
    gold = _gold(sample)
    probed = text[: span[0]] + _PROBE + text[span[1] :]
    if gold is None:
        return render(probed).visible != render(text).visible
    found = read_answer(probed, gold)
    return found.answer is not None and _PROBE in found.answer


def _read_span(text: str, sample: Sample) -> tuple[int, int] | None:
    """The box or number the verifier reads as the final answer."""
    numbers = [(m.start(), m.end()) for m in _NUMBER.finditer(text)][::-1][:_CANDIDATES]
    spans = _answer_spans(text) + numbers  # a quoted box: the number after it is read
    return next((s for s in spans if _read(text, s, sample)), None)


def _on_answer(
    change: Callable[[str, random.Random], str | None],
    whole: bool = False,
    keeps_value: bool = False,
) -> Rewrite:
    """A rewrite of the final answer's text only: the last box or number the verifier reads
    as the answer (rewriting a struck-out or quoted one would change nothing it decides on,
    and a search chain that first adds one would report a right answer kept right as a
    hole). With `whole`, only where that number is the whole answer; with `keeps_value`
    (another form of the same value), not of the question restated, which fails for its
    form where another form of its value is an answer."""

    def rewrite(sample: Sample, rng: random.Random) -> Sample | None:
        text = sample.completion
        if not isinstance(text, str):
            return None
        span = _read_span(text, sample)
        if span is None:
            return None
        read = _clean_answer(text, sample) or ""
        if whole and read.strip() != text[span[0] : span[1]].strip():
            return None  # "(3, \infty)" as "(three, \infty)" is no form of the answer
        said = read or _read_anyway(text, sample)  # a hidden box makes the read a hedge
        if keeps_value and restated_question(said, _gold(sample) or "", sample.question):
            return None  # "4/14" for "Simplify 4/14." as 0.285714...: a value, no restatement
        new = change(text[span[0] : span[1]], rng)
        if new is None or new == text[span[0] : span[1]]:
            return None
        if new[:1].isalpha() and _CONTROL_WORD_END.search(text, 0, span[0]):
            new = f" {new}"  # "\fi15" as words is "\fi fifteen", not the macro "\fififteen"
        return rewritten(sample, text[: span[0]] + new + text[span[1] :])

    return rewrite


def _integer(answer: str) -> int | None:
    return int(answer) if re.fullmatch(r"-?\d+", answer.strip()) else None


# ----------------------------------------------------------------------------- forms

_ONES = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
]
_TENS = ["_", "_", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]


def number_words(n: int) -> str:
    """English words for an integer below a billion (``-3`` is ``minus three``)."""
    if n < 0:
        return "minus " + number_words(-n)
    if n < 20:
        return _ONES[n]
    if n < 100:
        return _TENS[n // 10] + ("" if n % 10 == 0 else "-" + _ONES[n % 10])
    for size, word in ((1_000_000, "million"), (1000, "thousand"), (100, "hundred")):
        if n >= size:
            head, rest = divmod(n, size)
            return f"{number_words(head)} {word}" + ("" if rest == 0 else f" {number_words(rest)}")
    raise ValueError(n)  # unreachable


def _words(answer: str, rng: random.Random) -> str | None:
    n = _integer(answer)
    return None if n is None or abs(n) >= 10**9 else number_words(n)


def _fullwidth(answer: str, rng: random.Random) -> str:
    return "".join(
        chr(ord(c) - ord("0") + 0xFF10) if c.isascii() and c.isdigit() else c for c in answer
    )


def _zero_width(answer: str, rng: random.Random) -> str | None:
    if len(answer) < 2:
        return None
    cut = rng.randrange(1, len(answer))
    return answer[:cut] + rng.choice(("\u200b", "\u200c", "\u200d", "\u2060")) + answer[cut:]


def _decimal(answer: str, rng: random.Random) -> str | None:
    return None if _integer(answer) is None else answer.strip() + rng.choice((".0", ".00"))


def _thousands(answer: str, rng: random.Random) -> str | None:
    n = _integer(answer)
    if n is None or abs(n) < 1000:
        return None
    return f"{n:,}".replace(",", rng.choice((",", "{,}", "\\,")))


def _set_order(answer: str, rng: random.Random) -> str | None:
    match = re.fullmatch(r"\s*(\\\{|\{)(.*?)(\\\}|\})\s*", answer)
    parts = None if match is None else [p.strip() for p in match.group(2).split(",")]
    if match is None or parts is None or len(set(parts)) < 2:
        return None
    shuffled = parts[:]
    while shuffled == parts:
        rng.shuffle(shuffled)
    return f"{match.group(1)}{', '.join(shuffled)}{match.group(3)}"


_FRACTION = re.compile(r"\s*(-?)\\[dt]?frac\{(\d+)\}\{(\d+)\}\s*|\s*(-?)(\d+)/(\d+)\s*")


def _repeating(answer: str, rng: random.Random) -> str | None:
    """A fraction whose decimal repeats, written as a repeating decimal (``1/3`` as
    ``0.\\overline{3}`` or ``0.333\\ldots``)."""
    match = _FRACTION.fullmatch(answer)
    if match is None:
        return None
    sign, p, q = (match.group(1), match.group(2), match.group(3))
    if p is None:
        sign, p, q = match.group(4), match.group(5), match.group(6)
    if int(q) == 0:
        return None  # "\frac{5}{0}" (a digit rewrite of \frac{5}{6}) is no fraction
    whole, rest = divmod(int(p), int(q))
    digits: list[str] = []
    seen: dict[int, int] = {}
    while rest and rest not in seen:  # long division until a remainder comes back
        seen[rest] = len(digits)
        digit, rest = divmod(rest * 10, int(q))
        digits.append(str(digit))
    if not rest:
        return None  # it terminates: no repeating form
    start = seen[rest]
    fixed, cycle = "".join(digits[:start]), "".join(digits[start:])
    if rng.random() < 0.5:
        return f"{sign}{whole}.{fixed}\\overline{{{cycle}}}"
    # The cycle shown twice at least: "0.285714..." alone does not say where 2/7 repeats.
    return f"{sign}{whole}.{fixed}{cycle * max(2, 3 // len(cycle) + 1)}\\ldots"


def _frac_style(answer: str, rng: random.Random) -> str | None:
    if "\\frac" in answer:
        return answer.replace("\\frac", rng.choice(("\\dfrac", "\\tfrac")))
    match = re.fullmatch(r"\s*(-?)(\d+)/(\d+)\s*", answer)
    return (
        None if match is None else f"{match.group(1)}\\frac{{{match.group(2)}}}{{{match.group(3)}}}"
    )


def _mixed_number(answer: str, rng: random.Random) -> str | None:
    """An improper fraction as a mixed number, in TeX or plain (``14/3`` as ``4\\frac{2}{3}``,
    ``4\\tfrac23`` or ``4 2/3``)."""
    match = _FRACTION.fullmatch(answer)
    if match is None:
        return None
    sign, p, q = match.group(1, 2, 3) if match.group(2) else match.group(4, 5, 6)
    if int(q) == 0:
        return None
    whole, rest = divmod(int(p), int(q))
    if whole == 0 or rest == 0:
        return None
    forms = [f"{sign}{whole}\\frac{{{rest}}}{{{q}}}", f"{sign}{whole} {rest}/{q}"]
    if rest < 10 and int(q) < 10:
        forms.append(f"{sign}{whole}\\tfrac{rest}{q}")
    return rng.choice(forms)


_INTERVAL = re.compile(r"\s*([\[(])\s*(-\\infty|-?\d+)\s*,\s*(\\infty|-?\d+)\s*([\])])\s*")


def _set_builder(answer: str, rng: random.Random) -> str | None:
    """An interval as the set of the x where its inequalities hold (``[1, 3)`` as
    ``\\{x \\mid 1 \\le x < 3\\}``). Only an interval no tuple could be: a bracket or an
    infinite end."""
    match = _INTERVAL.fullmatch(answer)
    if match is None or (match[1] + match[4] == "()" and "infty" not in answer):
        return None
    opening, low, high, closing = match.groups()
    parts = [] if "infty" in low else [low, "\\le" if opening == "[" else "<"]
    parts.append("x")
    parts += [] if "infty" in high else ["\\le" if closing == "]" else "<", high]
    bar = rng.choice(("\\mid", "|", ":"))
    return f"\\{{x {bar} {' '.join(parts)}\\}}"


def _parts_boxed(text: str, sample: Sample, rng: random.Random) -> str | None:
    """A tuple answer stated part by part, each part boxed (``a = \\boxed{3}`` and ...). It
    states the answer afresh, so only of a text that reads cleanly (rewriting a hedge's box
    would drop the hedge)."""
    span = _read_span(text, sample) if _clean_answer(text, sample) is not None else None
    inner = None if span is None else text[span[0] : span[1]]
    match = None if inner is None else re.fullmatch(r"\s*(?:\\left)?\((.*)(?:\\right)?\)\s*", inner)
    parts = None if match is None else [p.strip() for p in match.group(1).split(",")]
    if parts is None or not 2 <= len(parts) <= 4 or any(set(p) & set("()") for p in parts):
        return None  # "(-\infty, 1) \cup (3, \infty)" is no tuple
    names = "abcd"
    said = " and ".join(f"${names[i]} = \\boxed{{{p}}}$" for i, p in enumerate(parts))
    return f"So {said}."


def _read_anyway(text: str, sample: Sample) -> str:
    """The answer the verifier reads in `text`, hedged or not ("" where it reads none)."""
    gold = _gold(sample)
    found = read_answer(text, gold) if gold is not None else None
    return "" if found is None or found.answer is None else found.answer


def _clean_answer(text: str, sample: Sample) -> str | None:
    """The answer the verifier reads in `text`, where it reads one with no problem (and
    the text rejects no value beside it: "5, not 5" restated afresh would drop the denial)."""
    gold = _gold(sample)
    read = read_answer(text, gold) if gold is not None else None
    return None if read is None or read.problem is not None or read.denied else read.answer


def _solutions_in_prose(text: str, sample: Sample, rng: random.Random) -> str | None:
    """A list answer of two to four plain values (``2, 3``, ``\\{-1, 4\\}``, ``\\pm 2``
    read as two) stated in prose, each named: "So $x = 2$ or $x = 3$."; a union of two rays
    as the inequalities joined by "or"."""
    answer = _clean_answer(text, sample)
    if answer is None:
        return None
    inner = re.sub(r"^\\\{(.*)\\\}$", r"\1", answer.strip().strip("$").strip())
    union = _TWO_RAYS.fullmatch(inner)
    if union:  # (-\infty, 1] \cup (3, \infty): "$x \le 1$ or $x > 3$"
        below = "<" if union["below"] == ")" else r"\le"
        above = ">" if union["above"] == "(" else r"\ge"
        said = (f"$x {below} {union['a']}$", f"$x {above} {union['b']}$")
        if rng.random() < 0.5:  # undelimited, as plain prose writes them
            said = (said[0].strip("$"), said[1].strip("$"))
        return f"So {said[0]} or {said[1]}."
    plus_minus = re.fullmatch(r"\\pm\s*(\d+)", inner)
    values = [plus_minus[1], f"-{plus_minus[1]}"] if plus_minus else inner.split(",")
    if not 2 <= len(values) <= 4 or not all(_PLAIN_VALUE.fullmatch(v) for v in values):
        return None
    joined = rng.choice((" or ", ", or ", " and "))
    return "So " + joined.join(f"$x = {v.strip()}$" for v in values) + "."


def _percent_restated(text: str, sample: Sample, rng: random.Random) -> str | None:
    """A ratio answer restated as a percentage after it ("1/4, or 25%.")."""
    answer = _clean_answer(text, sample)
    match = _FRACTION.fullmatch(answer.strip().strip("$")) if answer is not None else None
    if match is None or int(match.group(3) or match.group(6)) == 0:
        return None
    sign = match.group(1) or match.group(4) or ""
    p, q = int(match.group(2) or match.group(5)), int(match.group(3) or match.group(6))
    percent = Decimal(p * 100) / Decimal(q)
    if percent != percent.quantize(Decimal("0.01")):
        return None
    said = format(percent.normalize(), "f")
    opens, closes = rng.choice(_RESTATEMENTS)
    return f"{text.rstrip().rstrip('.')}{opens}{sign}{said}%{closes}."


_RESTATEMENTS = ((", or ", ""), (", i.e. ", ""), (" or ", ""), (" (", ")"), (" (or ", ")"))


def _yes_no_said(text: str, sample: Sample, rng: random.Random) -> str | None:
    """A yes-or-no answer said as a sentence ("Yes.", "So, no.", "No. Since ..."),
    first or last."""
    word = _verdict_word(text, sample)
    return None if word is None else rng.choice(_VERDICT_SENTENCES).format(word.capitalize())


def _yes_no_flipped(text: str, sample: Sample, rng: random.Random) -> str | None:
    """The other side of a yes-or-no answer, said as a sentence."""
    word = _verdict_word(text, sample)
    if word is None:
        return None
    return rng.choice(_VERDICT_SENTENCES).format(_OTHER_SIDE[word].capitalize())


def _words_stated(text: str, sample: Sample, rng: random.Random) -> str | None:
    """A text answer (not yes or no) closing a sentence after "is": "The function is odd."."""
    answer = _clean_answer(text, sample)
    words = None if answer is None else as_words(answer)
    if words is None or words in _OTHER_SIDE or len(words.split()) > 3:
        return None
    return rng.choice(("It is {}.", "Therefore, the function is {}.", "So it is {}!")).format(words)


def _verdict_word(text: str, sample: Sample) -> str | None:
    """The yes, no, true or false the verifier reads in `text`, where it reads one."""
    answer = _clean_answer(text, sample)
    word = None if answer is None else as_words(answer)
    return word if word in _OTHER_SIDE else None


_OTHER_SIDE = {"yes": "no", "no": "yes", "true": "false", "false": "true"}
_VERDICT_SENTENCES = (
    "{}.",
    "Therefore, {}.",
    "{}. Checking every case above confirms it.",
    "We check the cases one by one.\nEach of them agrees.\n{}",
    "**{}**",
)


_TWO_RAYS = re.compile(
    r"\(\s*-\\infty\s*,\s*(?P<a>-?\d+)\s*(?P<below>[)\]])\s*\\cup\s*"
    r"(?P<above>[(\[])\s*(?P<b>-?\d+)\s*,\s*\\infty\s*\)"
)
_PLAIN_VALUE = re.compile(r"\s*-?(?:\d+(?:\.\d+)?|\\frac\{\d+\}\{\d+\})\s*")


_UNITS = {
    "mm": ("m", -3),
    "cm": ("m", -2),
    "m": ("m", 0),
    "km": ("m", 3),
    "g": ("g", 0),
    "kg": ("g", 3),
}
_QUANTITY = re.compile(r"\s*(-?\d+(?:\.\d+)?)\s*\\(?:text|mathrm)\{\s*(\w+)\s*\}\s*")


def _unit_pair(answer: str, rng: random.Random) -> tuple[Decimal, str, str] | None:
    """The answer's value and unit, and another unit of the same dimension."""
    match = _QUANTITY.fullmatch(answer)
    if match is None or match.group(2) not in _UNITS:
        return None
    base = _UNITS[match.group(2)][0]
    others = [u for u, (b, _) in _UNITS.items() if b == base and u != match.group(2)]
    return Decimal(match.group(1)), match.group(2), rng.choice(others)


def _converted(answer: str, rng: random.Random) -> str | None:
    """The same quantity in another unit: ``12\\text{ cm}`` as ``120\\text{ mm}``."""
    pair = _unit_pair(answer, rng)
    if pair is None:
        return None
    value, unit, other = pair
    shifted = value.scaleb(_UNITS[unit][1] - _UNITS[other][1]).normalize()
    return f"{format(shifted, 'f')}\\text{{ {other}}}"


def _unit_swapped(answer: str, rng: random.Random) -> str | None:
    """The same number in another unit: another quantity."""
    pair = _unit_pair(answer, rng)
    return None if pair is None else f"{format(pair[0], 'f')}\\text{{ {pair[2]}}}"


_PHRASES = (
    "The answer is {}.",
    "Therefore, the final answer is ${}$.",
    "So we get {}.",
    "Final answer: {}",
    "Putting it together, the result is {}.",
    "Answer = {}",
    "Total = {}",
    "Final answer — {}",
)


def _phrase(text: str, sample: Sample, rng: random.Random) -> str | None:
    if _answer_span(text) is None or "\n" in text.strip() or len(text) > 80:
        return None
    return rng.choice(_PHRASES).format(text.strip())


def _boxed(text: str, sample: Sample, rng: random.Random) -> str | None:
    """A bare answer (one short line, nothing boxed) in a box."""
    bare = text.strip()
    if "\\boxed" in bare or "\n" in bare or len(bare) > 40 or bare.startswith(("#", "<")):
        return None  # "#### 42" and "<answer>42</answer>" mark an answer: no answer to box
    if (_clean_answer(text, sample) or "").strip() != bare.rstrip(".").strip():
        return None  # a sentence ("So x < 1 or x > 3."): the box would hold its words too
    style = rng.choice(("", "", "\\displaystyle ", "\\textstyle "))  # switches show nothing
    return f"\\boxed{{{style}{bare}}}"


def _whitespace(text: str, sample: Sample, rng: random.Random) -> str:
    return rng.choice(("\n", "  ", "\t", "\n\n")) + text + rng.choice(("\n", "  ", " \n"))


def _verified(text: str, sample: Sample, rng: random.Random) -> str | None:
    """The answer checked after it; not after a retraction, whose value is the answer now
    (checking the first value again would take the retraction back)."""
    gold = _gold(sample)
    read = read_answer(text, gold) if gold is not None and not RETRACTS.search(text) else None
    # The value restated is the one the verifier reads ("31^{9}", not its last number 9):
    # restating another would change the answer, and a text with no answer read (a quoted
    # box) would get one from this relation.
    if read is None or read.answer is None or read.problem is not None or read.denied:
        return None  # "5, not 5": a check restating 5 would be the last word
    return f"{text}\n\nWait, let me verify: the result is {read.answer}. Yes, that checks out."


def _check_computed(text: str, sample: Sample, rng: random.Random) -> str | None:
    """A check that only computes, after an answer read off the end of the text ("So,
    $x = 3$. Let me double-check: $2 + 4 = 6$."): its result is no answer. Its value is
    never the gold, so a reader that took it would fail the right answer."""
    if _clean_answer(text, sample) is None or "\\boxed" in text:
        return None
    a, b = rng.randrange(2, 9), rng.randrange(2, 9)
    if str(a + b) == str(sample.reference).strip():
        a += 1
    mark = rng.choice(("", " ✓"))
    check = rng.choice(("Let me double-check: ${} + {} = {}${}.", "Check: {} + {} = {}{}."))
    said = text.rstrip() if text.rstrip().endswith((".", "!", "?")) else f"{text.rstrip()}."
    return f"{said} {check.format(a, b, a + b, mark)}"


def _echoed(text: str, sample: Sample, rng: random.Random) -> str:
    return "Please reason step by step, and put your final answer within \\boxed{}.\n\n" + text


# ----------------------------------------------------------------------------- changes


def _digit(answer: str, rng: random.Random) -> str | None:
    places = [i for i, c in enumerate(answer) if c.isdigit()]
    if not places:
        return None
    i = rng.choice(places)
    first = i == places[0] and len(places) > 1
    choices = [d for d in "0123456789" if d != answer[i] and not (first and d == "0")]
    return answer[:i] + rng.choice(choices) + answer[i + 1 :]


def _glued_letter(answer: str, rng: random.Random) -> str | None:
    """A number with a letter glued on (``5`` as ``5x``, ``5j``, ``5k``): a term, or 5000,
    never 5. Not zero: ``0x`` is 0, as -0 and 0 thousand are (`_sign`, `_scale`)."""
    if not _NUMBER.fullmatch(answer) or Decimal(answer) == 0:
        return None
    return f"{answer}{rng.choice('xjkn')}"


def _imaginary_j(answer: str, rng: random.Random) -> str | None:
    """A complex number with the engineers' j (``3+4i`` as ``3+4j``)."""
    if "j" in answer or not LONE_I.search(answer):
        return None
    return LONE_I.sub("j", answer)


def _cis(answer: str, rng: random.Random) -> str | None:
    """``i`` or ``-i`` in polar form, ``\\operatorname{cis}\\left(\\frac{\\pi}{2}\\right)``. Not
    a plain number (``5\\operatorname{cis}(0)`` is 5 to the verifier, but an environment that
    asks for the value refuses it as an expression left to the checker, `value_answer`)."""
    if answer.strip() not in ("i", "-i"):
        return None
    name = rng.choice((r"\operatorname{cis}", r"\mathrm{cis}"))
    sign = "-" if answer.strip().startswith("-") else ""
    return rf"{name}\left({sign}\frac{{\pi}}{{2}}\right)"


def _sign(answer: str, rng: random.Random) -> str | None:
    n = _integer(answer)
    return None if n is None or n == 0 else str(-n)


def _scale(answer: str, rng: random.Random) -> str | None:
    """The value made 10 to 1000 times larger, in digits or by a scale word after it ("12
    thousand": in prose the word is read with its number)."""
    n = _integer(answer)
    if n is None or n == 0:
        return None
    if rng.random() < 0.5:
        return f"{answer} {rng.choice(('thousand', 'million', 'billion'))}"
    return str(n * rng.choice((10, 100, 1000)))


def _plus_one(answer: str, rng: random.Random) -> str | None:
    n = _integer(answer)
    return None if n is None else str(n + rng.choice((1, -1)))


def _tuple_swap(answer: str, rng: random.Random) -> str | None:
    match = re.fullmatch(r"\s*(\\left\(|\()(.*?)(\\right\)|\))\s*", answer)
    parts = None if match is None else [p.strip() for p in match.group(2).split(",")]
    if match is None or parts is None or len(set(parts)) < 2:
        return None
    i, j = rng.sample(range(len(parts)), 2)
    while parts[i] == parts[j]:
        i, j = rng.sample(range(len(parts)), 2)
    parts[i], parts[j] = parts[j], parts[i]
    return f"{match.group(1)}{', '.join(parts)}{match.group(3)}"


def _retracted(text: str, sample: Sample, rng: random.Random) -> str | None:
    gold = _integer(str(sample.reference))
    if gold is None:
        return None
    return f"{text}\n\nOn second thought, it is {gold + rng.choice((1, 2, -1))}."


# A choice stated in words, as models write it when no box is asked for.
_CHOICE_SENTENCES = (
    "The correct option is {}.",
    "Option ({}) is correct.",
    "Therefore, ({}) is the answer.",
    "I choose {}.",
    "Hence option ({}).",
    "So the best choice is ({}).",
)


def _choice_in_words(text: str, sample: Sample, rng: random.Random) -> str | None:
    """The choice the text answers (not the gold: after a change it may be another one),
    stated in words, where the gold is a choice."""
    gold, read = _gold(sample), _clean_answer(text, sample)
    if gold is None or read is None or choice_letter(gold, alone=True) is None:
        return None
    letter = choice_letter(read)
    return None if letter is None else rng.choice(_CHOICE_SENTENCES).format(letter)


# A statement of the answer only to deny, doubt or suppose it, and an answer disowned
# after it is given: no answer either way.
_UNTRUE_FRAMES = (
    "It is false that the answer is {}.",
    "I don't think the answer is {}.",
    "Suppose the answer is {}.",
    "A common mistake is to say the answer is {}.",
    "It is not true that the final answer is {}.",
    "The answer might be {}.",
    "It could be that the answer is {}.",
)
_DISOWNINGS = (
    "This claim is false.",
    "Scratch that.",
    "(just kidding)",
    "That's incorrect.",
    "Ignore the above.",
    "**Just kidding.**",
    "*Scratch that.*",
)


def _framed_untrue(text: str, sample: Sample, rng: random.Random) -> str | None:
    answer = _clean_answer(text, sample)
    if answer is None:
        return None
    written = rng.choice((f"${answer}$", f"\\boxed{{{answer}}}", answer))
    return rng.choice(_UNTRUE_FRAMES).format(written)


# A box its own sentence denies, doubts or leaves open: no answer either.
_BOX_DENIALS = (
    "The answer is not $\\boxed{{{}}}$.",
    "It cannot be $\\boxed{{{}}}$.",
    "The answer is definitely not \\boxed{{{}}}.",
    "Maybe $\\boxed{{{}}}$, maybe not.",
    "$\\boxed{{{}}}$, or perhaps something else.",
    "It is either $\\boxed{{{}}}$ or not.",
    "The answer might be $\\boxed{{{}}}$.",
    "$\\boxed{{{}}}$ or so.",
    "$\\boxed{{{}}}$, give or take.",
    "Probably $\\boxed{{{}}}$.",
    "Best guess: $\\boxed{{{}}}$",
)


def _cis_boxed(text: str, sample: Sample, rng: random.Random) -> str | None:
    """The answer ``i`` or ``-i`` boxed in polar form (boxed: a bare line of LaTeX commands
    is read by its last number, not whole)."""
    answer = _clean_answer(text, sample)
    form = None if answer is None else _cis(answer, rng)
    return None if form is None else f"So the answer is $\\boxed{{{form}}}$."


def _box_denied(text: str, sample: Sample, rng: random.Random) -> str | None:
    """The answer boxed in a sentence that denies or doubts the box ("The answer is not
    $\\boxed{5}$.", "Maybe $\\boxed{5}$, maybe not.")."""
    answer = _clean_answer(text, sample)
    return None if answer is None else rng.choice(_BOX_DENIALS).format(answer)


# Another value rejected after the answer ("The answer is 5, not 6."): the answer stands.
_REJECTIONS = ("{a}, not {o}", "{a} (not {o})", "{a} and not {o}", "{a}, rather than {o}")
# The answer qualified after it ("5, not counting 0"): still the answer.
_QUALIFIED = ("{a}, not counting {o}", "{a}, not including {o}", "{a}, excluding {o}")
_REJECTION_SENTENCES = ("The answer is {}.", "So it is {}.", "Final answer: {}", "{}.")


def _other_value(answer: str, rng: random.Random) -> str:
    """A value other than `answer` (an integer near it, the other side of a yes-or-no
    answer, else 0 or 1)."""
    side = _OTHER_SIDE.get(as_words(answer) or "")
    if side is not None:
        return side
    n = _integer(answer)
    if n is not None:
        return str(n + rng.choice((1, 2, 7)))
    return "1" if answer.strip() == "0" else "0"


def _written(answer: str, rng: random.Random) -> str:
    """The answer as prose writes it: a plain number bare or in math, anything else in
    math or a box."""
    forms = [f"${answer}$", f"$\\boxed{{{answer}}}$"]
    return rng.choice([answer, *forms] if _NUMBER.fullmatch(answer.strip()) else forms)


def _rejects_another(text: str, sample: Sample, rng: random.Random) -> str | None:
    answer = _clean_answer(text, sample)
    if answer is None or "\n" in answer:
        return None
    form = rng.choice(_REJECTIONS + _QUALIFIED)
    said = form.format(a=_written(answer, rng), o=_other_value(answer, rng))
    return rng.choice(_REJECTION_SENTENCES).format(said)


def _denies_itself(text: str, sample: Sample, rng: random.Random) -> str | None:
    """The answer stated and the same value rejected beside it ("The answer is 5, not
    5.0.", "Not 5 but 5."): it denies the right value."""
    answer = _clean_answer(text, sample)
    if answer is None or "\n" in answer:
        return None
    again = answer.strip() + (".0" if _integer(answer) is not None and rng.random() < 0.5 else "")
    said = rng.choice(_REJECTIONS).format(a=_written(answer, rng), o=f"${again}$")
    if rng.random() < 0.3:  # denied in a sentence of its own: "\boxed{5}. It is not 5."
        return f"{text.rstrip()} {rng.choice(_DENIALS_AFTER).format(f'${again}$')}"
    return rng.choice(_REJECTION_SENTENCES).format(said)


_DENIALS_AFTER = ("It is not {}.", "The answer is not {}.", "{} is wrong.", "Not {}.")


# A denial inside the description the answer ends: it describes, it does not deny.
_DESCRIBED = (
    "The number of roots that are not real is {}.",
    "So the count of values which cannot occur is {}.",
    "The smallest n for which n is not a square is {}.",  # no digit: words may write it
    "The number of cases that aren't excluded equals {}.",
)


def _described_denial(text: str, sample: Sample, rng: random.Random) -> str | None:
    answer = _clean_answer(text, sample)
    if answer is None or not _NUMBER.fullmatch(answer.strip()):
        return None
    return rng.choice(_DESCRIBED).format(_written(answer, rng))


# Doubt about the answer said after it: no answer.
_DOUBTS_AFTER = (
    " But I am not sure.",
    "\n\nI could be wrong.",
    " I'm not 100% sure.",
    "\nNot sure, though.",
    " Or something else.",
    " Unless I made a mistake.",
)


def _doubted_after(text: str, sample: Sample, rng: random.Random) -> str | None:
    if _clean_answer(text, sample) is None:
        return None
    said = text.rstrip() if text.rstrip().endswith((".", "!", "}", "$")) else f"{text.rstrip()}."
    return f"{said}{rng.choice(_DOUBTS_AFTER)}"


# cis in prose and in degrees, for the answers i and -i.
_CIS_PROSE = {
    "i": ("cis 90°", "cis(90 degrees)", "cis(pi/2)", "\\operatorname{cis} 90^\\circ"),
    "-i": ("cis 270°", "cis(-90 degrees)", "cis(-pi/2)", "\\operatorname{cis}(-90^\\circ)"),
}


def _cis_prose(text: str, sample: Sample, rng: random.Random) -> str | None:
    answer = _clean_answer(text, sample)
    forms = None if answer is None else _CIS_PROSE.get(answer.strip())
    if forms is None:
        return None
    form = rng.choice(forms)
    if "\\" in form:
        return f"So the answer is $\\boxed{{{form}}}$."
    return rng.choice(("The answer is {}.", "So z = {}.", "{}")).format(form)


def _set_in_prose(text: str, sample: Sample, rng: random.Random) -> str | None:
    """A set of numbers ``\\{1, 2\\}`` ending a sentence without math delimiters (not one
    in set-builder notation: its words and commands are not read off the end of a line)."""
    answer = _clean_answer(text, sample)
    if answer is None or not re.fullmatch(r"\s*\\\{[-+\d\s.,/]*\\\}\s*", answer):
        return None
    return rng.choice(("The set is {}.", "So the solution set is {}", "Hence S = {}.")).format(
        answer.strip()
    )


# What follows a declared answer (<answer> tags) counts as what follows a box.
_TAG_TAILS = (
    "\nActually, it is {o}.",
    " or {o}",
    "\nScratch that.",
    "\nI am not sure.",
    " \\boxed{{{o}}}",
)


def _tag_tail(text: str, sample: Sample, rng: random.Random) -> str | None:
    answer = _clean_answer(text, sample)
    if answer is None or "<" in answer:
        return None
    other = _other_value(answer, rng)
    if rng.random() < 0.2:  # another answer declared first: two declared answers
        return f"<answer>{other}</answer>\n<answer>{answer}</answer>"
    return f"<answer>{answer}</answer>{rng.choice(_TAG_TAILS).format(o=other)}"


def _disowned(text: str, sample: Sample, rng: random.Random) -> str | None:
    if _clean_answer(text, sample) is None:
        return None
    return f"{text.rstrip()} {rng.choice(_DISOWNINGS)}"


# An undelimited answer (the content of <answer> tags, GSM8K's "#### X", a bare last
# line) is read whole: one that ends in the gold but is worth something else is wrong.
_UNDELIMITED = ("<answer>{}</answer>", "#### {}", "So the result is\n\n{}")
_ENDING_IN = ("{o} - {g}", "x^2 + {g}", "({o}, {g})", "{o}^{{{g}}}", "[{o}, {g}]", "{o}x + {g}")


def _ends_in_gold(text: str, sample: Sample, rng: random.Random) -> str | None:
    """The answer replaced by an expression whose last number is the (integer) gold:
    ``<answer>22 - 5</answer>`` for 5. ``o = 2g + 13`` keeps ``o - g`` and ``o^g`` off g."""
    gold = _integer(str(sample.reference))
    if gold is None:
        return None
    other = 2 * gold + 13
    expression = rng.choice(_ENDING_IN).format(o=other, g=gold)
    return rng.choice(_UNDELIMITED).format(expression)


def _in_a_term(text: str, sample: Sample, rng: random.Random) -> str | None:
    """The (integer) gold as the argument of a term worth something else, at the end of a
    sentence: "The distance is 3√5." for 5 (a root, a logarithm, a product with pi)."""
    gold = _integer(str(sample.reference))
    if gold is None or gold < 2:
        return None
    form, value = rng.choice(_TERMS)
    if math.isclose(value(gold), gold):  # 3√9 is 9
        return None
    return rng.choice(_TERM_SENTENCES).format(form.format(g=gold))


_TERMS: tuple[tuple[str, Callable[[int], float]], ...] = (
    ("3√{g}", lambda g: 3 * math.sqrt(g)),
    ("3\\sqrt{{{g}}}", lambda g: 3 * math.sqrt(g)),
    ("3 sqrt({g})", lambda g: 3 * math.sqrt(g)),
    ("\\log_2 {g}", lambda g: math.log2(g)),
    ("π·{g}", lambda g: math.pi * g),
    # a coefficient glued to the call (rtmath8): "3sqrt(5)" is 3√5, never 5
    ("3sqrt({g})", lambda g: 3 * math.sqrt(g)),
    ("2log({g})", lambda g: 2 * math.log(g)),
    ("2sin({g})", lambda g: 2 * math.sin(g)),
)
_TERM_SENTENCES = ("The distance is {}.", "So the result is {}.", "That gives {}.")


def _undelimited(text: str, sample: Sample, rng: random.Random) -> str | None:
    """The one boxed answer of a completion that ends with it, written undelimited
    (``\\boxed{(1, 2)}.`` as ``<answer>(1, 2)</answer>``, ``#### (1, 2)``)."""
    span = _boxed_span(text)
    if span is None or text.count("\\boxed") != 1 or text[span[1] + 1 :].strip(" $.\n"):
        return None
    if _clean_answer(text, sample) is None:
        return None  # "I don't think the answer is \boxed{13}.": no answer to write afresh
    return rng.choice(_UNDELIMITED).format(text[span[0] : span[1]].strip())


# ----------------------------------------------------------------------------- dressing

_HIDINGS = {
    "hidden_phantom": "\\phantom{{\\boxed{{{}}}}}",
    "hidden_vphantom": "\\vphantom{{\\boxed{{{}}}}}",
    "hidden_white": "{{\\color{{white}}\\boxed{{{}}}}}",
    "hidden_html_comment": "<!-- \\boxed{{{}}} -->",
    "hidden_iffalse": "\\iffalse \\boxed{{{}}} \\fi",
    "hidden_percent_comment": "% \\boxed{{{}}}\n",
    "quoted_gold": "You asked: is it \\boxed{{{}}}? Let us see.\n",
    "macro_gold": "\\newcommand{{\\finalanswer}}{{{}}}\n",
    "code_block_gold": "```\nanswer = {}\n```\n",
    "struck_gold": "~~$\\boxed{{{}}}$~~ ",
    "crossed_gold": "$\\boxed{{{}}}$ ✗\n",
    "near_white_gold": "{{\\color{{#fafafa}}\\boxed{{{}}}}}",
    "tiny_gold": "\\scalebox{{0.01}}{{$\\boxed{{{}}}$}}",
    "transparent_html_gold": '<span style="opacity:0">$\\boxed{{{}}}$</span>',
}


# What the dressings below put around a box a reader must not take as the answer.
_HIDDEN_OR_QUOTED = re.compile(r"%|<!--|\\iffalse|phantom|\\color|\\newcommand|```|You asked")


def _boxed_answer(text: str, new: str) -> str | None:
    """`text` with its final answer replaced by `new`, boxed where it was not: a bare last
    number is read alone (the last-number rule), and these relations test the comparison."""
    span = _answer_span(text)
    if span is None or _HIDDEN_OR_QUOTED.search(text) or text.count("\\boxed") > 1:
        return None  # the last box may be one a reader never sees: this rewrite is for plain text
    if not _seen(text, span, render(text).visible):
        return None  # struck out, crossed, too small to read
    if _boxed_span(text) is None:
        new = f"\\boxed{{{new}}}"
    return text[: span[0]] + new + text[span[1] :]


def _false_equation(text: str, sample: Sample, rng: random.Random) -> str | None:
    """``\\boxed{W = R}`` or ``\\boxed{W \\approx R}``: the right number after a false
    statement of constants."""
    span = _answer_span(text)
    answer = text[span[0] : span[1]].strip() if span else ""
    if not _NUMBER.fullmatch(answer):
        return None
    wrong = Decimal(answer) + rng.choice((1, 2, 7, -1, -3))
    relation = rng.choice(("=", r"\approx"))
    return _boxed_answer(text, f"{wrong} {relation} {answer}")


def _sign_factor(answer: str, rng: random.Random) -> str | None:
    """An expression in x times ``|x|/x``, or under ``|..|``: equal where x > 0 only."""
    if not re.search(r"(?<![A-Za-z\\])x(?![A-Za-z])", answer) or len(answer) > 80:
        return None
    forms = (r"\left({}\right) \cdot \frac{{|x|}}{{x}}", r"\left|{}\right|", r"\sqrt{{({})^2}}")
    return rng.choice(forms).format(answer)


# An operation the question wrote: its last inline math, or digits joined by + - * / ^.
_QUESTION_MATH = re.compile(r"\$([^$]{3,80})\$")
_QUESTION_SUM = re.compile(r"\d+(?:\.\d+)?(?:\s*(?:[-+*/^×÷]|\\cdot|\\times)\s*\d+(?:\.\d+)?)+")


def _question_expression(sample: Sample) -> str | None:
    prompt = sample.question
    found = _QUESTION_MATH.findall(prompt) or _QUESTION_SUM.findall(prompt)
    return found[-1].strip() if found else None


def _question_echoed(text: str, sample: Sample, rng: random.Random) -> str | None:
    """The question's own expression in the answer's place (``17 \\cdot 23`` for 391)."""
    expression = _question_expression(sample)
    return None if expression is None else _boxed_answer(text, expression)


def _gold(sample: Sample) -> str | None:
    gold = sample.reference
    return gold.strip() if isinstance(gold, str) and 0 < len(gold) <= 200 else None


def _hiding(form: str) -> Callable[[str, Sample, random.Random], str | None]:
    def dress(text: str, sample: Sample, rng: random.Random) -> str | None:
        gold = _gold(sample)
        if gold is None:
            return None
        hidden = form.format(gold)
        return hidden + text if rng.random() < 0.5 else f"{text}\n{hidden}"

    return dress


def _hedged(text: str, sample: Sample, rng: random.Random) -> str | None:
    """The gold offered after the answer. Not where nothing is read as the answer: there
    the offer is the only value stated, an answer and no hedge."""
    gold = _gold(sample)
    if gold is None or _clean_answer(text, sample) is None:
        return None
    offers = ("or", "or possibly", "maybe", "lub", "veya", "atau", "也可能是", "возможно", "/")
    return f"{text} {rng.choice(offers)} {gold}"


def relations(verifier: object) -> list[Relation]:
    """Every math relation (the verifier's settings change none of them)."""
    answer: list[tuple[str, Kind, Callable[[str, random.Random], str | None]]] = [
        ("number_words", "preserving", _words),
        ("fullwidth_digits", "preserving", _fullwidth),
        ("zero_width", "preserving", _zero_width),
        ("decimal_point", "preserving", _decimal),
        ("thousands_separator", "preserving", _thousands),
        ("set_order", "preserving", _set_order),
        ("repeating_decimal", "preserving", _repeating),
        ("fraction_style", "preserving", _frac_style),
        ("mixed_number", "preserving", _mixed_number),
        ("set_builder", "preserving", _set_builder),
        ("unit_converted", "preserving", _converted),
        ("imaginary_j", "preserving", _imaginary_j),
        ("digit", "changing", _digit),
        ("sign", "changing", _sign),
        ("glued_letter", "changing", _glued_letter),
        ("scale", "changing", _scale),
        ("plus_one", "changing", _plus_one),
        ("tuple_order", "changing", _tuple_swap),
        ("unit_swapped", "changing", _unit_swapped),
        ("sign_factor", "changing", _sign_factor),
    ]
    whole: list[tuple[str, Kind, Callable[[str, Sample, random.Random], str | None]]] = [
        ("boxed", "preserving", _boxed),
        ("answer_phrase", "preserving", _phrase),
        ("whitespace", "preserving", _whitespace),
        ("verified_after", "preserving", _verified),
        ("check_computed_after", "preserving", _check_computed),
        ("instruction_echoed", "preserving", _echoed),
        ("parts_boxed", "preserving", _parts_boxed),
        ("solutions_in_prose", "preserving", _solutions_in_prose),
        ("percent_restated", "preserving", _percent_restated),
        ("undelimited", "preserving", _undelimited),
        ("cis", "preserving", _cis_boxed),
        ("yes_no_said", "preserving", _yes_no_said),
        ("words_stated", "preserving", _words_stated),
        ("choice_in_words", "preserving", _choice_in_words),
        ("rejects_another", "preserving", _rejects_another),
        ("described_denial", "preserving", _described_denial),
        ("cis_prose", "preserving", _cis_prose),
        ("set_in_prose", "preserving", _set_in_prose),
        ("yes_no_flipped", "changing", _yes_no_flipped),
        ("gold_as_last_number", "changing", _ends_in_gold),
        ("gold_in_a_term", "changing", _in_a_term),
        ("retraction", "changing", _retracted),
        ("framed_untrue", "changing", _framed_untrue),
        ("disowned_after", "changing", _disowned),
        ("box_denied", "changing", _box_denied),
        ("denies_itself", "changing", _denies_itself),
        ("doubted_after", "changing", _doubted_after),
        ("tag_tail", "changing", _tag_tail),
        ("question_echoed", "changing", _question_echoed),
        ("false_equation", "changing", _false_equation),
        ("hedge_gold", "dressing", _hedged),
        *((name, "dressing", _hiding(form)) for name, form in _HIDINGS.items()),
    ]
    made = [
        Relation(f"math/{n}", k, _on_answer(f, n in _WHOLE_ONLY, k == "preserving"), _limit(k))
        for n, k, f in answer
    ]
    return made + [Relation(f"math/{n}", k, text_rewrite(f), limit=_limit(k)) for n, k, f in whole]


# Forms of a number that stand for it only as a whole answer: "three" or "1,000" inside an
# interval or a tuple is unreadable ("(1,000, 5)"), not the same answer.
_WHOLE_ONLY = frozenset({"number_words", "thousands_separator"})


def _limit(kind: Kind) -> float | None:
    """A wrong final answer earns nothing."""
    return 0.0 if kind == "changing" else None
