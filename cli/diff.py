"""``rewardsmith diff``: what changed between two scored runs of the same dump."""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from rewardsmith.cli.scored import ScoredRow, read_scored

__all__ = ["RunDiff", "compare_runs", "diff"]

SHOWN_CHANGES = 15


@dataclass
class RunDiff:
    """The comparison of run A with run B over the samples both scored."""

    common: int = 0
    only_a: list[str] = field(default_factory=list)
    only_b: list[str] = field(default_factory=list)
    agreement: dict[str, float] = field(default_factory=dict)
    """Per verifier key in both runs: the fraction of common samples with the same status."""
    changes: list[dict[str, Any]] = field(default_factory=list)
    """Each (sample, verifier) whose status changed: id, verifier, a, b."""
    means: dict[str, tuple[float | None, float | None]] = field(default_factory=dict)
    """Mean of the reward and of each component's raw value, in A and in B."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "common": self.common,
            "only_a": self.only_a,
            "only_b": self.only_b,
            "agreement": self.agreement,
            "changes": self.changes,
            "means": {k: {"a": a, "b": b} for k, (a, b) in self.means.items()},
        }


def compare_runs(a_rows: list[ScoredRow], b_rows: list[ScoredRow]) -> RunDiff:
    a, b = {r.id: r for r in a_rows}, {r.id: r for r in b_rows}
    common = [i for i in a if i in b]
    result = RunDiff(
        common=len(common),
        only_a=[i for i in a if i not in b],
        only_b=[i for i in b if i not in a],
    )
    same: dict[str, list[bool]] = defaultdict(list)
    for sample_id in common:
        va, vb = a[sample_id].verdicts, b[sample_id].verdicts
        for key in sorted(va.keys() & vb.keys()):
            sa, sb = va[key].get("status"), vb[key].get("status")
            same[key].append(sa == sb)
            if sa != sb:
                result.changes.append({"id": sample_id, "verifier": key, "a": sa, "b": sb})
    result.agreement = {k: sum(v) / len(v) for k, v in same.items()}
    result.means["reward"] = (_mean(a[i].value for i in common), _mean(b[i].value for i in common))
    names = {n for i in common for n in a[i].reward.get("components", {})}
    names &= {n for i in common for n in b[i].reward.get("components", {})}
    for name in sorted(names):
        result.means[name] = (_component_mean(a, common, name), _component_mean(b, common, name))
    return result


def _mean(values: Any) -> float | None:
    xs = [v for v in values if v is not None]
    return sum(xs) / len(xs) if xs else None


def _component_mean(rows: dict[str, ScoredRow], ids: list[str], name: str) -> float | None:
    return _mean(rows[i].reward.get("components", {}).get(name, {}).get("raw") for i in ids)


def diff(
    run_a: Annotated[Path, typer.Argument(help="First scored file.")],
    run_b: Annotated[Path, typer.Argument(help="Second scored file.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the comparison as JSON.")] = False,
) -> None:
    """Compare two scored runs of one dump: changed verdicts, agreement, shifts."""
    result = compare_runs(list(read_scored(run_a)), list(read_scored(run_b)))
    if as_json:
        typer.echo(json.dumps(result.to_dict(), indent=1))
        return
    console = Console()
    console.print(
        f"{result.common} samples in both; {len(result.only_a)} only in A, "
        f"{len(result.only_b)} only in B; {len(result.changes)} verdicts changed status."
    )
    table = Table(title="A → B")
    for column in ("what", "A mean", "B mean", "shift", "status agreement"):
        table.add_column(column, justify="left" if column == "what" else "right")
    for name, (ma, mb) in result.means.items():
        shift = f"{mb - ma:+.4f}" if ma is not None and mb is not None else "–"
        agree = result.agreement.get(name)
        table.add_row(name, _fmt(ma), _fmt(mb), shift, _fmt(agree))
    for key, agree in result.agreement.items():
        if key not in result.means:
            table.add_row(key, "", "", "", _fmt(agree))
    console.print(table)
    for change in result.changes[:SHOWN_CHANGES]:
        console.print(f"  {change['id']}: {change['verifier']} {change['a']} → {change['b']}")


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.4f}"
