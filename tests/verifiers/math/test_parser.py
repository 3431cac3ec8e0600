"""The expression parser: LaTeX and plain forms to sympy, with guards and no eval."""

from __future__ import annotations

from pathlib import Path

import pytest
import sympy

from rewardsmith.verifiers.math.normalize import normalise
from rewardsmith.verifiers.math.parser import ParseError, TooDeep, parse

x, y, n = sympy.symbols("x y n")

PARSES = [
    (r"\frac{1}{2} + \sqrt{4}", sympy.Rational(5, 2)),
    (r"\frac12", sympy.Rational(1, 2)),
    (r"\frac{\sqrt{3}}{2}", sympy.sqrt(3) / 2),
    (r"\sqrt[3]{8}", sympy.Integer(2)),
    ("2x^2 - 3x", 2 * x**2 - 3 * x),
    (r"2\cdot 3 \times 4", sympy.Integer(24)),
    (r"6 \div 4", sympy.Rational(3, 2)),
    (r"x^{10}", x**10),
    ("2^-1", sympy.Rational(1, 2)),
    (r"\pi r", sympy.pi * sympy.Symbol("r")),
    ("e^2", sympy.E**2),
    ("3+4i", 3 + 4 * sympy.I),
    (r"\sin^2 x + \cos^2 x", sympy.sin(x) ** 2 + sympy.cos(x) ** 2),
    (r"\sin 2x", sympy.sin(2 * x)),
    (r"\sin x \cos x", sympy.sin(x) * sympy.cos(x)),
    (r"\log_2 8", sympy.Integer(3)),
    (r"\ln(e)", sympy.Integer(1)),
    ("|x-1|", sympy.Abs(x - 1)),
    ("5!", sympy.Integer(120)),
    (r"\binom{5}{2}", sympy.Integer(10)),
    ("x_1 + x_{2}", sympy.Symbol("x_1") + sympy.Symbol("x_2")),
    (r"\frac{n(n+1)}{2}", n * (n + 1) / 2),
    ("0.25", sympy.Rational(1, 4)),
    ("xy", x * y),
    (r"-\infty", -sympy.oo),
]


@pytest.mark.parametrize(("text", "value"), PARSES)
def test_parses(text: str, value: sympy.Expr) -> None:
    assert sympy.simplify(parse(text) - value) == 0 or parse(text) == value


@pytest.mark.parametrize(
    "text", ["", "1 +", "(1", r"\frac{1}", r"\foo{1}", "1 ; 2", "2 @ 3", r"\def\a{1}"]
)
def test_rejects_what_it_does_not_read(text: str) -> None:
    with pytest.raises(ParseError):
        parse(text)


def test_deep_nesting_is_an_error_not_a_recursion_error() -> None:
    with pytest.raises(TooDeep):
        parse("(" * 5000 + "1" + ")" * 5000)
    with pytest.raises(TooDeep):
        parse("-" * 5000 + "1")


@pytest.mark.parametrize("text", [r"10^{10^{10}}", r"9^{9^{9}}", "100000!", r"2^{100000}"])
def test_huge_numbers_stay_unevaluated(text: str) -> None:
    value = parse(text)  # returns at once instead of computing billions of digits
    assert not isinstance(value, sympy.Integer)


def test_model_text_is_never_evaluated(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    payloads = [
        f"__import__('os').system('touch {marker}')",
        f"exec(\"open('{marker}', 'w')\")",
        "().__class__.__bases__[0].__subclasses__()",
    ]
    for payload in payloads:
        with pytest.raises(ParseError):
            parse(normalise(payload).text)
    assert not marker.exists()


NORMALISED = [
    (r"$\dfrac{3}{4}$", r"\frac{3}{4}", False),
    (r"\left( 1, 2 \right]", "( 1, 2 ]", False),
    (r"45^\circ", "45", False),
    (r"12\text{ cm}", "12", False),
    (r"\$18.50", "18.50", False),
    (r"25\%", "25", True),
    ("1,000,000", "1000000", False),
    (r"1{,}000", "1000", False),
    (r"2\,500", "2500", False),
    (r"4\frac{1}{2}", r"(4+\frac{1}{2})", False),
    ("3 or 4", "3, 4", False),
    ("(1,000)", "(1,000)", False),
]


@pytest.mark.parametrize(("raw", "text", "percent"), NORMALISED)
def test_normalise(raw: str, text: str, percent: bool) -> None:
    assert normalise(raw).text == text and normalise(raw).percent is percent
