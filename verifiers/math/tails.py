"""What a completion says after the answer it committed to.

A box or an answer phrase commits to an answer, and the text after it may explain, check
or restate that answer. A *different* answer stated there is the model's last word, and a
reward that reads the first one pays for a hedge or a retraction: ``\\boxed{12}. Actually,
13.``, ``\\boxed{C} (D is also possible)``, ``The answer is $12$ (though $13$ is also
plausible)``. `stated_after` finds such an answer, so that extraction can report the pair
as hedged; the verifier then compares the two and lets through a restatement of the same
answer in another form (``\\boxed{\\frac12}. That is, $0.5$``).

A sentence of the tail states another answer when it holds a value (a formula in math
delimiters or bold, a number, a choice letter or a text answer, like the committed one)
that is not the committed answer written again, and either

* it carries a word that offers or retracts an answer (`RETRACTING`: "or", "actually",
  "wait", "correction", "possibly", "unless", "however", "ou", ...), or
* it is the value with at most two words around it ("Final: $13$", "**13**", "Wait, it's
  13.") and is not the rest of the committed answer's own sentence.

A sentence that writes the committed answer again (a check, "3 x 4 = 12", also as one
side of an equation: "3·7 − 1 = 20" for 20) is left alone, as is a check that only
computes ("Check: $2(3) + 1 = 7$ ✓", "If $x = 3$, then $2x + 1 = 7$."), a chat sign-off
("Let me know if you have questions about steps 1-3.") and one with neither: an
explanation ("There are 3 rows of 4 chairs.").

Issue 26: a *retraction* (`RETRACTS`: "actually", "wait, no", "on second thought",
"scratch that", "I made an error", "should be", ...) names the final answer: `retracted`
tells the extractor to read the new value as the answer, provided the value is asserted
(no offer, `OFFERS`, and nothing tried or checked, `TENTATIVE`, in its sentence). An
offer ("or", "possibly", "if ... becomes", "too", "I get", "o", "hoặc", ...) stays a
hedge.

    >>> stated_after(". Actually, $13$.", "12")
    '13'
    >>> stated_after(". Each of the 3 rows has 4 seats, so 12 in all.", "12") is None
    True
"""

from __future__ import annotations

import re

from rewardsmith.verifiers.math.boxes import hedge_key
from rewardsmith.verifiers.math.fast import choice_letter
from rewardsmith.verifiers.math.numerals import words_to_digits
from rewardsmith.verifiers.math.words import as_words

__all__ = [
    "OFFERS",
    "RETRACTING",
    "RETRACTS",
    "TENTATIVE",
    "checks_dropped",
    "retracted",
    "retractions_in_digits",
    "stated_after",
]

_MAX_TAIL = 4_000
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
# Words that take an answer back: the value they name is the model's new final answer.
RETRACTS = re.compile(
    r"\b(?:actually|wait,?\s+(?:no\b|it'?s\b|it\s+is\b|that'?s\s+(?:wrong|not))|no,?\s+wait|correction|corrected|correcting|rather(?!\s+than)|instead(?!\s+of)|i\s+mean|"
    r"on\s+(?:second\s+thought|reflection|closer\s+inspection)|scratch\s+that|oops|"
    r"(?:my|a|an)\s+(?:mistake|error|miscalculation)|should\s+(?:be|have\s+been)|"
    r"(?:that|this|it)(?:\s+(?:is|was)|'s|’s)\s+(?:wrong|incorrect|not\s+(?:right|correct))|let\s+me\s+correct|"
    r"i\s+was\s+wrong|(?:is|was)n't\s+(?:right|correct))\b|[✗✘❌❎]",  # a cross marks it wrong
    re.IGNORECASE,
)
# Words that offer another answer beside the first: a hedge.
OFFERS = re.compile(
    r"\b(?:or|alternatively|otherwise|possibly|perhaps|maybe|might|could|also|plausible|"
    r"unless|however|though|although|either|as\s+well|too|another|"
    r"if(?![^.!?\n]*\b(?:would|were|had)\b)|"  # "if ... becomes 14"; not a counterfactual
    r"second\s+(?:valid\s+)?(?:value|answer|solution)|ou|o|oder|oppure|"
    r"sinon|hoặc|i\s+(?:get|got|obtain|obtained|find|found|believe|think)|"
    r"(?:second|my|another)\s+guess|\d+\s*\\?%\s*(?:confiden\w*|sure|likely|chance)|lub|albo|veya|ya\s+da|atau|"
    r"misschien|vielleicht|peut-être|quizás?|tal\s+vez|talvez|forse|también|возможно|"
    r"может\s+быть|либо|أو|ربما)\b|или|或|可能|または|もしくは|かも|또는|아마|या|अथवा",
    re.IGNORECASE,
)
RETRACTING = re.compile(f"{RETRACTS.pattern}|{OFFERS.pattern}|\\bwait\\b", re.IGNORECASE)
# A value tried or checked, not asserted: a retraction must assert its value.
TENTATIVE = re.compile(
    r"\b(?:let\s+me|let'?s|check\w*|verif\w*|try|test|suppose|assume|if|whether)\b|\?",
    re.IGNORECASE,
)
# A chat sign-off states no answer, whatever numbers it mentions.
_SIGN_OFF = re.compile(
    r"\b(?:let\s+me\s+know|hope\s+(?:this|that|it)\s+helps|feel\s+free|happy\s+to\s+help)\b",
    re.IGNORECASE,
)
# A sentence that checks the answer ("Wait, let me verify: 3*7 - 1 = 20."): its
# computations are not answers.
_CHECKS = re.compile(
    r"\b(?:verif\w*|check\w*|confirm\w*|double[- ]check\w*|sanity|substitut\w*|plug\w*)\b|✓|✔",
    re.IGNORECASE,
)
_MATH = re.compile(r"\$\$(.+?)\$\$|\$([^$]+)\$|\\\((.+?)\\\)|\*\*([^*]+)\*\*", re.DOTALL)
# A word of bare math: it has a digit or a command ("25\\%", "2^{10}", "\\frac{1}{2}"), or
# is an operator joining two such words ("25\\% + 1" is one value, not 25 and 1).
_MATH_WORD = re.compile(r"[^\sA-Za-z]*[\d\\]\S*|[-+*/=<>−×·÷]")
# A text macro is words, not a value; except a unit right after a number ("12\text{ cm}"),
# kept with it as one value so that "120 mm" restated as "12 cm" is the same answer.
_TEXT = re.compile(r"(?<!\d)\\text(?:bf)?\{([^{}]*)\}")
_GLUED_UNIT = re.compile(r"(\d)\s*\\text\{\s*([A-Za-z]{1,12}(?:\^\d)?)\s*\}")
_LETTER = re.compile(r"(?<![\w\\])\(?([A-J])\)?(?![\w'])")
_WORD = re.compile(r"[A-Za-z]{2,}")
_CLOSING = re.compile(r"^\s*(?:\$\$|\$|\\\)|\\\])")  # the delimiter closing the answer's math
# Layout that states nothing: the end of the display or environment the answer sat in.
_LAYOUT = re.compile(r"\\(?:begin|end)\{[^{}]*\}|\\\\|\\[\[\]()]|&|\\q?quad\b")


def _value_like(value: str, answer: str) -> bool:
    """A value that could answer what `answer` answers: math or a number, a choice letter
    beside a choice, words beside a text answer ("**Final Answer**" is a heading)."""
    if re.search(r"[\d\\]", value):
        return True
    if choice_letter(answer) is not None:
        return choice_letter(value) is not None
    return as_words(answer) is not None and as_words(value) is not None


def _values(sentence: str, answer: str) -> list[str]:
    """The values a sentence states, of the kinds the committed answer could be."""
    found = [next(g for g in m.groups() if g is not None).strip() for m in _MATH.finditer(sentence)]
    bare = _GLUED_UNIT.sub(r"\1\\text{\2}", _MATH.sub(" ", sentence))
    found += _bare_math(_TEXT.sub(" ", bare))
    if as_words(answer) is not None:
        found += [t.strip() for t in _TEXT.findall(bare)]
    if choice_letter(answer) is not None:
        found += _LETTER.findall(_TEXT.sub(r" \1 ", bare))
    return [v for v in found if v and _value_like(v, answer)]


def _bare_math(text: str) -> list[str]:
    """Runs of words of math written without delimiters, each one value."""
    runs: list[list[str]] = [[]]
    for word in text.split():
        if _MATH_WORD.fullmatch(word):
            runs[-1].append(word)
        elif runs[-1]:
            runs.append([])
    values = [" ".join(run).strip(".,;:!?") for run in runs if run]
    return [v[:-1] if v.endswith(")") and _closes_more(v) else v for v in values]


def _closes_more(value: str) -> bool:
    """Whether `value` closes more brackets than it opens: "(it is 12)" ends a parenthesis,
    while the half-open interval "[1, 3)" closes what its "[" opened."""
    return value.count(")") + value.count("]") > value.count("(") + value.count("[")


def _restates(value: str, key: str) -> bool:
    """Whether a value writes the committed answer again, alone or as a side of an
    equation ("3 \\cdot 7 - 1 = 20" restates 20)."""
    return any(hedge_key(side) == key for side in value.split("="))


def _checks(sentence: str, values: list[str]) -> bool:
    """A check of the answer: a checking word (or a sentence that starts with "If"), no
    retraction or offer, computations only."""
    plain = _MATH.sub(" ", sentence)
    retracted = RETRACTS.search(re.sub(r"(?i)\bwait\b", " ", plain))
    if not all("=" in v for v in values) or retracted:
        return False
    if re.match(r"\s*if\b", plain, re.IGNORECASE):  # "If x = 3, then 2x + 1 = 7."
        return not OFFERS.search(plain[3:])
    return bool(_CHECKS.search(sentence)) and not OFFERS.search(plain)


def _other(sentence: str, answer: str, own: bool) -> str | None:
    values = _values(sentence, answer)
    key = hedge_key(answer)
    if not values or any(_restates(v, key) for v in values) or _checks(sentence, values):
        return None  # nothing stated, the committed answer written again, or a check of it
    if _SIGN_OFF.search(sentence):  # "Let me know if you have questions about steps 1-3."
        return None
    words = _WORD.findall(_TEXT.sub(" ", _MATH.sub(" ", sentence)))
    if RETRACTING.search(_MATH.sub(" ", sentence)) or (not own and len(words) <= 2):
        return values[0]
    return None


def stated_after(tail: str, answer: str) -> str | None:
    """A different answer stated in `tail`, the text after the committed `answer`."""
    tail = _LAYOUT.sub(" ", _CLOSING.sub("", tail[:_MAX_TAIL]))
    for i, sentence in enumerate(_SENTENCE_END.split(tail)):
        if sentence.strip():
            other = _other(sentence, answer, own=i == 0)
            if other is not None:
                return other
    return None


def retracted(tail: str, value: str) -> bool:
    """Whether `value`, stated in `tail` after a committed answer, takes it back (a
    retraction before it, no offer in its sentence): then it is the final answer."""
    at = tail.find(value)
    if at < 0:
        return False
    starts = [m.end() for m in _SENTENCE_END.finditer(tail, 0, at)]
    end = _SENTENCE_END.search(tail, at + len(value))
    sentence = tail[starts[-1] if starts else 0 : end.start() if end else len(tail)]
    plain = _MATH.sub(" ", sentence)
    return (
        bool(RETRACTS.search(tail[:at]))
        and not OFFERS.search(plain)
        and not (TENTATIVE.search(plain))
    )


def retractions_in_digits(tail: str) -> str:
    """`tail` with the number words of each retracting sentence in digits ("On second
    thought, it is forty-four." names 44): a retraction in words takes the answer back
    as surely as one in digits. Other sentences keep their words ("the only one")."""
    parts = _SENTENCE_OR_END.split(tail)
    return "".join(words_to_digits(p) if RETRACTS.search(p) else p for p in parts)


_SENTENCE_OR_END = re.compile(r"((?<=[.!?])\s+|\n+)")


def checks_dropped(line: str) -> str:
    """`line` without the checks that end it: "So, $x = 3$. Let me double-check: $3 + 3 =
    6$." answers 3. A check is a sentence with a checking word whose values all compute
    (an operation beside the "="), with no retraction or offer. "Let me verify: $x = 4$."
    states a value: no check."""
    sentences = [s for s in _SENTENCE_END.split(line) if s.strip()]
    while len(sentences) > 1 and _only_computes(sentences[-1]):
        sentences.pop()
    return " ".join(sentences) if sentences else line


def _only_computes(sentence: str) -> bool:
    plain = _MATH.sub(" ", sentence)
    values = [next(g for g in m.groups() if g is not None) for m in _MATH.finditer(sentence)]
    values += _bare_math(_TEXT.sub(" ", plain))
    return (
        bool(values and _CHECKS.search(sentence))
        and not RETRACTS.search(plain)
        and not OFFERS.search(plain)
        and all(_COMPUTES.search(v) for v in values)
    )


_COMPUTES = re.compile(r"[-+*/×·÷^]\s*[^=]*=|=[^=]*[-+*/×·÷^]")
