"""What the killable worker imports when it starts: sympy, `judge`, and a warmed LaTeX parser.

sympy's lark LaTeX grammar is built on the first ``parse_latex`` call (about a second
here). Doing that once at worker start, where no comparison's time limit runs, keeps the
fallback parser from eating the limit of the first answer that needs it.
"""

from __future__ import annotations

import contextlib

from rewardsmith.verifiers.math.forms import judge

__all__ = ["judge"]


def _warm_latex_parser() -> None:
    from sympy.parsing.latex import parse_latex

    # lark missing or broken: the fallback then reports it per answer.
    with contextlib.suppress(Exception):
        parse_latex(r"\frac{1}{2}", backend="lark")


_warm_latex_parser()
