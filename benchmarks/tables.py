"""Table extraction on several sources of PDFs with cell-level ground truth: ours against
every camelot flavour and pdfplumber, on every page of every document, in one run.

Sources (`table_sources.py`): ICDAR 2013 EU (split by document number: the odd half is the
one the extraction was tuned on in issue 19, the even half is held out), tagged PDFs whose
structure trees give their tables' cells (pdfplumber's test files; the veraPDF corpus's
PDF/UA files), and the reports this project generates. A source whose files are not on
this machine is skipped, and said so.

Measure: the competition's cell adjacency relations (Göbel et al. 2013): precision, recall
and F1 over all relations of a group (micro), the mean of per-document F1 (macro), and the
mean over groups of their micro F1 (macro over sources). Every page of each document is read
by every method, so tables found on pages without any count against precision.

Selection by cross-source validation: the extraction's settings (which extractors vote,
how many must agree) are chosen, for each group in turn, on the *other* groups only, and the
chosen setting is scored on the group left out; the groups each choice was made on are
printed. Groups used for any earlier decision are marked; the goal is read on the others.

Speed: wall time of each method over the same pages, and ours as a ratio to camelot
``network``'s. Methods run document by document, each document by every method in turn,
the order rotating, so a shared machine's drifting load hits all alike.

    .venv/bin/python benchmarks/tables.py --sources all
    .venv/bin/python benchmarks/tables.py --sources tagged,statements --limit 2
    .venv/bin/python benchmarks/tables.py --methods ours   # ours and camelot network only
    .venv/bin/python benchmarks/tables.py --bomb       # a bomb's first and second sample
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import sys
import tempfile
import time
import warnings
from collections import Counter
from collections.abc import Callable, Iterable
from itertools import combinations
from pathlib import Path
from typing import Any

import camelot
import pdfplumber

sys.path.insert(0, str(Path(__file__).resolve().parent))
from table_sources import SOURCES, Doc

from rewardsmith.verifiers.finance.metrics import PRF, prf, table_relations
from rewardsmith.verifiers.finance.pdf import EXTRACTORS, extract_pdf
from rewardsmith.verifiers.finance.reference import document_from_raw
from rewardsmith.verifiers.finance.tables import Table

Relations = Counter[tuple]
Method = Callable[[str], Relations]
FLAVOURS = ("lattice", "stream", "network", "hybrid")
DECIDED_ON = {
    "icdar2013-eu (odd)": "issue 19 designed the extraction and set its thresholds on it",
    "statements": "the extractor's tests read these reports while it was written",
    "tagged": "issue 29 read its errors: the two-column list and inset-shading classes",
}
"""Groups that informed an earlier decision: shown, never used to read the goal."""


def camelot_flavour(flavour: str) -> Method:
    def run(pdf: str) -> Relations:
        found = camelot.read_pdf(pdf, flavor=flavour, pages="all")
        return _sum(Table.from_grid(t.df.values.tolist()) for t in found)

    return run


def plumber_default(pdf: str) -> Relations:
    with pdfplumber.open(pdf) as doc:
        grids = [g for page in doc.pages for g in page.extract_tables()]
    return _sum(Table.from_grid(g) for g in grids)


class Ours:
    """The production path (`extract_pdf` + `document_from_raw`, default settings); each
    document's raw candidates are kept, so other settings are scored without re-parsing."""

    def __init__(self) -> None:
        self.raw: dict[str, dict[str, Any]] = {}

    def __call__(self, pdf: str) -> Relations:
        self.raw[pdf] = extract_pdf(pdf, None, max_pages=1000)
        return relations_with(self.raw[pdf], EXTRACTORS, 2)


def relations_with(raw: dict[str, Any], sources: tuple[str, ...], min_support: int) -> Relations:
    pages = {
        n: {**page, "tables": [t for t in page["tables"] if t["source"] in sources]}
        for n, page in raw["pages"].items()
    }
    document = document_from_raw({**raw, "pages": pages}, min_support)
    return _sum(t.table for t in document.tables)


def _sum(tables: Iterable[Table]) -> Relations:
    total: Relations = Counter()
    for table in tables:
        total += table_relations(table)
    return total


def group_of(doc: Doc) -> str:
    """The ICDAR EU split, fixed before any tuning: odd document numbers were tuned on."""
    number = re.match(r"eu-(\d+)", doc.name)
    if doc.source != "icdar2013-eu" or number is None:
        return doc.source
    return f"icdar2013-eu ({'odd' if int(number.group(1)) % 2 else 'even'})"


def load_sources(names: list[str], limit: int | None) -> list[Doc]:
    docs: list[Doc] = []
    for name in names:
        found = SOURCES[name]()
        if isinstance(found, str):
            print(f"source {name}: not available, skipped ({found})")
            continue
        print(f"source {name}: {len(found[:limit])} documents")
        docs += found[:limit]
    return docs


class Tally:
    """Relations matched, predicted and expected, per-document F1s, pages and seconds."""

    def __init__(self) -> None:
        self.matched = self.predicted = self.gold = self.pages = 0
        self.per_doc: list[float] = []
        self.seconds = 0.0

    def add(self, found: Relations, truth: Relations, pages: int, seconds: float) -> None:
        m, p, g = sum((found & truth).values()), sum(found.values()), sum(truth.values())
        self.matched, self.predicted, self.gold = (
            self.matched + m,
            self.predicted + p,
            self.gold + g,
        )
        self.per_doc.append(prf(m, p, g).f1)
        self.pages += pages
        self.seconds += seconds

    @property
    def score(self) -> PRF:
        return prf(self.matched, self.predicted, self.gold)


Tallies = dict[str, dict[str, Tally]]


def run_all(methods: dict[str, Method], docs: list[Doc]) -> Tallies:
    """Every method on each document in turn (order rotating); tallies per group."""
    tallies: Tallies = {}
    names = list(methods)
    for n, doc in enumerate(docs):
        with pdfplumber.open(doc.pdf) as pdf:
            pages = len(pdf.pages)
        group = tallies.setdefault(group_of(doc), {name: Tally() for name in methods})
        for name in names[n % len(names) :] + names[: n % len(names)]:
            start = time.perf_counter()
            try:
                found = methods[name](doc.pdf)
            except Exception as exc:  # a method that crashes on a document scores 0 on it
                print(f"  {name} on {doc.name}: {type(exc).__name__}: {exc}")
                found = Counter()
            group[name].add(found, doc.truth, pages, time.perf_counter() - start)
        print(f"  done {doc.name} ({pages} pages, {group_of(doc)})", flush=True)
    return tallies


def report(tallies: Tallies) -> None:
    for group, by_method in tallies.items():
        first = next(iter(by_method.values()))
        seen = f"; used for decisions: {DECIDED_ON[group]}" if group in DECIDED_ON else ""
        print(f"\n{group}: {len(first.per_doc)} documents, {first.pages} pages{seen}")
        print("| method | precision | recall | F1 (micro) | F1 (macro) | seconds |")
        print("|---|---|---|---|---|---|")
        for name, t in by_method.items():
            s, macro = t.score, sum(t.per_doc) / len(t.per_doc)
            print(
                f"| {name} | {s.precision:.3f} | {s.recall:.3f} | {s.f1:.3f} | {macro:.3f} | "
                f"{t.seconds:.1f} |"
            )
    summary(tallies)


def summary(tallies: Tallies) -> None:
    """Macro over groups, and over the held-out ones; the goal per held-out group."""
    methods = list(next(iter(tallies.values())))
    held = [g for g in tallies if g not in DECIDED_ON]
    print("\n| method | " + " | ".join(tallies) + " | macro (all) | macro (held out) |")
    print("|---|" + "---|" * (len(tallies) + 2))
    for name in methods:
        f1 = {g: tallies[g][name].score.f1 for g in tallies}
        every = sum(f1.values()) / len(f1)
        out = sum(f1[g] for g in held) / len(held) if held else float("nan")
        cells = " | ".join(f"{f1[g]:.3f}" for g in tallies)
        print(f"| {name} | {cells} | {every:.3f} | {out:.3f} |")
    for g in held:
        ours = tallies[g]["ours"].score.f1
        best = max(
            (n for n in methods if n.startswith("camelot")), key=lambda n: tallies[g][n].score.f1
        )
        margin = ours - tallies[g][best].score.f1
        met = ours >= 0.90 and margin >= 0.05
        verdict = "met" if met else "missed"
        print(f"goal on {g}: ours {ours:.3f}, best camelot run ({best}) "
              f"{tallies[g][best].score.f1:.3f}, margin {margin:+.3f}: {verdict}")  # fmt: skip
    mine = sum(t["ours"].seconds for t in tallies.values())
    network = sum(t["camelot network"].seconds for t in tallies.values())
    print(f"time: ours {mine:.1f} s, camelot network {network:.1f} s: {mine / network:.2f}x")


def settings() -> list[tuple[tuple[str, ...], int]]:
    """The candidate settings: which extractors vote, and how many must agree."""
    out = []
    for k in range(1, len(EXTRACTORS) + 1):
        for chosen in combinations(EXTRACTORS, k):
            out += [(chosen, support) for support in range(1, min(k, 2) + 1)]
    return out


def cross_source(docs: list[Doc], raw: dict[str, dict[str, Any]]) -> None:
    """For each group left out in turn: the setting with the best mean F1 over the other
    groups, and its F1 on the group left out."""
    groups = sorted({group_of(d) for d in docs})
    f1: dict[tuple[str, Any], float] = {}
    for setting in settings():
        for g in groups:
            t = Tally()
            for d in (d for d in docs if group_of(d) == g and d.pdf in raw):
                t.add(relations_with(raw[d.pdf], *setting), d.truth, 0, 0.0)
            f1[(g, setting)] = t.score.f1
    print("\ncross-source selection (setting chosen on the other groups, scored on this one):")
    print("| left out | chosen on | setting | F1 there | production setting's F1 |")
    print("|---|---|---|---|---|")
    for g in groups:
        others = [o for o in groups if o != g]
        if not others:
            continue
        best = max(settings(), key=lambda s: sum(f1[(o, s)] for o in others))
        name = f"{'+'.join(best[0])}, support {best[1]}"
        print(f"| {g} | {', '.join(others)} | {name} | {f1[(g, best)]:.3f} | "
              f"{f1[(g, (EXTRACTORS, 2))]:.3f} |")  # fmt: skip


def bomb_samples() -> None:
    """Two samples citing one decompression bomb, through the grounding verifier."""
    from rewardsmith.datasets.finance.hostile import flate_bomb
    from rewardsmith.verifiers.finance import ExtractionLimits, Grounding, reference
    from rewardsmith.verifiers.finance.doc_cache import FailureCache
    from rewardsmith.verifiers.types import Sample

    with tempfile.TemporaryDirectory() as folder:
        path = flate_bomb(Path(folder) / "bomb.pdf", megabytes=20)
        print(f"bomb: {path.stat().st_size} bytes on disk, 20 MB of content inflated")
        reference._failures = FailureCache(Path(folder) / "failures")  # nothing remembered yet
        check = Grounding(limits=ExtractionLimits(timeout_s=10.0))
        for n, where in ((1, "this process"), (2, "this process"), (3, "another process")):
            if where == "another process":  # a pool worker: only the records on disk
                reference._failures = FailureCache(Path(folder) / "failures")
            sample = Sample(id=f"b{n}", completion="Revenue was 122,445 (p. 1).",
                            reference={"pdf": str(path)})  # fmt: skip
            start = time.perf_counter()
            verdict = check(sample)
            print(f"sample {n} ({where}): {verdict.status.value} ({verdict.failure}) in "
                  f"{time.perf_counter() - start:.3f} s; remembered: "
                  f"{verdict.evidence.get('remembered')}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sources", default="all", help=f"all, or some of {list(SOURCES)}")
    parser.add_argument("--limit", type=int, default=None, help="first N documents per source")
    parser.add_argument(
        "--methods", default="all", help="all, or a comma list of names as printed (a short run)"
    )
    parser.add_argument("--bomb", action="store_true", help="time a bomb's first and second sample")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    for name in ("pdfminer", "pypdf", "camelot", "playa"):
        logging.getLogger(name).setLevel(logging.ERROR)
    if args.bomb:
        bomb_samples()
        return
    names = list(SOURCES) if args.sources == "all" else args.sources.split(",")
    print(f"start {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}, "
          f"load {os.getloadavg()}")  # fmt: skip
    docs = load_sources(names, args.limit)
    ours = Ours()
    methods: dict[str, Method] = {f"camelot {f}": camelot_flavour(f) for f in FLAVOURS}
    methods["pdfplumber default"] = plumber_default
    methods["ours"] = ours
    if args.methods != "all":
        wanted = {"ours", "camelot network", *args.methods.split(",")}  # ours / network: time
        methods = {name: m for name, m in methods.items() if name in wanted}
    tallies = run_all(methods, docs)
    report(tallies)
    cross_source(docs, ours.raw)
    print(f"end {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}, "
          f"load {os.getloadavg()}")  # fmt: skip


if __name__ == "__main__":
    main()
