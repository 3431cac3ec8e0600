"""Charts: every series value of the bundled vector charts recovered within half an axis
tick (to the last digit, as it happens), every true claim about them holds, every false one
fails, and a chart that is a picture gets a clear "cannot be read"."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rewardsmith.verifiers.exploits import exploits_of
from rewardsmith.verifiers.finance.chart_claims import ChartClaims, load_chart, parse_claims
from rewardsmith.verifiers.finance.reference import ExtractionLimits
from rewardsmith.verifiers.types import Failure, Sample, Status

CHARTS = Path(__file__).resolve().parents[3] / "datasets" / "finance" / "charts"
TRUTH = json.loads((CHARTS / "truth.json").read_text())
VECTOR = [name for name, t in TRUTH.items() if not t.get("raster")]


@pytest.mark.parametrize("name", VECTOR)
def test_every_series_value_is_recovered_within_half_a_tick(name: str) -> None:
    truth = TRUTH[name]
    read = load_chart(str(CHARTS / f"{name}.pdf"), 1, ExtractionLimits())
    assert "problem" not in read, read
    assert read["categories"] == list(next(iter(truth["series"].values())))
    assert set(read["series"]) == set(truth["series"])  # legend names, nothing extra
    for series, values in truth["series"].items():
        got = read["series"][series]
        assert got["axis"] == truth["axis"][series]
        half_tick = truth["tick_step"][got["axis"]] / 2
        for category, value in values.items():
            assert abs(got["values"][category] - value) <= half_tick
            assert got["values"][category] == pytest.approx(value, abs=1e-6)  # measured


def test_a_raster_chart_cannot_be_read() -> None:
    verdict = ChartClaims()(
        Sample(id="r", completion="Revenue in 2021 was 151.", reference=_pdf("raster"))
    )
    assert verdict.status is Status.ERROR and verdict.failure is Failure.BAD_REFERENCE
    assert verdict.score is None and "picture" in verdict.feedback


def _pdf(name: str) -> dict[str, object]:
    return {"pdf": str(CHARTS / f"{name}.pdf"), "page": 1}


def _true_claims(name: str) -> list[str]:
    truth = TRUTH[name]
    out = []
    for series, values in truth["series"].items():
        years = list(values)
        top = max(values, key=values.__getitem__)
        low = min(values, key=values.__getitem__)
        out.append(f"{series} peaked in {top}.")
        out.append(f"The lowest {series} was in {low}.")
        for year in years:
            out.append(f"{series} in {year} was {values[year]:g}.")
        a, b = years[0], years[-1]
        verb = "rose" if values[b] > values[a] else "fell"
        out.append(f"{series} {verb} from {a} to {b}.")
        if values[a]:
            pct = (values[b] - values[a]) / abs(values[a]) * 100
            out.append(f"{series} {verb} {abs(pct):.1f}% from {a} to {b}.")
        change = values[years[2]] - values[years[1]]
        verb = "grew" if change > 0 else "declined"
        if values[years[1]]:
            pct = abs(change) / abs(values[years[1]]) * 100
            out.append(f"{series} {verb} {pct:.1f}% year over year in {years[2]}.")
    return out


@pytest.mark.parametrize("name", VECTOR)
def test_true_claims_hold_on_the_pdf(name: str) -> None:
    claims = _true_claims(name)
    verdict = ChartClaims()(Sample(id="c", completion=" ".join(claims), reference=_pdf(name)))
    assert verdict.status is Status.PASS, verdict.feedback
    assert len(verdict.evidence["claims"]) >= len(claims)


@pytest.mark.parametrize("name", VECTOR)
def test_every_false_claim_fails(name: str) -> None:
    right = Sample(id=name, completion=" ".join(_true_claims(name)), reference=_pdf(name))
    checker = ChartClaims()
    classes: dict[str, int] = {}
    for exploit in exploits_of(checker, right):
        verdict = checker(exploit.sample)
        assert verdict.score == 0.0, (exploit.sample.completion, verdict.evidence)
        classes[exploit.exploit_class] = classes.get(exploit.exploit_class, 0) + 1
    expected = {"wrong_value", "hedged", "wrong_peak", "reversed_trend", "wrong_change"}
    expected |= {"negated", "wrong_scale"}
    assert {f"finance/chart_{name}" for name in expected} <= set(classes)
    assert sum(classes.values()) >= 20


def test_tolerance_comes_from_the_axis_resolution() -> None:
    reference = {"chart": {k: TRUTH["grouped_bars"][k] for k in ("series", "tick_step", "axis")}}
    check = ChartClaims(tolerance_ticks=0.25)  # ticks every 20: within 5
    assert (
        check(Sample(id="a", completion="Revenue in 2021 was 155.", reference=reference)).score
        == 1.0
    )
    assert (
        check(Sample(id="b", completion="Revenue in 2021 was 157.", reference=reference)).score
        == 0.0
    )
    flat = "Operating costs rose from 2022 to 2023."  # 109.5 -> 113.0: less than the tolerance
    assert check(Sample(id="c", completion=flat, reference=reference)).score == 0.0


@pytest.mark.parametrize(
    ("text", "kinds"),
    [
        ("Revenue in 2021 was 151.", ["value"]),
        ("Revenue was 118.5 in 2019 and 132.5 in 2020.", ["value", "value"]),
        ("Revenue peaked at 162 in 2023.", ["max", "value"]),
        ("Revenue rose every year.", ["monotonic"]),
        ("Revenue grew 14% from 2020 to 2021.", ["change_pct"]),
        ("Revenue rose by 18.5 from 2020 to 2021.", ["change"]),
        # two series, one year: a move that cannot be placed is refused, never dropped
        ("Revenue and operating costs both rose in 2021.", ["unchecked"]),
        ("Sales were strong.", []),
    ],
)
def test_claims_are_parsed(text: str, kinds: list[str]) -> None:
    claims = parse_claims(
        text, ["Revenue", "Operating costs"], ["2019", "2020", "2021", "2022", "2023"]
    )
    assert [c.kind for c in claims] == kinds


@pytest.mark.parametrize(
    "completion", ["", "The chart shows revenue.", "x" * 200_000, "Revenue 2021 " * 5000]
)
def test_no_decidable_claim_fails_and_bad_input_is_bounded(completion: str) -> None:
    verdict = ChartClaims()(Sample(id="n", completion=completion, reference=_pdf("grouped_bars")))
    assert verdict.status in (Status.FAIL, Status.PARTIAL)
    assert verdict.score is not None and verdict.score < 1.0


@pytest.mark.parametrize(
    ("reference", "why"),
    [
        (None, "needs"),
        ({"pdf": "/no/such.pdf"}, "cannot open"),
        ({"chart": {"series": 3}}, "chart data"),
    ],
)
def test_bad_references_are_infrastructure_errors(reference: object, why: str) -> None:
    verdict = ChartClaims()(
        Sample(id="b", completion="Revenue in 2021 was 151.", reference=reference)
    )
    assert verdict.status is Status.ERROR and verdict.score is None and why in verdict.feedback


@pytest.mark.slow
def test_chart_generator_reproduces_the_bundled_files(tmp_path: Path) -> None:
    subprocess.run([sys.executable, str(CHARTS / "make_charts.py"), "--out", str(tmp_path)],
                   check=True, timeout=120)  # fmt: skip
    for path in CHARTS.glob("*.pdf"):
        assert (tmp_path / path.name).read_bytes() == path.read_bytes(), path.name
    assert (tmp_path / "truth.json").read_text() == (CHARTS / "truth.json").read_text()


@pytest.mark.parametrize("kind", ["encrypted", "truncated", "empty", "not_pdf", "scanned"])
def test_bad_chart_pdfs_end_in_a_named_problem(hostile: dict[str, Path], kind: str) -> None:
    sample = Sample(
        id="h", completion="Revenue in 2021 was 151.", reference={"pdf": str(hostile[kind])}
    )
    verdict = ChartClaims()(sample)
    assert verdict.status is Status.ERROR and verdict.failure is Failure.BAD_REFERENCE
    assert verdict.score is None and verdict.feedback


def test_a_chart_bomb_is_a_timeout_and_is_remembered(bomb: Path) -> None:
    check = ChartClaims(limits=ExtractionLimits(timeout_s=1.0))
    reference = {"pdf": str(bomb), "page": 1}
    sample = Sample(id="b", completion="Revenue in 2021 was 151.", reference=reference)
    first, second = check(sample), check(sample)
    assert first.status is Status.TIMEOUT and first.failure is Failure.VERIFIER_TIMEOUT
    assert second.status is Status.TIMEOUT and "remembered" in second.feedback
