"""Readers for the table forms a model writes, and their limits on hostile input."""

from __future__ import annotations

import pytest

from rewardsmith.verifiers.finance.tables import (
    MAX_CELLS,
    Table,
    TableFormatError,
    read_table,
    split_stacked_rows,
)

GRID = [["Item", "2024", "2023"], ["Revenue", "122,445", "150,239"], ["Costs", "(44,943)", "-"]]

FORMS = {
    "markdown": "| Item | 2024 | 2023 |\n|:---|---:|---:|\n| Revenue | 122,445 | 150,239 |\n"
    "| Costs | (44,943) | - |",
    "markdown_fenced": "Here it is:\n```markdown\n| Item | 2024 | 2023 |\n|---|---|---|\n"
    "| Revenue | 122,445 | 150,239 |\n| Costs | (44,943) | - |\n```\nDone.",
    "csv": 'Item,2024,2023\nRevenue,"122,445","150,239"\nCosts,"(44,943)",-',
    "tsv": "Item\t2024\t2023\nRevenue\t122,445\t150,239\nCosts\t(44,943)\t-",
    "html": "<table><thead><tr><th>Item</th><th>2024</th><th>2023</th></tr></thead><tbody>"
    "<tr><td>Revenue</td><td>122,445</td><td>150,239</td></tr>"
    "<tr><td>Costs</td><td>(44,943)</td><td>-</td></tr></tbody></table>",
    "json_rows": '[["Item","2024","2023"],["Revenue","122,445","150,239"],'
    '["Costs","(44,943)","-"]]',
    "json_header": '{"header":["Item","2024","2023"],"rows":[["Revenue","122,445","150,239"],'
    '["Costs","(44,943)","-"]]}',
    "json_records": '[{"Item":"Revenue","2024":"122,445","2023":"150,239"},'
    '{"Item":"Costs","2024":"(44,943)","2023":"-"}]',
    "answer_tag": "<answer>Item;2024;2023\nRevenue;122,445;150,239\nCosts;(44,943);-</answer>",
}


@pytest.mark.parametrize("form", sorted(FORMS))
def test_every_form_reads_to_the_same_grid(form: str) -> None:
    assert read_table(FORMS[form]).grid() == GRID


def test_html_spans_fill_every_slot_they_cover() -> None:
    html = (
        "<table><tr><th rowspan='2'>Item</th><th colspan='2'>Year</th></tr>"
        "<tr><th>2024</th><th>2023</th></tr><tr><td>Revenue</td><td>1</td><td>2</td></tr></table>"
    )
    table = read_table(html)
    assert table.grid() == [
        ["Item", "Year", "Year"],
        ["Item", "2024", "2023"],
        ["Revenue", "1", "2"],
    ]
    assert (table.rows[0][0].rowspan, table.rows[0][1].colspan) == (2, 2)


def test_nested_html_table_is_not_mixed_in() -> None:
    html = "<table><tr><td>a<table><tr><td>inner</td></tr></table></td><td>b</td></tr></table>"
    assert read_table(html).grid() == [["a", "b"]]


def test_a_dash_row_below_data_is_a_row_of_zeros_not_a_separator() -> None:
    table = read_table("| a | b |\n|---|---|\n| x | 1 |\n| - | - |")
    assert table.grid() == [["a", "b"], ["x", "1"], ["-", "-"]]


def test_stacked_rows_from_a_pdf_are_split() -> None:
    stacked = [["State", "Permit", "Pre-Pawn\nHandgun"], ["Alabama\nAlaska", "18,870\n209", ""]]
    assert split_stacked_rows(stacked) == [
        ["State", "Permit", "Pre-Pawn\nHandgun"],
        ["Alabama", "18,870", ""],
        ["Alaska", "209", ""],
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty"),
        ("The revenue was high.", "no |, comma"),
        ("{not json", "not valid JSON"),
        ('{"a": 1}', "JSON table must be"),
        ("[[1, [2, 3]]]", "scalars"),
        ("[" * 5000 + "]" * 5000, "JSON"),
        ("x" * 600_000, "limit"),
        ("<table><tr><td colspan='1000' rowspan='1000'>x</td></tr></table>", "grid slots"),
        ("a," * 30_000, "cells"),
    ],
)
def test_bad_tables_raise_a_clear_error(text: str, message: str) -> None:
    with pytest.raises(TableFormatError, match=message):
        read_table(text)


def test_cell_cap_is_enforced_for_long_csv() -> None:
    text = "\n".join(f"r{i},1,2" for i in range(MAX_CELLS))
    with pytest.raises(TableFormatError):
        read_table(text)


def test_from_grid_handles_none_and_numbers() -> None:
    assert Table.from_grid([["a", None], [1, 2.5]]).grid() == [["a", ""], ["1", "2.5"]]


@pytest.mark.parametrize(
    "text",
    [
        "| a | b |\n|---|---|\n| 1 | 2 |\n\n| a | b |\n|---|---|\n| 1 | 3 |",
        "Alternatively:\n\n| a | b |\n| 1 | 2 |\n\nor\n\n| a | b |\n| 1 | 3 |",
        "| a | b |\n|---|---|\n| 1 | 2 |\nBut if you prefer:\n| b | a |\n| 2 | 1 |",
    ],
)
def test_two_tables_offered_for_one_are_refused(text: str) -> None:
    """A wrong table beside the right one is a hedge (the search found it lifting 0.33 to
    0.59 when the two were read as one table)."""
    with pytest.raises(TableFormatError, match="several tables"):
        read_table(text)
    one = read_table("| a | b |\n|---|---|\n| 1 | 2 |\n\nNote: in thousands | audited")
    assert one.grid()[:2] == [["a", "b"], ["1", "2"]]
