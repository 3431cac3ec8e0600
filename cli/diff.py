"""``rewardsmith diff``: what changed between two scored runs of the same dump.

Both runs' numbers come from `Stats` over the samples both scored (the same pass rate and
mean reward as ``score`` and ``report``). Run A is read twice and B once; what is held is
a compact index of A (each id's reward value and verdict statuses) and bounded lists of
examples, never the rows themselves.
"""

from __future__ import annotations

import heapq
import json
import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from rewardsmith.cli.page import join, page, table, tag
from rewardsmith.cli.runs import RunReader
from rewardsmith.cli.summary import fmt
from rewardsmith.datasets.dumps import DumpError
from rewardsmith.graders.stats import Stats

__all__ = ["RunDiff", "compare_runs", "diff"]

SHOWN_CHANGES = 15
KEPT_CHANGES = 200
KEPT_IDS = 50
KEPT_SHIFTS = 20

_Index = dict[str, tuple[float | None, tuple[tuple[str, str], ...]]]


@dataclass
class RunDiff:
    """The comparison of run A with run B over the samples both scored."""

    common: int = 0
    only_a: int = 0
    only_b: int = 0
    only_a_ids: list[str] = field(default_factory=list)
    only_b_ids: list[str] = field(default_factory=list)
    a: Stats = field(default_factory=Stats)
    b: Stats = field(default_factory=Stats)
    """Statistics of each run over the common samples."""
    agreement: dict[str, float] = field(default_factory=dict)
    """Per verifier key in both runs: the fraction of common samples with the same status."""
    changed: int = 0
    """(sample, verifier) pairs whose status changed."""
    transitions: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    """(verifier, status in A, status in B) -> how many, for the changed ones."""
    changes: list[dict[str, Any]] = field(default_factory=list)
    """The first `KEPT_CHANGES` changed pairs: id, verifier, a, b."""
    shifts: list[dict[str, Any]] = field(default_factory=list)
    """The samples whose reward moved most: id, a, b."""

    @property
    def means(self) -> dict[str, tuple[float | None, float | None]]:
        """The mean reward and each shared component's mean raw value, in A and in B."""
        out = {"reward": (self.a.reward.mean, self.b.reward.mean)}
        for name in sorted(self.a.components.keys() & self.b.components.keys()):
            out[name] = (self.a.components[name].raw.mean, self.b.components[name].raw.mean)
        return out

    @property
    def pass_rates(self) -> dict[str, tuple[float | None, float | None]]:
        keys = sorted(self.a.verifiers.keys() | self.b.verifiers.keys())
        return {k: (self.a.pass_rate(k), self.b.pass_rate(k)) for k in keys}

    def to_dict(self) -> dict[str, Any]:
        return {
            "common": self.common,
            "only_a": self.only_a,
            "only_b": self.only_b,
            "only_a_ids": self.only_a_ids,
            "only_b_ids": self.only_b_ids,
            "means": {k: {"a": a, "b": b} for k, (a, b) in self.means.items()},
            "pass_rates": {k: {"a": a, "b": b} for k, (a, b) in self.pass_rates.items()},
            "agreement": self.agreement,
            "changed": self.changed,
            "transitions": [
                {"verifier": k, "a": a, "b": b, "count": n}
                for (k, a, b), n in self.transitions.most_common()
            ],
            "changes": self.changes,
            "shifts": self.shifts,
            "a": self.a.to_dict(),
            "b": self.b.to_dict(),
        }


def compare_runs(path_a: str | Path, path_b: str | Path) -> RunDiff:
    """Compare two scored files (see the module doc for what is held)."""
    reader_a, reader_b = RunReader(path_a), RunReader(path_b)
    index: _Index = {}
    for row in reader_a:
        statuses = tuple((k, v.status.value) for k, v in row.reward.verdicts.items())
        index[row.id] = (row.reward.value, statuses)
    result = RunDiff()
    common: set[str] = set()
    same: dict[str, list[int]] = {}
    shifts: list[tuple[float, int, dict[str, Any]]] = []
    for row in reader_b:
        if row.id not in index:
            result.only_b += 1
            _keep(result.only_b_ids, row.id, KEPT_IDS)
            continue
        common.add(row.id)
        result.b.add(row.reward, row.task)
        value_a, statuses_a = index[row.id]
        _compare_verdicts(result, row.id, dict(statuses_a), row.reward.verdicts, same)
        _offer_shift(shifts, row.id, value_a, row.reward.value, len(common))
    for row in reader_a:
        if row.id in common:
            result.a.add(row.reward, row.task)
        else:
            _keep(result.only_a_ids, row.id, KEPT_IDS)
    result.common = len(common)
    result.only_a = len(index) - len(common)
    result.agreement = {k: n_same / n for k, (n_same, n) in sorted(same.items())}
    result.shifts = [entry for _, _, entry in sorted(shifts, key=lambda s: (-s[0], -s[1]))]
    return result


def _keep(kept: list[str], item: str, limit: int) -> None:
    if len(kept) < limit:
        kept.append(item)


def _compare_verdicts(
    result: RunDiff,
    sample_id: str,
    statuses_a: dict[str, str],
    verdicts_b: Any,
    same: dict[str, list[int]],
) -> None:
    for key in sorted(statuses_a.keys() & verdicts_b.keys()):
        a, b = statuses_a[key], verdicts_b[key].status.value
        counts = same.setdefault(key, [0, 0])
        counts[0] += a == b
        counts[1] += 1
        if a != b:
            result.changed += 1
            result.transitions[(key, a, b)] += 1
            if len(result.changes) < KEPT_CHANGES:
                result.changes.append({"id": sample_id, "verifier": key, "a": a, "b": b})


def _offer_shift(
    shifts: list[tuple[float, int, dict[str, Any]]],
    sample_id: str,
    a: float | None,
    b: float | None,
    order: int,
) -> None:
    """Keep the `KEPT_SHIFTS` largest reward moves (a reward appearing or vanishing
    counts as the largest)."""
    if a == b:
        return
    if a is None or b is None or not (math.isfinite(a) and math.isfinite(b)):
        size = math.inf
    else:
        size = abs(b - a)
    item = (size, -order, {"id": sample_id, "a": a, "b": b})
    if len(shifts) < KEPT_SHIFTS:
        heapq.heappush(shifts, item)
    elif item[:2] > shifts[0][:2]:
        heapq.heapreplace(shifts, item)


# ---------------------------------------------------------------------- the command


def diff(
    run_a: Annotated[Path, typer.Argument(help="First scored file.")],
    run_b: Annotated[Path, typer.Argument(help="Second scored file.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the comparison as JSON.")] = False,
    html: Annotated[
        Path | None, typer.Option("--html", help="Also write the comparison as an HTML page.")
    ] = None,
) -> None:
    """Compare two scored runs of one dump: changed verdicts, agreement, shifts."""
    try:
        result = compare_runs(run_a, run_b)
    except DumpError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from exc
    if html is not None:
        html.parent.mkdir(parents=True, exist_ok=True)
        html.write_text(diff_page(result, run_a.name, run_b.name), encoding="utf-8")
    if as_json:
        typer.echo(json.dumps(result.to_dict(), indent=1))
        return
    console = Console()
    console.print(_headline(result), highlight=False)
    table_ = Table(title="A → B (over the samples both scored)")
    for column in ("what", "A", "B", "shift", "status agreement"):
        table_.add_column(column, justify="left" if column == "what" else "right")
    for what, *numbers in _rows(result):
        table_.add_row(Text(what), *numbers)  # names are data, never rich markup
    console.print(table_)
    for change in result.changes[:SHOWN_CHANGES]:
        console.print(
            f"  {change['id']}: {change['verifier']} {change['a']} → {change['b']}",
            markup=False,
            highlight=False,
        )
    if html is not None:
        console.print(f"wrote {html}")


def _headline(result: RunDiff) -> str:
    return (
        f"{result.common} samples in both; {result.only_a} only in A, {result.only_b} only "
        f"in B; {result.changed} verdicts changed status."
    )


def _rows(result: RunDiff) -> list[list[str]]:
    """(what, A, B, shift, agreement): means first, then pass rates by verifier."""
    rows = []
    for name, (a, b) in result.means.items():
        agree = result.agreement.get(name)
        rows.append([f"mean {name}", fmt(a, 4), fmt(b, 4), _shift(a, b), fmt(agree, 4)])
    for key, (a, b) in result.pass_rates.items():
        agree = result.agreement.get(key)
        rows.append([f"pass rate {key}", fmt(a, 4), fmt(b, 4), _shift(a, b), fmt(agree, 4)])
    return rows


def _shift(a: float | None, b: float | None) -> str:
    return f"{b - a:+.4f}" if a is not None and b is not None else "–"


def diff_page(result: RunDiff, name_a: str, name_b: str) -> str:
    """The comparison as a self-contained page (escaped like the report)."""
    transitions = [[k, a, b, n] for (k, a, b), n in result.transitions.most_common()]
    sections = [
        tag("p", f"A: {name_a}; B: {name_b}. {_headline(result)}"),
        tag("h2", "Means and pass rates"),
        table(["what", "A", "B", "shift", "status agreement"], _rows(result)),
        tag("h2", "Status changes"),
        table(["verifier", "in A", "in B", "samples"], transitions, numeric=3),
        tag("h2", f"Changed verdicts (the first {len(result.changes)})"),
        table(
            ["sample", "verifier", "in A", "in B"],
            [list(c.values()) for c in result.changes],
            numeric=4,
        ),
        tag("h2", "Largest reward shifts"),
        table(
            ["sample", "A", "B"],
            [[s["id"], fmt(s["a"], 4), fmt(s["b"], 4)] for s in result.shifts],
        ),
        tag("h2", "Samples in one run only"),
        tag("p", f"only in A ({result.only_a}): " + ", ".join(result.only_a_ids)),
        tag("p", f"only in B ({result.only_b}): " + ", ".join(result.only_b_ids)),
    ]
    return page(f"rewardsmith diff: {name_a} → {name_b}", [join(sections)])
