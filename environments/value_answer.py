"""In an environment that asks for a computed value, the answer must be one.

The `math` verifier accepts a closed form for a plain gold (``2^{100}`` for
1267650600228229401496703205376, ``\\binom{10}{3}`` for 120): in a question that only
names the number, writing a closed form is a way of stating the result. In an environment
whose task is the computation itself ("What is 2**31 - 1?", "3+4="), the same rule pays
the question copied into the box: the red team of issue 24 earned 1.0 on three of the
twelve `math_tool` tasks with ``\\boxed{2^{31} - 1}``, ``\\boxed{\\binom{30}{15}}`` and
``\\boxed{1/2 + 1/3 + 1/7}`` (asked "in lowest terms"), and 0.8 on every
`retry_arithmetic` task with ``\\boxed{3+4}``. The checker, not the model, did the work.

So where the gold is a plain value (an integer, a decimal or a fraction of integers,
`verifiers.math.fast.as_number`), the answer the verifier reads (`read_answer`, the same
reading) must be a plain value too, after its last ``=`` ("x = 7", "3+4=7") and with
words, units and spacing macros dropped. An answer with digits that is not is refused with an
observation that says why (the environment's refusal: no reward, the episode goes on).

    >>> left_computation(r"\\boxed{2^{31} - 1}", "2147483647")
    'write the value itself, not an expression for the checker to evaluate (2^{31} - 1)'
    >>> left_computation(r"3+4=7", "7"), left_computation(r"\\boxed{\\frac{41}{42}}", "41/42")
    ('', '')
    >>> left_computation(r"\\boxed{\\sqrt{2}}", r"\\sqrt{2}")  # the gold is no plain value
    ''
"""

from __future__ import annotations

import re

from rewardsmith.environments.protocol import EpisodeState, Transition
from rewardsmith.verifiers.math.fast import as_number
from rewardsmith.verifiers.math.glyphs import plain_glyphs
from rewardsmith.verifiers.math.numerals import as_plain
from rewardsmith.verifiers.math.reading import read_answer
from rewardsmith.verifiers.math.spelling import repair_escapes

__all__ = ["left_computation", "refuse_computation"]

_WORDS = re.compile(
    r"\\(?:text|textbf|textrm|textit|mathrm|mathbf|mbox)\s*\{[^{}]*\}"  # units, words
    r"|\\[,;:! ]|\\q?quad(?![A-Za-z])|~|\\?%|\\\$|\$|\^\s*\{?\s*\\circ\s*\}?|\\left|\\right"
)
_MINUS = str.maketrans({"\u2212": "-", "\u2013": "-", "\ufe63": "-", "\uff0d": "-"})
_GROUPS = re.compile(r"(?<=\d)(?:\{,\}|\\,|\s)(?=\d{3}(?!\d))")
"""A thousands separator written as ``{,}``, a thin space or a space: "2\\,147\\,483"."""
_SCIENTIFIC = re.compile(
    r"[-+]?\d+(?:\.\d+)?\s*(?:\\times|\\cdot|\*|x)\s*10\s*\^\s*\{?\s*[-+]?\d+\s*\}?"
)
"""Scientific notation, a way of writing one value: ``2.1\\times 10^{9}``."""


def left_computation(text: str, gold: str) -> str:
    """Why the final answer of `text` is not a plain value where `gold` is one ('' when it
    is, when there is no answer to read, or when the gold is not a plain value)."""
    if as_number(gold) is None:
        return ""
    answer = read_answer(repair_escapes(text), gold).answer
    if answer is None:
        return ""  # no answer: the verifier says so itself
    value = plain_glyphs(answer.rsplit("=", 1)[-1]).text.translate(_MINUS)
    # Punctuation around the value ("(7)", "7.", "7,") is the sentence's, not a computation:
    # the verifier reads "7," as 7, and refusing it paid a one-turn environment less than
    # the single-turn reward on the same answer (0 against 0.8).
    value = _WORDS.sub(" ", _GROUPS.sub("", value)).strip().strip("().,")
    if not any(c.isdigit() for c in value):
        return ""  # words, a symbol: no computation to leave ("at all", "\\pi")
    if as_number(as_plain(value)) is not None or _SCIENTIFIC.fullmatch(value):
        return ""
    return (
        "write the value itself, not an expression for the checker to evaluate "
        f"({answer.strip()[:80]})"
    )


def refuse_computation(state: EpisodeState, action: str) -> Transition | None:
    """The environment's refusal of an answer that leaves its computation to the checker
    (an observation, no reward; the episode goes on while turns are left), or None."""
    problem = left_computation(action, str(state.task.get("reference", "")))
    if not problem:
        return None
    observation = f"error: {problem}"
    return Transition(
        state.with_attempt(action, observation, kind="refused"), observation, None, False
    )
