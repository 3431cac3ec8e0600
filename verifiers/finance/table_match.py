"""Table match: a model's table against a reference table, cell by cell and by structure.

The model writes its table as Markdown, CSV, HTML or JSON (`tables.read_table`). The
reference is a table in any of those forms (or a list of rows), or a table of a PDF,
``{"pdf": path, "page": 2, "table": 0}``, taken from the reference extraction
(`reference.load_document`). Both tables' header rows are found the same way
(`headers.detect_header`: title and units rows, multi-level and spanning headers, stub
columns), and the rows chosen are in the evidence.

Measures (`score_by` picks the score; `report` adds others to the evidence):

- ``cell_f1`` (default): precision, recall and F1 on (row label, column key, value);
- ``grid``: the figure-aware grid similarity (`metrics.grid_similarity`);
- ``grits_con``, ``grits_top``: GriTS as Smock et al. 2023 define it (`grits`);
- ``teds``, ``teds_struct``: TEDS as Zhong et al. 2020 define it (`teds`); a tree past
  `teds.MAX_NODES` nodes is scored by the row-aligned lower bound of TEDS-Struct instead,
  and the evidence says so (``teds_exact: false``).

GriTS_Con and TEDS give partial credit to a near-miss string, so a figure off by one digit
earns most of a cell there; ``cell_f1`` and ``grid`` give it nothing.

    >>> from rewardsmith.verifiers.types import Sample
    >>> gold = "Item,2023\\nRevenue,\\"1,234\\"\\nCosts,(200)"
    >>> model = "|Item|2023|\\n|-|-|\\n|Revenue|1234|\\n|Costs|-200|"
    >>> v = TableMatch()(Sample(id="t", completion=model, reference=gold))
    >>> v.status, v.evidence["cell_f1"]
    (<Status.PASS: 'pass'>, 1.0)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

from rewardsmith.verifiers.exploits import Exploit
from rewardsmith.verifiers.finance.exploits import table_exploits
from rewardsmith.verifiers.finance.grits import grits_con, grits_top
from rewardsmith.verifiers.finance.headers import detect_header
from rewardsmith.verifiers.finance.metrics import cell_prf, grid_similarity, triples_of
from rewardsmith.verifiers.finance.quantities import scale_of_word, stated_scale
from rewardsmith.verifiers.finance.reference import (
    ExtractedTable,
    ExtractionLimits,
    load_document,
    pdf_spec,
    problem_verdict,
    read_pdf_table,
)
from rewardsmith.verifiers.finance.tables import Table, TableFormatError, read_table
from rewardsmith.verifiers.finance.teds import TreeTooLarge, row_aligned, teds, teds_struct
from rewardsmith.verifiers.protocol import Cost
from rewardsmith.verifiers.types import Failure, Sample, Verdict

__all__ = ["MEASURES", "TableMatch"]

MEASURES = ("cell_f1", "grid", "grits_con", "grits_top", "teds", "teds_struct")
_RENAMED = {
    "grits": "'grits' was renamed: 'grits_con' (GriTS, Smock et al.) or 'grid' (figure-aware)"
}


@dataclass(frozen=True)
class TableMatch:
    """Score a model's table against the reference table."""

    name: ClassVar[str] = "table_match"
    version: ClassVar[str] = "4"
    cost: ClassVar[Cost] = Cost.CPU
    takes_structured_reference: ClassVar[bool] = True  # JSON-text references are decoded

    score_by: str = "cell_f1"
    """Which measure becomes the score (`MEASURES`)."""
    report: tuple[str, ...] = ("cell_f1", "grid")
    """Measures computed into the evidence (TEDS costs up to a second on a large table)."""
    limits: ExtractionLimits = field(default_factory=ExtractionLimits)
    """Limits for reading a reference table out of a PDF."""

    def __post_init__(self) -> None:
        for measure in (self.score_by, *self.report):
            if measure not in MEASURES:
                hint = _RENAMED.get(measure) or f"choose from {', '.join(MEASURES)}"
                raise ValueError(f"unknown table measure {measure!r}: {hint}")

    def __call__(self, sample: Sample) -> Verdict:
        gold = self._gold(sample.reference)
        if isinstance(gold, Verdict):
            return gold
        try:
            pred = read_table(sample.completion_text)
        except TableFormatError as exc:
            return Verdict.failed(self.name, self.version, Failure.FORMAT, feedback=str(exc))
        scales = self._gold_scale(sample.reference), _prose_scale(sample.completion_text)
        evidence = self._measure(pred, gold, *scales)
        return Verdict.graded(
            self.name,
            self.version,
            evidence[self.score_by],
            evidence=evidence,
            feedback=_feedback(evidence),
        )

    def exploits(self, sample: Sample) -> Iterator[Exploit]:
        """Gamed variants of a right table (`finance.exploits.table_exploits`); their
        bounds hold for ``score_by="cell_f1"``, so other measures get none."""
        if self.score_by == "cell_f1":
            yield from table_exploits(sample)
            if self._gold_scale(sample.reference) is not None:  # a scale to contradict
                from rewardsmith.verifiers.finance.claim_exploits import scale_phrase_exploits

                yield from scale_phrase_exploits(sample)

    def _gold_scale(self, reference: Any) -> float | None:
        """The scale the reference states outside its grid: ``"scale"`` beside an inline
        table, or the caption of the PDF page ("(in thousands of dollars)")."""
        if isinstance(reference, dict) and isinstance(reference.get("scale"), str):
            scale = scale_of_word(reference["scale"])
            return scale if scale != 1.0 else None
        spec = pdf_spec(reference)
        if spec is None:
            return None
        found = load_document(spec[0], [spec[1]], tables=False, limits=self.limits)
        text = found.document.text.get(spec[1], "") if found.document else ""
        scale = stated_scale(text)
        return scale if scale != 1.0 else None

    def _measure(
        self, pred: Table, gold: Table, gold_scale: float | None, pred_scale: float | None
    ) -> dict[str, Any]:
        pred_grid, gold_grid = pred.grid(), gold.grid()
        heads = detect_header(pred_grid), detect_header(gold_grid)
        head = tuple(h.body_start for h in heads)
        evidence: dict[str, Any] = {
            "header": {"model": heads[0].evidence(), "reference": heads[1].evidence()}
        }
        for measure in dict.fromkeys((self.score_by, *self.report)):
            evidence.update(_MEASURE[measure](pred, gold, head))
        if "cell_f1" in evidence:  # read in the scale each table states
            evidence.update(_cells(pred, gold, head, gold_scale, pred_scale))
        p, g = triples_of(pred_grid, gold_grid, gold_scale, pred_scale)
        evidence["missing"] = [list(t) for t in (g - p)][:20]
        evidence["extra"] = [list(t) for t in (p - g)][:20]
        return evidence

    def _gold(self, reference: Any) -> Table | Verdict:
        spec = pdf_spec(reference)
        if spec is not None:
            path, page, index = spec
            found = read_pdf_table(path, page, index, self.limits)
            if not isinstance(found, ExtractedTable):
                return problem_verdict(self.name, self.version, found)
            return found.table
        if isinstance(reference, dict) and "table" in reference:
            reference = reference["table"]
        try:
            if isinstance(reference, list):
                return Table.from_grid(reference)
            if isinstance(reference, str):
                return read_table(reference)
        except (TableFormatError, TypeError) as exc:
            return Verdict.errored(self.name, self.version, Failure.BAD_REFERENCE, str(exc))
        return Verdict.errored(
            self.name,
            self.version,
            Failure.BAD_REFERENCE,
            "table_match needs `reference`: a table (text or rows) or "
            '{"pdf": path, "page": n, "table": i}',
        )


Head = tuple[int, int]


def _prose_scale(completion: str) -> float | None:
    """The scale the completion's prose declares for its table ("All figures in millions."):
    read from the lines that are no table rows (no "|", no HTML)."""
    prose = "\n".join(
        line for line in completion.splitlines() if "|" not in line and "<" not in line
    )
    scale = stated_scale(prose) if prose.strip() else 1.0
    return scale if scale != 1.0 else None


def _cells(
    pred: Table,
    gold: Table,
    _: Head,
    gold_scale: float | None = None,
    pred_scale: float | None = None,
) -> dict[str, Any]:
    result = cell_prf(pred, gold, gold_scale, pred_scale)
    return {"cell_f1": result.f1, "cell_precision": result.precision, "cell_recall": result.recall}


def _grid(pred: Table, gold: Table, _: Head) -> dict[str, Any]:
    result = grid_similarity(pred, gold)
    return {"grid": result.f1, "grid_precision": result.precision, "grid_recall": result.recall}


def _grits(name: str, measure: Callable[[Table, Table], Any]) -> Callable[..., dict[str, Any]]:
    def run(pred: Table, gold: Table, _: Head) -> dict[str, Any]:
        result = measure(pred, gold)
        return {
            name: result.f1,
            f"{name}_precision": result.precision,
            f"{name}_recall": result.recall,
        }

    return run


def _teds(name: str, measure: Callable[..., float], content: bool) -> Callable[..., dict]:
    def run(pred: Table, gold: Table, head: Head) -> dict[str, Any]:
        try:
            return {name: measure(pred, gold, head), f"{name}_exact": True}
        except TreeTooLarge:  # a lower bound never pays more than the exact score would
            return {name: row_aligned(pred, gold, content), f"{name}_exact": False}

    return run


_MEASURE = {
    "cell_f1": _cells,
    "grid": _grid,
    "grits_con": _grits("grits_con", grits_con),
    "grits_top": _grits("grits_top", grits_top),
    "teds": _teds("teds", teds, content=True),
    "teds_struct": _teds("teds_struct", teds_struct, content=False),
}


def _feedback(evidence: dict[str, Any]) -> str:
    parts = []
    for label, key in (("missing or wrong", "missing"), ("not in the reference", "extra")):
        if evidence[key]:
            shown = "; ".join(f"{r} / {c}: {v}" for r, c, v in evidence[key][:3])
            parts.append(f"{len(evidence[key])} cells {label} (e.g. {shown})")
    return ". ".join(parts)
