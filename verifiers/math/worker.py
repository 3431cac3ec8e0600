"""What the killable worker imports when it starts: sympy, `judge`, a warmed LaTeX parser,
warmed comparison paths, and an integer-to-text limit that fits the numbers the cost
estimate lets through.

The CPU budget must measure the work of a comparison, never the worker's start-up, or the
verdict would depend on which worker got the answer (issue 26: a matrix product past its
budget on a fresh worker, judged on a warm one). So what a first comparison would pay
once is paid here, where no budget runs: sympy's lark LaTeX grammar is built (about a
second), and one comparison of each shape (matrices, intervals and unions, relations,
sets, trigonometric and polynomial identities) loads what sympy imports lazily. `judge`
clears sympy's cache before each comparison, so a worker that has seen an answer before
does not check it more cheaply than a fresh one.
"""

from __future__ import annotations

import contextlib
import sys

from rewardsmith.verifiers.math.cost import FLOOR_DIGITS
from rewardsmith.verifiers.math.forms import judge

__all__ = ["judge"]


def _warm_latex_parser() -> None:
    from sympy.parsing.latex import parse_latex

    # lark missing or broken: the fallback then reports it per answer.
    with contextlib.suppress(Exception):
        parse_latex(r"\frac{1}{2}", backend="lark")


_WARM_UP = (
    (r"\begin{pmatrix} 19 & 22 \\ 43 & 50 \end{pmatrix}",
     r"\begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix}\begin{pmatrix} 5 & 6 \\ 7 & 8 \end{pmatrix}"),
    (r"(-\infty, 2]", r"(-\infty, 0) \cup [0, 2]"),
    (r"y = 2x + 1", r"2x - y + 1 = 0"),
    (r"x > 3", r"(3, \infty)"),
    (r"\sin^2\theta", r"1 - \cos^2\theta"),
    (r"x^2+2x+1", r"(x+1)^2"),
    (r"\{1, 2\}", r"\{2, 1\}"),
    (r"\frac{\sqrt{3}}{2}", r"\cos\frac{\pi}{6}"),
    (r"-1", r"e^{i\pi}"),
)  # fmt: skip


def _warm_comparisons() -> None:
    for gold, answer in _WARM_UP:
        with contextlib.suppress(Exception):
            judge(gold, answer, 0.0, 3, 10.0)


_warm_latex_parser()
_warm_comparisons()
# The cost estimate lets integers of up to twice FLOOR_DIGITS digits through (more only
# beside a gold as large); str() of them must work for evidence and sympy's printing.
if 0 < sys.get_int_max_str_digits() < 4 * FLOOR_DIGITS:
    sys.set_int_max_str_digits(4 * FLOOR_DIGITS)
