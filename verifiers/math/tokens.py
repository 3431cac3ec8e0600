"""The tokens of a normalised answer, and the names the parser knows. No sympy here.

Shared by `rewardsmith.verifiers.math.parser` (which builds sympy objects in the worker)
and `rewardsmith.verifiers.math.cost` (which estimates, in the scoring process, what
parsing would cost): both read the same tokens, so the estimate sees what the parser sees.

    >>> tokenize(r"2\\theta + \\sin^2 xy")
    ['2', '\\\\theta', '+', '\\\\sin', '^', '2', 'x', 'y']
"""

from __future__ import annotations

import re

__all__ = [
    "CONSTANTS", "FUNCTIONS", "GREEK", "KNOWN_NAMES", "MAX_DEPTH", "TokenError", "is_number",
    "tokenize",
]  # fmt: skip

MAX_DEPTH = 60
"""Nesting deeper than this is refused: by the cost estimate before any parse, and by the
parser (lark's parser takes seconds on such input, and recursion would overflow)."""

_TOKEN = re.compile(
    r"(?P<num>\d+(?:\.\d*)?|\.\d+)|(?P<cmd>\\[A-Za-z]+|\\[{}|])|(?P<name>[A-Za-z]+)"
    r"|(?P<op>\*\*|[-+*/^_(){}\[\],!|'])|(?P<ws>\s+)|(?P<bad>.)",
    re.DOTALL,
)
FUNCTIONS = frozenset((
    "sin", "cos", "tan", "cot", "sec", "csc", "arcsin", "arccos", "arctan", "asin", "acos",
    "atan", "sinh", "cosh", "tanh", "exp", "ln", "log", "sqrt", "abs",
))  # fmt: skip
CONSTANTS = frozenset({"pi", "infty", "infinity", "inf"})
_LETTERS = (
    "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa",
    "lambda", "mu", "nu", "xi", "omicron", "rho", "sigma", "tau", "upsilon", "phi", "chi",
    "psi", "omega", "Gamma", "Delta", "Theta", "Lambda", "Xi", "Pi", "Sigma", "Upsilon",
    "Phi", "Psi", "Omega", "varpi",
)  # fmt: skip
# Greek letters are symbols; the "var" forms are the same letter (\varepsilon is epsilon).
GREEK = {name: name for name in _LETTERS} | {
    "varepsilon": "epsilon", "vartheta": "theta", "varphi": "phi", "varrho": "rho",
    "varsigma": "sigma", "varkappa": "kappa",
}  # fmt: skip
KNOWN_NAMES = FUNCTIONS | CONSTANTS


class TokenError(ValueError):
    """A character no answer uses."""


def _split_name(word: str) -> list[str]:
    """``sin`` stays a word; ``xy`` is ``x`` times ``y``."""
    if word in KNOWN_NAMES:
        return [word]
    return list(word)


def is_number(token: str | None) -> bool:
    return token is not None and (token[0].isdigit() or token[0] == ".")


def tokenize(text: str, *, strict: bool = True) -> list[str]:
    """The tokens of `text`; an unknown character raises `TokenError` (or, with
    ``strict=False``, is skipped)."""
    out: list[str] = []
    for match in _TOKEN.finditer(text):
        kind, value = match.lastgroup, match.group()
        if kind == "ws":
            continue
        if kind == "bad":
            if strict:
                raise TokenError(f"unexpected character {value!r}")
            continue
        if kind == "name":
            out.extend(_split_name(value))
        else:
            out.append(value)
    return out
