"""Table extraction on ICDAR 2013 (EU set): our reference extraction against each single
camelot flavor and pdfplumber's default, side by side in one run.

Measure: the competition's cell adjacency relations (Göbel et al. 2013), precision, recall
and F1 over all documents (micro: relations summed over documents), plus the mean of the
per-document F1 (macro). Speed: wall time over the same pages and pages per second. Only
the pages that hold ground-truth tables are read, by every method alike.

    .venv/bin/python benchmarks/tables.py                 # all 27 documents with a PDF
    .venv/bin/python benchmarks/tables.py --limit 5       # a quick look

Every method runs in this process on the same inputs, document by document (each method
on a document in turn, so drifting load on a shared machine hits all alike); ours is
`extract_pdf` (which also extracts every word and the page text, as the verifiers need)
followed by `choose_tables` and `merge_continued`, exactly as `load_document` does,
without the worker process or the cache.
"""

from __future__ import annotations

import argparse
import logging
import time
import warnings
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path

import camelot
import pdfplumber

from rewardsmith.verifiers.finance.icdar import load_structure, relations_of
from rewardsmith.verifiers.finance.metrics import PRF, prf, table_relations
from rewardsmith.verifiers.finance.pdf import extract_pdf
from rewardsmith.verifiers.finance.reference import (
    DEFAULT_SOURCES,
    choose_tables,
    merge_continued,
)
from rewardsmith.verifiers.finance.tables import Table

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "pdf" / "icdar2013-eu"
Relations = Counter[tuple]
Method = Callable[[str, list[int]], Relations]


def camelot_flavor(flavor: str) -> Method:
    def run(pdf: str, pages: list[int]) -> Relations:
        found = camelot.read_pdf(pdf, flavor=flavor, pages=",".join(map(str, pages)))
        return _sum(Table.from_grid(t.df.values.tolist()) for t in found)

    return run


def plumber_default(pdf: str, pages: list[int]) -> Relations:
    with pdfplumber.open(pdf) as doc:
        grids = [g for p in pages for g in doc.pages[p - 1].extract_tables()]
    return _sum(Table.from_grid(g) for g in grids)


def ours(pdf: str, pages: list[int]) -> Relations:
    raw = extract_pdf(pdf, tuple(pages), DEFAULT_SOURCES)
    chosen = []
    for number, page in raw["pages"].items():
        chosen += choose_tables(page["tables"], int(number), min_support=2)
    return _sum(t.table for t in merge_continued(chosen))


def _sum(tables: Iterable[Table]) -> Relations:
    total: Relations = Counter()
    for table in tables:
        total += table_relations(table)
    return total


def documents(limit: int | None) -> list[tuple[str, list[int], Relations]]:
    docs = []
    for xml in sorted(DATA.glob("*-str.xml")):
        pdf = xml.with_name(xml.name.replace("-str.xml", ".pdf"))
        if not pdf.exists():  # eu-009b's ground truth has no PDF of its own
            continue
        regions = load_structure(xml)
        docs.append((str(pdf), sorted({r.page for r in regions}), relations_of(regions)))
    return docs[:limit]


class Tally:
    """Relations matched, predicted and expected, per-document F1s and seconds of one method."""

    def __init__(self) -> None:
        self.matched = self.predicted = self.gold = 0
        self.per_doc: list[float] = []
        self.seconds = 0.0

    def add(self, found: Relations, truth: Relations, seconds: float) -> None:
        m, p, g = sum((found & truth).values()), sum(found.values()), sum(truth.values())
        self.matched, self.predicted, self.gold = (
            self.matched + m,
            self.predicted + p,
            self.gold + g,
        )
        self.per_doc.append(prf(m, p, g).f1)
        self.seconds += seconds

    @property
    def score(self) -> PRF:
        return prf(self.matched, self.predicted, self.gold)


def run_all(
    methods: dict[str, Method], docs: list[tuple[str, list[int], Relations]]
) -> dict[str, Tally]:
    """Every method on each document in turn, so a machine whose load drifts (ours is shared)
    slows all methods alike."""
    tallies = {name: Tally() for name in methods}
    for pdf, pages, truth in docs:
        for name, method in methods.items():
            start = time.perf_counter()
            try:
                found = method(pdf, pages)
            except Exception as exc:  # a method that crashes on a document scores 0 on it
                print(f"  {name} on {pdf}: {type(exc).__name__}: {exc}")
                found = Counter()
            tallies[name].add(found, truth, time.perf_counter() - start)
        print(f"  done {Path(pdf).name}", flush=True)
    return tallies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None, help="only the first N documents")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    logging.getLogger("pdfminer").setLevel(logging.ERROR)
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    docs = documents(args.limit)
    n_pages = sum(len(p) for _, p, _ in docs)
    methods: dict[str, Method] = {f"camelot {f}": camelot_flavor(f) for f in camelot_flavors()}
    methods["pdfplumber default"] = plumber_default
    methods["ours (" + "+".join(DEFAULT_SOURCES) + ", agreement)"] = ours
    print(f"{len(docs)} documents, {n_pages} pages")
    tallies = run_all(methods, docs)
    print("\n| method | precision | recall | F1 (micro) | F1 (macro) | seconds | pages/s |")
    print("|---|---|---|---|---|---|---|")
    for name, t in tallies.items():
        s, macro = t.score, sum(t.per_doc) / len(t.per_doc)
        print(
            f"| {name} | {s.precision:.3f} | {s.recall:.3f} | {s.f1:.3f} | {macro:.3f} | "
            f"{t.seconds:.1f} | {n_pages / t.seconds:.2f} |"
        )
    _ratios({name: (t.score, t.seconds) for name, t in tallies.items()})


def camelot_flavors() -> tuple[str, ...]:
    return ("lattice", "stream", "network", "hybrid")


def _ratios(results: dict[str, tuple[PRF, float]]) -> None:
    name_ours = next(n for n in results if n.startswith("ours"))
    singles = {n: r for n, r in results.items() if n.startswith("camelot")}
    best = max(singles, key=lambda n: singles[n][0].f1)
    (ours_score, ours_time), (best_score, best_time) = results[name_ours], singles[best]
    print(
        f"\nbest single flavor: {best} (F1 {best_score.f1:.3f}); ours F1 {ours_score.f1:.3f} "
        f"({ours_score.f1 - best_score.f1:+.3f}), "
        f"time ratio ours/best = {ours_time / best_time:.2f}x"
    )


if __name__ == "__main__":
    main()
