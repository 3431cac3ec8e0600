"""Grounding: every figure the model cites must appear in the source PDF.

The completion is prose. Each sentence's figures are taken with `figures.find_figures`; a
page citation in the same sentence ("(p. 3)", "[page 3]", "page 3") says where to look,
otherwise every page is searched. A model figure is grounded by a PDF figure on that page
when the digits match, or the quantity matches once the page's declared scale ("in
thousands") is applied, or the model rounded: ``round(pdf / model_scale, model_decimals)``
equals the model's value (only for figures written with two or more significant digits, so
"1 billion" cannot be grounded by anything between 0.5 and 1.5 billion).

Figures below `ignore_below` written without unit, scale or decimals ("3 segments") are
not checked. Invented figures are named in the evidence; the score is the share grounded.
A figure cited on a page with no text layer (a scan) cannot be checked: it is listed under
``unchecked_scanned`` and left out of the score; if nothing is left, the verdict is an
infrastructure error (the reference is unusable), never a 0 or a 1.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import ClassVar

from rewardsmith.verifiers.finance.figures import Figure, find_figures, scale_from_header
from rewardsmith.verifiers.finance.reference import ExtractionLimits, load_document, problem_verdict
from rewardsmith.verifiers.protocol import Cost
from rewardsmith.verifiers.types import Failure, Sample, Verdict

__all__ = ["Grounding", "cited_figures"]

MAX_COMPLETION_CHARS = 100_000
MAX_FIGURES = 500
_CITATION = re.compile(r"[(\[]?\b(?:p\.|pp\.|pg\.|page)\s*(\d{1,5})\b[)\]]?", re.IGNORECASE)
_SENTENCE = re.compile(r"(?<=[.;!?])\s+(?=[A-Z(])|\n+")


def cited_figures(text: str) -> list[tuple[Figure, int | None]]:
    """(figure, cited page or None) for every figure in the text, citations excluded."""
    out: list[tuple[Figure, int | None]] = []
    for sentence in _SENTENCE.split(text):
        pages = [int(m) for m in _CITATION.findall(sentence)]
        bare = _CITATION.sub(" ", sentence)
        for figure in find_figures(bare):
            out.append((figure, pages[0] if pages else None))
    return out[:MAX_FIGURES]


def _significant(figure: Figure) -> int:
    digits = re.sub(r"\D", "", figure.text.split("e")[0])
    return len(digits.lstrip("0"))


def _grounded_by(figure: Figure, pdf: Figure, page_scale: float) -> bool:
    if figure.unit in ("%", "bp") and pdf.unit not in ("%", "bp", ""):
        return False
    if math.isclose(figure.value, pdf.value, rel_tol=1e-9, abs_tol=1e-12):
        return True
    for scale in {pdf.scale, pdf.scale * page_scale}:
        quantity = pdf.value * scale
        if math.isclose(figure.absolute, quantity, rel_tol=1e-9):
            return True
        if _significant(figure) >= 2 and figure.scale:
            rounded = round(quantity / figure.scale, figure.decimals)
            if math.isclose(rounded, figure.value, rel_tol=1e-9, abs_tol=1e-12):
                return True
    return False


@dataclass(frozen=True)
class Grounding:
    """Score the share of cited figures found in the PDF (on the cited page if given)."""

    name: ClassVar[str] = "grounding"
    version: ClassVar[str] = "2"
    cost: ClassVar[Cost] = Cost.CPU
    takes_structured_reference: ClassVar[bool] = True  # JSON-text references are decoded

    ignore_below: float = 10.0
    """Bare integers below this (counts, list numbers) are not checked."""
    limits: ExtractionLimits = field(default_factory=ExtractionLimits)
    """Limits for reading the PDF."""

    def __call__(self, sample: Sample) -> Verdict:
        reference = sample.reference
        path = reference.get("pdf") if isinstance(reference, dict) else reference
        if not isinstance(path, str) or not path:
            return Verdict.errored(
                self.name,
                self.version,
                Failure.BAD_REFERENCE,
                'grounding needs `reference`: {"pdf": path} or a path',
            )
        text = sample.completion_text
        if len(text) > MAX_COMPLETION_CHARS:
            return Verdict.failed(
                self.name,
                self.version,
                Failure.INPUT_TOO_LARGE,
                feedback=f"completion longer than {MAX_COMPLETION_CHARS} characters",
            )
        cited = [(f, p) for f, p in cited_figures(text) if self._checked(f)]
        if not cited:
            return Verdict.skipped(self.name, self.version, "the completion cites no figures")
        pages = None if any(p is None for _, p in cited) else sorted({p for _, p in cited if p})
        result = load_document(path, pages, tables=False, limits=self.limits)
        if result.document is None and pages and "does not exist" in result.problem:
            return self._grade(cited, {})  # every cited page is past the end: invented
        if result.document is None:
            return problem_verdict(self.name, self.version, result)
        document = result.document
        scanned = set(document.pages_without_text)
        # A figure cited on a page with no text layer cannot be checked either way.
        checkable = [(f, p) for f, p in cited if p not in scanned]
        if not checkable or len(scanned) == len(document.text):
            return Verdict.errored(
                self.name,
                self.version,
                Failure.BAD_REFERENCE,
                "the cited pages have no text layer (a scan?): nothing to ground against",
                evidence={"pages_without_text": sorted(scanned)},
            )
        verdict = self._grade(checkable, document.text)
        if len(checkable) < len(cited):
            unchecked = [{"figure": f.text, "page": p} for f, p in cited if p in scanned]
            evidence = {**verdict.evidence, "unchecked_scanned": unchecked[:50]}
            verdict = Verdict(
                verdict.name,
                verdict.version,
                verdict.status,
                verdict.score,
                verdict.failure,
                evidence,
                verdict.feedback,
            )
        return verdict

    def _checked(self, figure: Figure) -> bool:
        plain = figure.unit == "" and figure.scale == 1.0 and figure.decimals == 0
        return not (plain and abs(figure.value) < self.ignore_below)

    def _grade(self, cited: list[tuple[Figure, int | None]], text: dict[int, str]) -> Verdict:
        on_page = {n: (find_figures(t), scale_from_header(t)) for n, t in text.items()}
        invented = []
        for figure, page in cited:
            if page is not None and page not in on_page:
                invented.append({"figure": figure.text, "page": page, "why": "no such page"})
                continue
            where = [page] if page is not None else list(on_page)
            if not any(
                _grounded_by(figure, f, on_page[n][1]) for n in where for f in on_page[n][0]
            ):
                invented.append({"figure": figure.text, "page": page, "why": "not found"})
        evidence = {"figures": len(cited), "invented": invented[:50]}
        feedback = ", ".join(
            f"{i['figure']} ({'p. ' + str(i['page']) if i['page'] else 'anywhere'}: {i['why']})"
            for i in invented[:5]
        )
        score = 1 - len(invented) / len(cited)
        return Verdict.graded(
            self.name,
            self.version,
            score,
            evidence=evidence,
            feedback=f"figures not in the PDF: {feedback}" if invented else "",
        )
