"""What the killable worker imports when it starts: sympy, `judge`, a warmed LaTeX parser,
and an integer-to-text limit that fits the numbers the cost estimate lets through.

sympy's lark LaTeX grammar is built on the first ``parse_latex`` call (about a second
here). Doing that once at worker start, where no comparison's time limit runs, keeps the
fallback parser from eating the limit of the first answer that needs it.
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


_warm_latex_parser()
# The cost estimate lets integers of up to twice FLOOR_DIGITS digits through (more only
# beside a gold as large); str() of them must work for evidence and sympy's printing.
if 0 < sys.get_int_max_str_digits() < 4 * FLOOR_DIGITS:
    sys.set_int_max_str_digits(4 * FLOOR_DIGITS)
