"""A final answer is a value, not a computation left to the checker.

The worker evaluates what it parses, so an answer that writes the task's computation
instead of its result would be scored by sympy's arithmetic, not the model's:
``\\sum_{k=1}^{100} k`` for 5050, ``\\int_0^1 x^2\\,dx`` for 1/3, ``\\det`` of the matrix the
question gave, ``\\max(1, 5, 3)``. A policy under pressure learns to copy the question into
the box. `leftover_operation` names the first such operator in an answer whose gold does
not use it (a gold ``\\max(a, b)`` accepts ``\\max(b, a)``); the verifier fails the answer as
a ``format`` failure, problem ``unevaluated``. Closed forms stay answers: powers,
factorials, binomials, roots, logarithms and trigonometric values are how results are
written (``2^{100}``, ``\\binom{10}{3}``, ``\\log_2 3``).

    >>> leftover_operation(r"\\sum_{k=1}^{100} k", "5050")
    '\\\\sum'
    >>> leftover_operation(r"\\binom{10}{3}", "120") is None
    True

Two more ways to leave the work to the checker, found by the red team (``Compute
17·23`` answered ``\\boxed{17 \\cdot 23}`` paid 391), are named by `restated_question`:

* **the question restated**: the answer, an expression with an operation in it, is one
  the prompt already wrote (spaces, ``\\cdot``/``\\times``/``*`` and ``\\left``/``\\right``
  aside), and is not the gold's own written form: ``7!`` for "Evaluate 7!", ``(x+1)^2``
  for "Expand (x+1)^2", ``\\frac{6}{8}`` for "Simplify 6/8";
* **arithmetic left undone**: the gold is a plain number (an integer, a decimal, a
  fraction) and the answer adds, subtracts or multiplies literal numbers:
  ``0.1 + 0.2``, ``17 \\times 23``, ``2 \\cdot 3^2``, ``\\frac12 + \\frac14``. A number is
  written as one term, so this is not a form of the result but the computation.

What stays an answer without the prompt's word: one term in closed form, as results
are written: a signed number or fraction (``-\\frac{1}{2}``, ``3/4``), a mixed number, a
power (``10^6``, ``2^{10}``), scientific notation (``3 \\times 10^{6}``), a radical or
multiple of pi (``2\\sqrt{3}``, ``3\\pi``), ``a + bi``, and the closed forms above
(``\\binom{10}{3}``, ``7!``, ``\\tan\\frac{\\pi}{4}``) unless the prompt wrote them.

    >>> restated_question(r"17 \\cdot 23", "391", r"Compute $17 \\times 23$.")
    'restates the question'
    >>> restated_question("0.1+0.2", "0.3", "Add a tenth and two tenths.")
    'leaves arithmetic undone'
    >>> restated_question(r"3 \\times 10^{6}", "3000000", "How many?") is None
    True
"""

from __future__ import annotations

import re

from rewardsmith.verifiers.math.fast import as_number

__all__ = ["leftover_operation", "restated_question"]

_OPERATION = re.compile(
    r"\\(?:sum|prod|int|iint|iiint|oint|lim|limsup|liminf|det|max|min|sup|inf|gcd|lcm|"
    r"argmax|argmin|bmod|mod)(?![A-Za-z])"
    r"|\\operatorname\s*\{\s*(?:lcm|gcd|max|min|det|tr|rank|rem)\s*\}"
    r"|\\[dt]?frac\s*\{\s*(?:d|\\partial)\b[^{}]*\}\s*\{\s*(?:d|\\partial)"  # d/dx, ∂/∂x
    r"|[∑∏∫]"
)


def _operations(text: str) -> set[str]:
    return {" ".join(m.group().split()) for m in _OPERATION.finditer(text)}


def leftover_operation(answer: str, gold: str) -> str | None:
    """The operator `answer` leaves unevaluated and `gold` does not use, if any."""
    allowed = _operations(gold)
    for match in _OPERATION.finditer(answer):
        name = " ".join(match.group().split())
        if name not in allowed:
            return name
    return None


_PRODUCT = re.compile(r"\\(?:cdot|times|ast)(?![A-Za-z])|[×·∗]")
_QUOTIENT = re.compile(r"\\div(?![A-Za-z])|÷")
_DROPPED = re.compile(r"\\(?:left|right|big|Big|bigg|Bigg)(?![A-Za-z])|\\[,;:! ]|\$")
_SINGLE = re.compile(r"(\^|\\sqrt|\\frac\{[^{}]*\})\s*([A-Za-z0-9])(?![A-Za-z0-9])")
_BARE_FRACTION = re.compile(r"\\frac\s*([A-Za-z0-9])\s*([A-Za-z0-9])(?![A-Za-z0-9])")  # \frac12
_OPERATION_SIGN = re.compile(r"(?<!^)[-+*/^!÷]|^[^-].*[-+*/^!÷]|\\[A-Za-z]+")
# Two literal numbers joined by + - *: a number with an optional power, or \frac{n}{m}. A
# quotient is a fraction however written (3/4, 3 \div 4), as \frac{6}{8} is.
_LITERAL = r"(?:\d+(?:\.\d+)?(?:\^\{?\d+\}?)?|\\frac\{\d+\}\{\d+\})"
_DIGIT_FRACTION = re.compile(r"\\frac\{(\d+)\}\{(\d+)\}")
_UNDONE = re.compile(rf"(?<![\w.\\{{^_]){_LITERAL}(?:[-+]|\*(?!10\^)){_LITERAL}(?![\w.^{{\\(!])")


def _plain(text: str) -> str:
    """`text` with one spelling per sign and no spaces beside signs, for matching."""
    text = _DROPPED.sub(" ", text.replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac"))
    text = _QUOTIENT.sub("÷", _PRODUCT.sub("*", text))
    text = re.sub(r"\s*([^\w\s\\])\s*", r"\1", " ".join(text.split()))
    text = _BARE_FRACTION.sub(r"\\frac{\1}{\2}", text)
    for _ in range(2):  # \frac{6}8 and \sqrt2: the argument braced
        text = _SINGLE.sub(r"\1{\2}", text)
    return _DIGIT_FRACTION.sub(r"\1/\2", text).strip()  # \frac{4}{14} restates "4/14"


def _in_prompt(answer: str, prompt: str) -> bool:
    """True when `answer` occurs in `prompt` as a whole expression (not inside a longer
    number or word: ``7*2`` is not in ``17*23``)."""
    before = r"(?<!\w)(?<!\d\.)" if re.match(r"[\w.]", answer) else ""
    after = r"(?![\w^!_])(?!\.\d)"  # a full stop ends a sentence, not a number
    return re.search(before + re.escape(answer) + after, prompt) is not None


def _braceless(plain: str) -> str:
    """Without grouping braces, which the same expression may or may not write
    (``\\left|{-7}\\right|`` and ``|-7|``, ``2^{10}`` and ``2^10``)."""
    return plain.replace("{", "").replace("}", "")


def restated_question(answer: str, gold: str, prompt: str) -> str | None:
    """Why `answer` is the question's work rather than its result, or None; see the
    module docstring. `gold` written as the answer is never refused."""
    plain = _plain(answer)
    if plain == _plain(gold) or not _OPERATION_SIGN.search(plain):
        return None
    if prompt and _in_prompt(_braceless(plain), _braceless(_plain(prompt))):
        return "restates the question"
    last_side = re.split(r"=|\\approx", plain)[-1]
    if as_number(gold) is not None and _UNDONE.search(last_side):
        return "leaves arithmetic undone"
    return None
