"""Number normalisation: a table of real statement notations, and hostile strings."""

from __future__ import annotations

import pytest

from rewardsmith.verifiers.finance.figures import (
    find_figures,
    is_data_cell,
    parse_figure,
    scale_from_header,
)

CASES = [
    # text, value, scale, unit
    ("1,234", 1234.0, 1.0, ""),
    ("(1,234)", -1234.0, 1.0, ""),
    ("( 1,234 )", -1234.0, 1.0, ""),
    ("1,234-", -1234.0, 1.0, ""),
    ("−1,234.5", -1234.5, 1.0, ""),
    ("–42", -42.0, 1.0, ""),
    ("$1,234", 1234.0, 1.0, "$"),
    ("($1,234)", -1234.0, 1.0, "$"),
    ("$(1,234)", None, None, None),  # parenthesis inside the currency: unbalanced, refused
    ("€ 12.5m", 12.5, 1e6, "€"),
    ("USD 3bn", 3.0, 1e9, "$"),
    ("1.2 billion", 1.2, 1e9, ""),
    ("7k", 7.0, 1e3, ""),
    ("12.5%", 12.5, 1.0, "%"),
    ("(3.4)%", None, None, None),
    ("(3.4%)", -3.4, 1.0, "%"),
    ("25 bp", 25.0, 1.0, "bp"),
    ("25bps", 25.0, 1.0, "bp"),
    ("-", 0.0, 1.0, ""),
    ("—", 0.0, 1.0, ""),
    ("1,234*", 1234.0, 1.0, ""),
    ("1,234†", 1234.0, 1.0, ""),
    ("1,234¹", 1234.0, 1.0, ""),
    ("1,234 (a)", 1234.0, 1.0, ""),
    ("1,234 [2]", 1234.0, 1.0, ""),
    ("1.234.567,89", 1234567.89, 1.0, ""),
    ("1 234 567", 1234567.0, 1.0, ""),
    (".5", 0.5, 1.0, ""),
    ("Revenue", None, None, None),
    ("", None, None, None),
    ("12 34 5", None, None, None),
    ("1e999", None, None, None),
    ("((1))", None, None, None),
]


@pytest.mark.parametrize(("text", "value", "scale", "unit"), CASES)
def test_parse_figure(
    text: str, value: float | None, scale: float | None, unit: str | None
) -> None:
    figure = parse_figure(text)
    if value is None:
        assert figure is None
    else:
        assert figure is not None
        assert (figure.value, figure.scale, figure.unit) == (value, scale, unit)


def test_decimals_are_kept_for_rounding() -> None:
    assert parse_figure("1,234.50").decimals == 2  # type: ignore[union-attr]
    assert parse_figure("1.234,5").decimals == 1  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("header", "scale"),
    [
        ("Income statement (in thousands of dollars)", 1e3),
        ("$ millions", 1e6),
        ("(€m)", 1e6),
        ("Figures in $000s", 1e3),
        ("(000s)", 1e3),
        ("In billions", 1e9),
        ("Revenue by region", 1.0),
        ("Maximum 1,000 employees", 1.0),
    ],
)
def test_scale_from_header(header: str, scale: float) -> None:
    assert scale_from_header(header) == scale


def test_find_figures_in_prose() -> None:
    text = (
        "Revenue rose 12.5% to $1.2 billion in 2024 (from $1,067.3 million); the loss was (4,500)."
    )
    found = [(f.value, f.scale, f.unit) for f in find_figures(text)]
    assert found == [
        (12.5, 1.0, "%"),
        (1.2, 1e9, "$"),
        (2024.0, 1.0, ""),
        (1067.3, 1e6, "$"),
        (-4500.0, 1.0, ""),
    ]


def test_years_are_not_data_cells() -> None:
    assert not is_data_cell("2024")
    assert is_data_cell("2,024") and is_data_cell("(2024)")


@pytest.mark.parametrize(
    "hostile",
    ["9" * 100_000, "(" * 50_000 + "1" + ")" * 50_000, "1," * 200_000, "\x00" * 1000, "𝟙𝟚𝟛"],
)
def test_hostile_text_is_refused_or_read_quickly(hostile: str) -> None:
    assert parse_figure(hostile) is None or parse_figure(hostile).value == 123.0  # type: ignore[union-attr]
    assert isinstance(find_figures(hostile), list)
