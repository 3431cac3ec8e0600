"""Chart claims: a model's statements about a chart, graded against the chart itself.

The chart is read from the PDF (`chart_read`: each series' values on its own axis) or given
as data (``{"chart": {"series": {name: {category: value}}, "tick_step": {...}, "axis":
{...}}}``). Each sentence of the completion that names a series (or any sentence, for a
chart of one series) and a category becomes a claim:

- **value**: "Revenue in 2021 was 151" (several figures for one value are a hedge: false);
- **maximum / minimum**: "Revenue peaked in 2023", "costs were lowest in 2019";
- **trend**: "revenue rose from 2019 to 2023"; "rose every year" (each step);
- **change**: "revenue grew 13.9% from 2020 to 2021", "rose by 18.5 from 2020 to 2021",
  "margin fell 23% year over year in 2022" (from the category before).

A reader of a chart sees its values to within some fraction of the axis's tick step, so
each claim is graded with a tolerance from the axis resolution: ``tol = tolerance_ticks ×
step`` of the series' axis. A value passes within ``tol``; a direction holds only when the
change exceeds ``tol`` (a flat pair supports neither "rose" nor "fell"); a maximum holds
for a category within ``tol`` of the top; a change in percent passes when it lies in the
range the values ± ``tol`` allow. Claims compare in the chart's own units ("$151 million"
on an axis in $ millions reads 151): the scale the page declares ("($ millions)" in a title,
or ``"scale"``/``"title"`` in chart data) converts a figure written with a scale word, so
"$151 billion" on that axis is 1,000 times too large, and on a chart that declares no scale
a figure with a scale word is taken at its face value. A percentage is never rescaled.

A negated sentence ("did not peak in 2021", "never rose", "failed to fall") is graded as
the denial it is. Denying a peak, a low or a direction holds only where the chart shows
the affirmed claim false: the category lies more than ``tol`` from the top (or bottom), the
pair did not move the stated way at all. Denying a figure ("was not 151") is counted only
when the chart supports the figure (then it fails): any number but one is true of a value,
so a denial that holds says nothing the chart could pay for. Two negations in one sentence
are not decidable. Comparisons, clauses, "from ... to" order and years off the chart are
read by `chart_sentences`; signs, currencies and directions by `quantities`. A claim the
chart cannot decide (a year or a series it does not show, a percentage for an amount, a
currency other than the chart's) fails; it is never dropped. Every claim must hold: the
score is 1 when every claim holds and 0 otherwise; a completion with no claim the chart
can decide fails (``format``). A chart drawn as a
picture cannot be read: that is an error of the reference (score None), never a guess.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from rewardsmith.verifiers.exploits import Exploit
from rewardsmith.verifiers.finance.chart_parse import Claim, parse_claims
from rewardsmith.verifiers.finance.doc_cache import (
    FailureRecord,
    RequestKey,
    ResultCache,
    sha256_of,
)
from rewardsmith.verifiers.finance.figures import (
    SCALE_WORDS,
    scale_from_header,
)
from rewardsmith.verifiers.finance.pdf import pdf_problem
from rewardsmith.verifiers.finance.quantities import currency_of
from rewardsmith.verifiers.finance.reference import ExtractionLimits
from rewardsmith.verifiers.killable import call_with_limits
from rewardsmith.verifiers.protocol import Cost
from rewardsmith.verifiers.types import Failure, Sample, Verdict

__all__ = ["ChartClaims", "Claim", "parse_claims"]

_FIGURE_KINDS = ("value", "change")
"""Claims of an amount, which the chart's scale converts; a denied one pays nothing."""


@dataclass(frozen=True)
class _Chart:
    categories: list[str]
    values: dict[str, dict[str, float]]
    tolerance: dict[str, float]
    """Per series: tolerance_ticks × its axis's tick step."""
    scale: float = 1.0
    """The scale the chart declares for its amounts ("$ millions": 1e6); 1 when none."""
    currency: str = ""
    """The currency the chart declares ("$ millions": "$"); "" when none."""


def grade(claim: Claim, chart: _Chart) -> tuple[bool, dict[str, Any]]:
    """Whether the claim holds on the chart, and what it was compared with. A denied figure
    that the chart does not support is ``detail["vacuous"]``: it is not counted."""
    if claim.kind == "unchecked":
        return False, {"chart": {}, "why": claim.other}
    values = chart.values[claim.series]
    tol = chart.tolerance[claim.series]
    shown = {c: values.get(c) for c in claim.categories}
    detail: dict[str, Any] = {"chart": shown, "tolerance": tol}
    if claim.kind == "compare":  # a true denial of a comparison pays nothing
        gap = claim.negated or claim.by is None or _gap_holds(claim, chart, detail)
        holds = _compare(claim, chart) and gap and not claim.hedged
        detail["vacuous"] = claim.negated and holds
        return holds, detail
    wrong = _wrong_unit(claim, chart)
    if wrong and claim.kind in (*_FIGURE_KINDS, "change_pct"):
        detail["why"] = wrong
        detail["vacuous"] = claim.negated
        return False, detail
    if any(v is None for v in shown.values()):
        detail["vacuous"] = claim.negated and claim.kind in _FIGURE_KINDS
        return False, detail
    if claim.hedged:
        # A hedged denial is vacuous only where the chart does not show what it denies
        # ("maybe not 886"); one of a figure the chart shows is false, never dropped.
        figure = claim.kind in _FIGURE_KINDS
        detail["vacuous"] = claim.negated and figure and not _figure_holds(claim, chart, detail)
        return False, detail
    if claim.kind in _FIGURE_KINDS:
        holds = _figure_holds(claim, chart, detail)
        detail["vacuous"] = claim.negated and not holds
        return holds and not claim.negated, detail
    if claim.kind in ("max", "min"):
        extreme = max(values.values()) if claim.kind == "max" else min(values.values())
        v = values[claim.categories[0]]
        if claim.negated:  # clearly not the top (bottom): a true denial pays nothing
            holds = (v < extreme - tol) if claim.kind == "max" else (v > extreme + tol)
            detail["vacuous"] = holds
            return holds, detail
        return (v >= extreme - tol) if claim.kind == "max" else (v <= extreme + tol), detail
    if claim.kind == "monotonic":
        path = [values[c] for c in claim.categories if c in values]
        steps = [(b - a) * (claim.stated or 0) for a, b in itertools.pairwise(path)]
        if claim.negated:  # some step did not move the stated way: a true denial pays nothing
            detail["vacuous"] = bool(steps) and any(s <= 0 for s in steps)
            return detail["vacuous"], detail
        return bool(steps) and all(s > 0 for s in steps), detail  # each step the stated way
    a, b = (values[c] for c in claim.categories)
    if claim.kind == "trend":
        moved = (b - a) * (claim.stated or 0)
        if claim.negated:
            detail["vacuous"] = moved <= 0
            return moved <= 0, detail
        return moved > tol, detail
    if claim.kind == "flat":
        return abs(b - a) <= tol and not claim.negated, detail
    if claim.kind == "multiple":
        low, high = sorted(((b - tol) / (a + tol), (b + tol) / (a - tol))) if a > tol else (0, 0)
        return low <= (claim.stated or 0) <= high and not claim.negated, detail
    low, high = _pct_range(a, b, tol)
    detail["range_pct"] = [low, high]
    stated = claim.stated or 0.0
    holds = low - 0.05 <= stated <= high + 0.05
    detail["vacuous"] = claim.negated and not holds
    return holds and not claim.negated, detail


def _figure_holds(claim: Claim, chart: _Chart, detail: dict[str, Any]) -> bool:
    """Whether a value or change claim's figure is the chart's, within its tolerance."""
    values, tol = chart.values[claim.series], chart.tolerance[claim.series]
    stated = _in_chart_units(claim, chart)
    detail["stated_in_chart_units"] = stated
    if claim.kind == "value":
        return abs(values[claim.categories[0]] - stated) <= tol
    a, b = (values[c] for c in claim.categories)
    return abs((b - a) - stated) <= 2 * tol


def _compare(claim: Claim, chart: _Chart) -> bool:
    """Does the first term exceed (stated +1) or fall short of (-1) the second by more
    than the reading tolerance? A negated comparison holds where the stated one fails."""
    other = claim.other or claim.series
    a = chart.values[claim.series].get(claim.categories[0])
    b = chart.values[other].get(claim.categories[1])
    if a is None or b is None:
        return False
    tol = max(chart.tolerance[claim.series], chart.tolerance[other])
    moved = (a - b) * (claim.stated or 0.0)
    return (moved <= 0) if claim.negated else (moved > tol)


def _gap_holds(claim: Claim, chart: _Chart, detail: dict[str, Any]) -> bool:
    """The gap a comparison states, within the tolerance of a change (two readings, 2 ×
    tol) for an amount ("by 47"), or within the range the readings allow for a percentage
    ("45% higher than": (a - b) / |b|)."""
    other = claim.other or claim.series
    a = chart.values[claim.series].get(claim.categories[0])
    b = chart.values[other].get(claim.categories[1])
    if a is None or b is None:
        return False
    gap = (claim.stated or 0.0) * (claim.by or 0.0)  # "lower by 47" states a - b = -47
    if claim.unit == "%" and "%" not in claim.series:  # a relative gap
        tol = max(chart.tolerance[claim.series], chart.tolerance[other])
        low, high = _pct_range(b, a, tol)
        detail["gap_range_pct"] = [low, high]
        return low - 0.05 <= gap <= high + 0.05
    if _wrong_unit(claim, chart):
        return False
    stated = _in_chart_units(replace(claim, stated=gap), chart)
    detail["gap_in_chart_units"] = stated
    tol = chart.tolerance[claim.series] + chart.tolerance[other]
    return abs((a - b) - stated) <= tol


def _wrong_unit(claim: Claim, chart: _Chart) -> str:
    """Why a figure's unit contradicts the series: a percentage on an amount axis, a
    scale word on a percentage axis, a currency other than the chart's."""
    percent_axis = "%" in claim.series
    if claim.kind == "change_pct":
        return ""
    if claim.unit == "%" and not percent_axis:
        return "a percentage given for an amount"
    if percent_axis and (claim.scale != 1.0 or claim.currency):
        return "an amount given for a percentage"
    if claim.currency and chart.currency and claim.currency != chart.currency:
        return f"{claim.currency} given on a chart in {chart.currency}"
    return ""


def _in_chart_units(claim: Claim, chart: _Chart) -> float:
    """The amount claimed, in the units the chart's axis counts: "$0.15 billion" on an axis
    in $ millions reads 150; a figure without a scale word is read in the chart's units."""
    stated = claim.stated or 0.0
    if claim.scale == 1.0 or "%" in claim.series:
        return stated
    return stated * claim.scale / chart.scale


def _pct_range(a: float, b: float, tol: float) -> tuple[float, float]:
    if abs(a) <= tol:
        return float("-inf"), float("inf")  # from about zero any percentage is possible
    options = [(bb - aa) / abs(aa) * 100 for aa in (a - tol, a + tol) for bb in (b - tol, b + tol)]
    return min(options), max(options)


@dataclass(frozen=True)
class ChartClaims:
    """Pass when every claim the model makes about a chart is one the chart supports."""

    name: ClassVar[str] = "chart_claims"
    version: ClassVar[str] = "3"
    cost: ClassVar[Cost] = Cost.CPU

    tolerance_ticks: float = 0.25
    """Tolerance as a fraction of the series' axis tick step (the axis resolution)."""
    limits: ExtractionLimits = field(default_factory=ExtractionLimits)
    """Limits for reading the chart out of a PDF."""

    def __post_init__(self) -> None:
        if not 0 < self.tolerance_ticks <= 1:
            raise ValueError("tolerance_ticks must be in (0, 1]: a fraction of one tick step")

    def __call__(self, sample: Sample) -> Verdict:
        chart = self._chart(sample.reference)
        if isinstance(chart, Verdict):
            return chart
        claims = parse_claims(sample.completion_text, list(chart.values), chart.categories)
        if not claims:
            return Verdict.failed(
                self.name, self.version, Failure.FORMAT,
                feedback="no claim names a series and a category of the chart",
            )  # fmt: skip
        graded = [(c, ok, d) for c in claims for ok, d in [grade(c, chart)] if not d.get("vacuous")]
        if not graded:
            return Verdict.failed(
                self.name, self.version, Failure.FORMAT,
                feedback="every claim denies a figure the chart does not show: none decidable",
            )  # fmt: skip
        claims = [c for c, _, _ in graded]
        failed = [(c, d) for c, ok, d in graded if not ok]
        evidence = {
            "claims": [_record(c, ok, d) for c, ok, d in graded][:50],
            "series": list(chart.values),
        }
        feedback = "; ".join(f"{c.text.strip()[:80]} (chart: {d['chart']})" for c, d in failed[:3])
        # Every claim must hold: the score is the worst claim's (a true sentence repeated
        # does not dilute a false one).
        return Verdict.graded(
            self.name, self.version, 0.0 if failed else 1.0, evidence=evidence,
            feedback=f"not supported by the chart: {feedback}" if failed else "",
        )  # fmt: skip

    def exploits(self, sample: Sample) -> Iterator[Exploit]:
        """False claims made from the right ones (`finance.exploits.chart_exploits`)."""
        from rewardsmith.verifiers.finance.claim_exploits import chart_word_exploits
        from rewardsmith.verifiers.finance.prose_exploits import chart_exploits

        chart = self._chart(sample.reference)
        if isinstance(chart, _Chart):
            yield from chart_exploits(
                sample, chart.values, chart.categories, chart.tolerance, chart.scale
            )
            yield from chart_word_exploits(sample, chart.values, chart.tolerance)

    def _chart(self, reference: Any) -> _Chart | Verdict:
        if isinstance(reference, dict) and isinstance(reference.get("chart"), dict):
            return self._from_truth(reference["chart"])
        if isinstance(reference, dict) and isinstance(reference.get("pdf"), str):
            page = reference.get("page", 1)
            if not isinstance(page, int) or isinstance(page, bool):
                return self._bad("`page` must be an integer")
            read = load_chart(reference["pdf"], page, self.limits)
            if "problem" in read:
                failure = Failure(read.get("failure", Failure.BAD_REFERENCE.value))
                if failure is Failure.VERIFIER_TIMEOUT:
                    return Verdict.timed_out(self.name, self.version, failure, read["problem"])
                return Verdict.errored(self.name, self.version, failure, read["problem"])
            return self._from_read(read)
        return self._bad(
            'chart_claims needs `reference`: {"pdf": path, "page": n} or {"chart": ...}'
        )

    def _bad(self, message: str) -> Verdict:
        return Verdict.errored(self.name, self.version, Failure.BAD_REFERENCE, message)

    def _from_truth(self, truth: dict[str, Any]) -> _Chart | Verdict:
        try:
            values = {s: {c: float(v) for c, v in vs.items()} for s, vs in truth["series"].items()}
            steps, axis = truth["tick_step"], truth.get("axis", {})
            tolerance = {
                s: self.tolerance_ticks * float(steps[axis.get(s, "left")]) for s in values
            }
            categories = list(dict.fromkeys(c for vs in values.values() for c in vs))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            return self._bad(f"chart data needs series, tick_step and axis: {exc}")
        title = str(truth.get("title", ""))
        return _Chart(categories, values, tolerance, _declared_scale(truth), currency_of(title))

    def _from_read(self, read: dict[str, Any]) -> _Chart:
        values = {s: dict(info["values"]) for s, info in read["series"].items()}
        steps = {side: a["step"] for side, a in read["axes"].items()}
        tolerance = {s: self.tolerance_ticks * steps[read["series"][s]["axis"]] for s in values}
        return _Chart(
            list(read["categories"]), values, tolerance, float(read.get("scale", 1.0)),
            str(read.get("currency", "")),
        )  # fmt: skip


def _declared_scale(truth: dict[str, Any]) -> float:
    scale = truth.get("scale")
    if isinstance(scale, str):
        return SCALE_WORDS.get(scale.lower(), 1.0)
    if isinstance(scale, (int, float)) and not isinstance(scale, bool) and scale > 0:
        return float(scale)
    return scale_from_header(str(truth.get("title", "")))


def _record(claim: Claim, ok: bool, detail: dict[str, Any]) -> dict[str, Any]:
    return {
        "kind": claim.kind, "series": claim.series, "categories": list(claim.categories),
        "stated": claim.stated, "hedged": claim.hedged, "negated": claim.negated, "ok": ok,
        "text": claim.text.strip()[:200], **detail,
    }  # fmt: skip


_charts = ResultCache()


def load_chart(path: str, page: int, limits: ExtractionLimits) -> dict[str, Any]:
    """The chart on `page` of `path` as `chart_read.read_charts` gives it, or ``{"problem":
    ..., "failure": ...}``; read in a killable worker, cached by content (failures too)."""
    from rewardsmith.verifiers.finance import reference
    from rewardsmith.verifiers.finance.chart_read import read_chart_pdf

    problem = pdf_problem(path, limits.max_bytes)
    if problem:
        return {"problem": problem, "failure": Failure.BAD_REFERENCE.value}
    key = RequestKey(sha256_of(path), (page,), ("chart",), 1, limits.max_pages,
                     limits.timeout_s, limits.memory_bytes)  # fmt: skip
    hit = _charts.get(key)
    if hit is not None:
        return hit
    failed = reference._failures.find(key, limits.remember_failures_s)
    if failed is not None:
        return {"problem": f"{failed.problem} (remembered)", "failure": failed.failure}
    outcome = call_with_limits(
        read_chart_pdf, path, page, timeout_s=limits.timeout_s,
        memory_bytes=limits.memory_bytes, preload=("playa",),
    )  # fmt: skip
    if outcome.timed_out or outcome.died:
        failure = Failure.VERIFIER_TIMEOUT if outcome.timed_out else Failure.WORKER_DIED
        problem = f"reading the chart {'timed out' if outcome.timed_out else 'killed its worker'}"
        reference._failures.add(key, FailureRecord(failure.value, problem, _now()))
        return {"problem": problem, "failure": failure.value}
    if outcome.error is not None:
        result = {"problem": f"unreadable PDF: {outcome.error}"[:500], "failure": "bad_reference"}
    else:
        result = outcome.value
        if "problem" in result:
            result = {**result, "failure": Failure.BAD_REFERENCE.value}
    _charts.put(key, result)
    return result


def _now() -> float:
    import time

    return time.time()
