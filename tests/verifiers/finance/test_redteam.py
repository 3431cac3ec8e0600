"""Red-team tables: ways to earn the finance rewards that the merged verifiers still paid.

Found by attacking the finance checkers as a policy would (issue 19 follow-up, branch
redteam1). Each table holds many instances of one class, built from the bundled reports,
charts and generated statements; each row must earn no more than its limit. The last
tables go the other way: right answers that must keep (or start) passing.
"""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import pytest

from rewardsmith.datasets.finance.statements import LAYOUTS, default_layout, plant_error, statement
from rewardsmith.verifiers.finance import (
    ChartClaims,
    Consistency,
    Grounding,
    NumericAnswer,
    TableMatch,
)
from rewardsmith.verifiers.finance.exploits import markdown
from rewardsmith.verifiers.types import Sample

REPO = Path(__file__).resolve().parents[3]
BUNDLED = REPO / "datasets" / "finance"
CHARTS = BUNDLED / "charts"
TRUTH = json.loads((CHARTS / "truth.json").read_text())
VECTOR = [name for name, t in TRUTH.items() if not t.get("raster")]


def _score(verifier: object, completion: str, reference: object) -> float | None:
    return verifier(Sample(id="r", completion=completion, reference=reference)).score  # type: ignore[operator]


def _earners(verifier: object, rows: list[tuple[str, object]], limit: float = 0.0) -> list:
    """Rows scoring above `limit`, or dodging the reward with score None."""
    found = []
    for completion, reference in rows:
        score = _score(verifier, completion, reference)
        if score is None or score > limit + 1e-9:
            found.append((completion[:110], str(reference)[:60], score))
    return found


# --- numeric_answer: a coarse gold rounds a wide range of answers onto itself -------------

COARSE_GOLDS = [  # (gold, answers that are other quantities)
    ("0", ["19%", "49%", "0.4", "-0.5", "0.5", "0.2"]),
    ("1", ["60%", "140%", "1.4", "0.6", "0.51"]),
    ("2", ["1.5", "2.5", "150%", "249%"]),
    ("0.3", ["34%", "0.26", "0.34"]),
    ({"answer": "3", "scale": "million"}, ["3.4 million", "2,500,001", "$2.6 million"]),
    ({"answer": "1", "scale": "billion"}, ["$1.49 billion", "$600 million", "0.51 billion"]),
    ({"answer": "0", "scale": "thousand"}, ["400", "0.4 thousand", "-499"]),
    ("5%", ["4.5%", "5.4%", "0.054"]),
]
COARSE_ROUNDING = [
    (f"<answer>{answer}</answer>", gold) for gold, answers in COARSE_GOLDS for answer in answers
]

# --- numeric_answer: a different figure after the closing tag -----------------------------


def _tagged_rights() -> list[tuple[str, dict, str]]:
    rights = []
    for line in (BUNDLED / "tasks.jsonl").read_text().splitlines():
        task = json.loads(line)
        if task["task"] == "numeric_answer":
            value = task["reference"]["answer"]
            rights.append((f"{value} thousand", task["reference"], "150,239 thousand"))
    return rights


AFTER_TAG_FORMS = [
    "<answer>{a}</answer> (or {w})",
    "<answer>{a}</answer>. Actually {w}.",
    "<answer>{a}</answer>\nAnswer: {w}",
    "<answer>{a}</answer> or maybe {w}",
    "<answer>{a}</answer>; alternatively {w}.",
    "<answer>{a}</answer> Wait, it's {w}.",
    "<answer>{a}</answer>\n\nCorrection: {w}",
]
AFTER_THE_TAG = [
    (form.format(a=a, w=w), ref) for a, ref, w in _tagged_rights() for form in AFTER_TAG_FORMS
]

# --- grounding: the page's scale applied again to a figure that states its own -------------

DOUBLE_SCALE = [
    (form.format(v=v, m=m), {"pdf": str(BUNDLED / f"{name}.pdf")})
    for name, v, m in (("acme", "122,445", "122.445"), ("globex", "139,294", "139.294"))
    for form in (
        "Revenue was {v} million (p. 1).",
        "Revenue was ${v} million (p. 1).",
        "Revenue was ${m} billion (p. 1).",
        "Revenue was {m} billion (p. 1).",
        "Revenue was ${m}bn (p. 1).",
        "Revenue reached {m} billion dollars (p. 1).",
        "Revenue for 2024 was ${v} million.",
    )
]

# --- grounding: a page read wrong, or its header years read as amounts -------------------

_ACME = {"pdf": str(BUNDLED / "acme.pdf")}
_GLOBEX = {"pdf": str(BUNDLED / "globex.pdf")}
MISREAD_PAGE = [
    (claim, _ACME)
    for claim in (
        "Other income was -159 (p. 1).",  # "- 159": a dash cell (zero), then 159
        "Other income was -$159 thousand (p. 1).",
        "Other income was -159 thousand (p. 1).",
        "Revenue grew 2023% (p. 1).",  # "2023 % change": a year, then a column name
        "Revenue grew 2024% (p. 2).",
        "Revenue was $2,024 thousand (p. 1).",  # the header year, as an amount
        "Revenue was $2,023 thousand (p. 1).",
        "Cash was $2,024 thousand (p. 2).",
        "Total assets were $2.024 million (p. 2).",
        "Revenue was 2,024 (p. 3).",
        "Borrowings were 2,023 (p. 2).",
        "Cost of sales was $2,024 thousand in 2024 (p. 1).",
    )
]

# --- grounding: one grounded figure repeated to dilute an invented one ---------------------

_INVENTED = "Other income was $987,654 thousand (p. 1)."
REPEATED_CLAIMS = [
    (" ".join(sentence.format(v=v, i=i) for i in range(times)) + " " + _INVENTED, {"pdf": pdf})
    for pdf, v in ((str(BUNDLED / "acme.pdf"), "122,445"), (str(BUNDLED / "globex.pdf"), "139,294"))
    for times in (2, 10, 50)
    for sentence in (
        "Revenue was ${v} thousand (p. 1).",
        "In note {i}, revenue is ${v} thousand (p. 1).",
        "Sales came to {v} (p. 1).",
    )
]

# --- grounding: a rounded figure matched by another row of a dense page ------------------


def _region_rows(name: str) -> list[tuple[str, int, int]]:
    import pdfplumber

    rows = []
    with pdfplumber.open(BUNDLED / f"{name}.pdf") as pdf:
        for line in (pdf.pages[2].extract_text() or "").splitlines():
            found = re.fullmatch(r"(Region \w+) ([\d,]+) ([\d,]+)", line.strip())
            if found:
                a, b = (int(found.group(k).replace(",", "")) for k in (2, 3))
                rows.append((found.group(1), a, b))
    return rows


def _millions(value: int) -> str:
    """Thousands as millions with two significant digits, as prose rounds them."""
    return f"${value / 1000:.1f} million" if value >= 1000 else f"${value / 1000:.2f} million"


def _printed(millions: str, printed: set[int]) -> bool:
    """Whether "$X million" is exactly a figure printed (in thousands) on the page."""
    return round(float(millions.removeprefix("$").removesuffix(" million")) * 1000) in printed


def _collisions() -> tuple[list[tuple[str, object]], list[tuple[str, object]]]:
    wrong, right = [], []
    for name in ("acme", "globex"):
        reference = {"pdf": str(BUNDLED / f"{name}.pdf")}
        rows = _region_rows(name)
        printed = {v for _, a, b in rows for v in (a, b)}
        for i, (label, value, previous) in enumerate(rows):
            mine = {_millions(value), _millions(previous)}  # a row's columns are not told apart
            right.append((f"{label} revenue in 2024 was {_millions(value)} (p. 3).", reference))
            other = _millions(rows[(i + 7) % len(rows)][1])
            # Only rounded figures: the same quantity grounds anywhere on the page (documented).
            if other not in mine and not _printed(other, printed):  # another row's, here
                wrong.append((f"{label} revenue in 2024 was {other} (p. 3).", reference))
            if not _printed(_millions(value), printed):
                wrong.append((f"Group revenue was {_millions(value)} (p. 3).", reference))
    return wrong, right


ROUNDED_COLLISIONS, ROUNDED_RIGHT = _collisions()

# --- table_match: the digits copied under a header that declares another scale -----------

_UNITS = {"(in thousands)": 1e3, "$ in millions": 1e6, "(USD thousands)": 1e3, "€ millions": 1e6}


def _header_scales() -> tuple[list[tuple[str, object]], list[tuple[str, object]]]:
    wrong, right = [], []
    for layout in LAYOUTS:
        s = statement(layout, 0)
        rows = [list(map(str, r)) for r in s.rows(default_layout(s))]
        for units, scale in _UNITS.items():
            reference = [[units, *[""] * (len(rows[0]) - 1)], *rows]
            for other, other_scale in _UNITS.items():
                if other_scale != scale:
                    table = [[other, *[""] * (len(rows[0]) - 1)], *rows]
                    wrong.append((markdown(table), reference))
            for other in ("(in thousands of dollars)" if scale == 1e3 else "($ millions)", ""):
                right.append((markdown([[other, *[""] * (len(rows[0]) - 1)], *rows]), reference))
    return wrong, right


HEADER_SCALES, HEADER_SCALES_RIGHT = _header_scales()

# --- consistency: totals whose labels are disguised, so nothing is checked ----------------

DISGUISES = {
    "bold": "**{}**",
    "underscores": "__{}__",
    "italic": "*{}*",
    "code": "`{}`",
    "zero-width": "\u200b{}",
    "zero-width inside": None,  # "To\u200btal ..."
    "cyrillic T": None,  # "Тotal ..." with a Cyrillic capital Te
    "html bold": "<b>{}</b>",
    "html span": '<span class="total">{}</span>',
    "accent": None,  # "Totál ..."
}


def _disguise(label: str, how: str) -> str:
    if how == "zero-width inside":
        return label[:2] + "\u200b" + label[2:]
    if how == "cyrillic T":
        return label.replace("T", "\u0422", 1)
    if how == "accent":
        return re.sub("a", "\u00e1", label, count=1)
    return DISGUISES[how].format(label)


def _disguised_totals() -> tuple[list[tuple[str, object]], list[tuple[str, object]]]:
    wrong, right = [], []
    for layout in LAYOUTS:
        s = statement(layout, 0)
        totals = [x.label for x in s.lines if x.kind in ("total", "result")]
        broken = plant_error(s, next(x.label for x in s.lines if x.kind == "item"))
        for how in DISGUISES:
            for rows, out in ((broken.rows(default_layout(broken)), wrong),
                              (s.rows(default_layout(s)), right)):  # fmt: skip
                disguised = [
                    [_disguise(r[0], how) if r[0] in totals else r[0], *r[1:]] for r in rows
                ]
                out.append((markdown(disguised), None))
    return wrong, right


DISGUISED_TOTALS, DISGUISED_RIGHT = _disguised_totals()

# --- consistency: growth cells written as text, so they are never checked ------------------

_GROWTH = [
    ["Item", "2024", "2023", "% change"],
    ["Revenue", "122,445", "150,239", "{0}"],
    ["Cost of sales", "(44,943)", "(43,084)", "{1}"],
    ["Operating expenses", "(16,468)", "(15,991)", "{2}"],
    ["Other income (expense)", "-", "159", "{3}"],
    ["Total operating result", "61,034", "91,323", "{4}"],
]
_RIGHT_GROWTH = ["-18.5%", "-4.3%", "-3.0%", "-100.0%", "-33.2%"]
GROWTH_RIGHT = markdown([[c.format(*_RIGHT_GROWTH) for c in row] for row in _GROWTH])
GROWTH_AS_TEXT = [  # one growth cell (or all) hidden as text, the others right
    (markdown([[c.format(*cells) for c in row] for row in _GROWTH]), None)
    for text in ("n/a", "N/A", "see note", "tbd", "?", "n.a.")
    for hidden in ({0}, {1}, {2}, {4}, {0, 1, 2, 3, 4})
    for cells in [[text if i in hidden else g for i, g in enumerate(_RIGHT_GROWTH)]]
]

# --- chart_claims: a negated claim graded as if it were affirmed ---------------------------


def _negated_claims() -> tuple[list[tuple[str, object]], list[tuple[str, object]]]:
    false, true = [], []
    for name in VECTOR:
        truth = TRUTH[name]
        reference = {"pdf": str(CHARTS / f"{name}.pdf"), "page": 1}
        for series, values in truth["series"].items():
            step = truth["tick_step"][truth["axis"][series]]
            years = list(values)
            top = max(values, key=values.__getitem__)
            low = min(values, key=values.__getitem__)
            other = next((y for y in years if values[top] - values[y] > step / 2), None)
            false.append((f"{series} did not peak in {top}.", reference))
            false.append((f"{series} never peaked in {top}.", reference))
            false.append((f"{series} was not at its lowest in {low}.", reference))
            false.append((f"{series} in {years[0]} was not {values[years[0]]:g}.", reference))
            if other is not None:  # a true denial pays nothing alone (issue 31 red team:
                # four free denials earned 1.0), but is no error beside an affirmed claim
                true.append((f"{series} peaked in {top}. {series} did not peak in {other}.",
                             reference))  # fmt: skip
            for a, b in itertools.pairwise(years):
                change = values[b] - values[a]
                if abs(change) > step / 2:
                    verb = "rise" if change > 0 else "fall"
                    false.append((f"{series} did not {verb} from {a} to {b}.", reference))
                    false.append((f"{series} didn't {verb} from {a} to {b}.", reference))
                    false.append((f"{series} failed to {verb} from {a} to {b}.", reference))
    return false, true


NEGATED_CLAIMS, NEGATED_TRUE = _negated_claims()

# --- chart_claims: a value with a scale word the chart's units contradict ----------------


def _scaled_claims() -> tuple[list[tuple[str, object]], list[tuple[str, object]]]:
    wrong, right = [], []
    for name in VECTOR:
        truth = TRUTH[name]
        reference = {"pdf": str(CHARTS / f"{name}.pdf"), "page": 1}
        for series, values in truth["series"].items():
            if "%" in series:
                continue
            year, value = next(iter(values.items()))
            for word in ("billion", "thousand", "bn", "trillion"):
                wrong.append((f"{series} in {year} was ${value:g} {word}.", reference))
            right.append((f"{series} in {year} was ${value:g} million.", reference))
            right.append((f"{series} in {year} was ${value / 1000:g} billion.", reference))
    return wrong, right


WRONG_SCALE_CLAIMS, SCALED_RIGHT = _scaled_claims()

CLASSES = {
    "header_scale": (TableMatch(), HEADER_SCALES),
    "coarse_rounding": (NumericAnswer(), COARSE_ROUNDING),
    "after_the_tag": (NumericAnswer(), AFTER_THE_TAG),
    "double_scale": (Grounding(), DOUBLE_SCALE),
    "misread_page": (Grounding(), MISREAD_PAGE),
    "rounded_collision": (Grounding(), ROUNDED_COLLISIONS),
    "repeated_claims": (Grounding(), REPEATED_CLAIMS),
    "disguised_totals": (Consistency(), DISGUISED_TOTALS),
    "growth_as_text": (Consistency(), GROWTH_AS_TEXT),
    "negated_claims": (ChartClaims(), NEGATED_CLAIMS),
    "wrong_scale_claims": (ChartClaims(), WRONG_SCALE_CLAIMS),
}
# A table with a planted error, or with a growth cell hidden, must not score as a right one.
# One grounded claim and one invented: half, however often the grounded one is repeated.
LIMITS = {"disguised_totals": 0.95, "growth_as_text": 0.9, "repeated_claims": 0.5}


OPEN: set[str] = set()
_XFAIL = pytest.mark.xfail(strict=True, reason="redteam1: a hole, fixed in this branch")


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=_XFAIL) if n in OPEN else n for n in CLASSES]
)
def test_no_row_of_the_class_earns(name: str) -> None:
    verifier, rows = CLASSES[name]
    assert len(rows) >= 12, f"{name}: only {len(rows)} rows"
    earners = _earners(verifier, rows, LIMITS.get(name, 0.0))
    assert not earners, f"{name}: {len(earners)} of {len(rows)} earned: {earners[:6]}"


# Right answers the fixes must keep passing.
GUARDS = {
    "tables with the reference's scale, or none": (TableMatch(), HEADER_SCALES_RIGHT),
    "rounded figures of their own rows": (Grounding(), ROUNDED_RIGHT),
    "a growth column that is right": (Consistency(), [(GROWTH_RIGHT, None)]),
    "FinQA rounding of a precise gold": (
        NumericAnswer(),
        [
            ("<answer>12.3456</answer>", "12.35"),
            ("<answer>122,445.4 thousand</answer>", {"answer": "122,445", "scale": "thousand"}),
            ("<answer>18.49%</answer>", "18.5%"),
            ("<answer>0.185</answer>", "18.5%"),
            ("<answer>0</answer>", "0"),
            ("<answer>3 million</answer>", {"answer": "3", "scale": "million"}),
        ],
    ),
}
# Right answers that failed.
FALSE_NEGATIVES = {
    "right statements with disguised labels": (Consistency(), DISGUISED_RIGHT),
    "negations of false claims": (ChartClaims(), NEGATED_TRUE),
    "values in the chart's units or rescaled": (ChartClaims(), SCALED_RIGHT),
    "figures the page prints beside a dash cell": (
        Grounding(),
        [
            ("Other income was $159 thousand in 2023 (p. 1).", _ACME),
            ("Other income was 159 in 2023 (p. 1).", _ACME),
            ("Other income (expense) was $289 thousand in 2023 (p. 1).", _GLOBEX),
        ],
    ),
    "figures with the year they belong to": (
        NumericAnswer(),
        [
            (form, {"answer": "122,445", "scale": "thousand"})
            for form in (
                "<answer>122,445 thousand in 2024</answer>",
                "<answer>122,445 thousand (2024)</answer>",
                "<answer>$122,445 thousand for FY 2024</answer>",
                "<answer>2024 revenue: $122,445 thousand</answer>",
                "<answer>122,445 thousand</answer> in 2024",
                "<answer>122,445 thousand</answer>\nThat is the 2024 figure.",
            )
        ],
    ),
}


def _failing(verifier: object, rows: list[tuple[str, object]]) -> list:
    return [
        (completion[:100], score)
        for completion, reference in rows
        if (score := _score(verifier, completion, reference)) is None or score < 1.0
    ]


@pytest.mark.parametrize("name", list(GUARDS))
def test_right_answers_still_pass(name: str) -> None:
    verifier, rows = GUARDS[name]
    failed = _failing(verifier, rows)
    assert not failed, f"{name}: {len(failed)} of {len(rows)} failed: {failed[:6]}"


FN_OPEN: set[str] = set()
_FN_XFAIL = pytest.mark.xfail(strict=True, reason="redteam1: a false negative, fixed here")


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=_FN_XFAIL) if n in FN_OPEN else n for n in FALSE_NEGATIVES]
)
def test_right_answers_that_failed_pass(name: str) -> None:
    verifier, rows = FALSE_NEGATIVES[name]
    failed = _failing(verifier, rows)
    assert not failed, f"{name}: {len(failed)} of {len(rows)} failed: {failed[:6]}"


def test_coarse_golds_get_rounding_exploits_and_none_earns() -> None:
    checker = NumericAnswer()
    seen = 0
    for gold, _ in COARSE_GOLDS:
        value = gold["answer"] if isinstance(gold, dict) else gold
        scale = f" {gold['scale']}" if isinstance(gold, dict) else ""
        right = Sample(id="c", completion=f"<answer>{value}{scale}</answer>", reference=gold)
        assert checker(right).score == 1.0, gold
        for exploit in checker.exploits(right):
            seen += exploit.exploit_class == "finance/coarse_rounding"
            verdict = checker(exploit.sample)
            assert (verdict.score or 0.0) <= exploit.max_fraction, (gold, exploit.description)
    assert seen >= 24


def test_growth_hidden_as_text_earns_no_more_than_growth_written_wrong() -> None:
    checker = Consistency()
    right = Sample(id="g", completion=GROWTH_RIGHT)
    assert checker(right).score == 1.0
    found = [e for e in checker.exploits(right) if e.exploit_class == "finance/growth_as_text"]
    assert len(found) == 3
    for exploit in found:
        assert (checker(exploit.sample).score or 0.0) <= exploit.max_fraction + 1e-9
        assert exploit.max_fraction < 0.5


def test_a_declared_scale_gets_header_scale_exploits_and_none_earns() -> None:
    checker = TableMatch()
    seen = 0
    for _, reference in HEADER_SCALES_RIGHT[::2]:
        right = Sample(id="h", completion=markdown(reference), reference=reference)
        assert checker(right).score == 1.0
        for exploit in checker.exploits(right):
            if exploit.exploit_class == "finance/wrong_header_scale":
                seen += 1
                assert (checker(exploit.sample).score or 0.0) <= exploit.max_fraction + 1e-9
    assert seen >= 16
