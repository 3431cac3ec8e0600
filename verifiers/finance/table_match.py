"""Table match: a model's table against a reference table, cell by cell and by structure.

The model writes its table as Markdown, CSV, HTML or JSON (`tables.read_table`). The
reference is a table in any of those forms (or a list of rows), or a table of a PDF,
``{"pdf": path, "page": 2, "table": 0}``, taken from the reference extraction
(`reference.load_document`). Three scores go into the evidence (`metrics`): cell precision,
recall and F1 on (row label, column header, value) triples; GriTS-style content similarity;
TEDS-style structure similarity. `score_by` picks the one that becomes the verdict's score.

    >>> from rewardsmith.verifiers.types import Sample
    >>> gold = "Item,2023\\nRevenue,\\"1,234\\"\\nCosts,(200)"
    >>> model = "|Item|2023|\\n|-|-|\\n|Revenue|1234|\\n|Costs|-200|"
    >>> v = TableMatch()(Sample(id="t", completion=model, reference=gold))
    >>> v.status, v.evidence["cell_f1"]
    (<Status.PASS: 'pass'>, 1.0)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from rewardsmith.verifiers.finance.metrics import (
    cell_prf,
    cell_triples,
    grits_content,
    teds_structure,
)
from rewardsmith.verifiers.finance.reference import (
    ExtractedTable,
    ExtractionLimits,
    pdf_spec,
    problem_verdict,
    read_pdf_table,
)
from rewardsmith.verifiers.finance.tables import Table, TableFormatError, read_table
from rewardsmith.verifiers.protocol import Cost
from rewardsmith.verifiers.types import Failure, Sample, Verdict

__all__ = ["TableMatch"]


@dataclass(frozen=True)
class TableMatch:
    """Score a model's table against the reference table."""

    name: ClassVar[str] = "table_match"
    version: ClassVar[str] = "2"
    cost: ClassVar[Cost] = Cost.CPU
    takes_structured_reference: ClassVar[bool] = True  # JSON-text references are decoded

    score_by: Literal["cell_f1", "grits", "teds"] = "cell_f1"
    """Which measure becomes the score: cell F1, GriTS-style content or TEDS-style structure."""
    limits: ExtractionLimits = field(default_factory=ExtractionLimits)
    """Limits for reading a reference table out of a PDF."""

    def __post_init__(self) -> None:
        if self.score_by not in ("cell_f1", "grits", "teds"):
            raise ValueError(
                f"score_by must be 'cell_f1', 'grits' or 'teds', not {self.score_by!r}"
            )

    def __call__(self, sample: Sample) -> Verdict:
        gold = self._gold(sample.reference)
        if isinstance(gold, Verdict):
            return gold
        try:
            pred = read_table(sample.completion_text)
        except TableFormatError as exc:
            return Verdict.failed(self.name, self.version, Failure.FORMAT, feedback=str(exc))
        cells = cell_prf(pred, gold)
        scores = {
            "cell_f1": cells.f1,
            "grits": grits_content(pred, gold),
            "teds": teds_structure(pred, gold),
        }
        p, g = cell_triples(pred.grid()), cell_triples(gold.grid())
        evidence = {
            **scores,
            "cell_precision": cells.precision,
            "cell_recall": cells.recall,
            "missing": [list(t) for t in (g - p)][:20],
            "extra": [list(t) for t in (p - g)][:20],
        }
        feedback = _feedback(evidence)
        return Verdict.graded(
            self.name, self.version, scores[self.score_by], evidence=evidence, feedback=feedback
        )

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


def _feedback(evidence: dict[str, Any]) -> str:
    parts = []
    for label, key in (("missing or wrong", "missing"), ("not in the reference", "extra")):
        if evidence[key]:
            shown = "; ".join(f"{r} / {c}: {v}" for r, c, v in evidence[key][:3])
            parts.append(f"{len(evidence[key])} cells {label} (e.g. {shown})")
    return ". ".join(parts)
