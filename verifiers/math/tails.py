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

A sentence that writes the committed answer again (a check, "3 x 4 = 12") is left alone,
as is one with neither: an explanation ("There are 3 rows of 4 chairs.").

    >>> stated_after(". Actually, $13$.", "12")
    '13'
    >>> stated_after(". Each of the 3 rows has 4 seats, so 12 in all.", "12") is None
    True
"""

from __future__ import annotations

import re

from rewardsmith.verifiers.math.boxes import hedge_key
from rewardsmith.verifiers.math.fast import choice_letter
from rewardsmith.verifiers.math.words import as_words

__all__ = ["RETRACTING", "stated_after"]

_MAX_TAIL = 4_000
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
RETRACTING = re.compile(
    r"\b(?:or|alternatively|otherwise|actually|wait|correction|corrected|rather|instead|"
    r"i\s+mean|possibly|perhaps|maybe|might|could|also|plausible|unless|however|though|"
    r"although|either|hmm|ou|oder|oppure|sinon)\b|или|或",
    re.IGNORECASE,
)
_MATH = re.compile(r"\$\$(.+?)\$\$|\$([^$]+)\$|\\\((.+?)\\\)|\*\*([^*]+)\*\*", re.DOTALL)
# A word of bare math: it has a digit or a command ("25\\%", "2^{10}", "\\frac{1}{2}"), or
# is an operator joining two such words ("25\\% + 1" is one value, not 25 and 1).
_MATH_WORD = re.compile(r"[^\sA-Za-z]*[\d\\]\S*|[-+*/=<>]")
_TEXT = re.compile(r"\\text(?:bf)?\{([^{}]*)\}")
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
    bare = _MATH.sub(" ", sentence)
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
    return [" ".join(run).strip(".,;:!?") for run in runs if run]


def _other(sentence: str, answer: str, own: bool) -> str | None:
    values = _values(sentence, answer)
    key = hedge_key(answer)
    if not values or any(hedge_key(v) == key for v in values):
        return None  # nothing stated, or the committed answer written again
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
