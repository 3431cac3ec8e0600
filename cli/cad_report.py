"""``rewardsmith cad-report``: set-level CAD figures as the papers report them.

CAD reconstruction papers (CAD-Recode, cadrille) report over a test set: the **median**
and **mean Chamfer distance x 1000** (8,192 points a side, both shapes normalised by their
bounding box; ``MeshCompare(preset="cadrille")``), the **invalidity ratio** (the share of
samples whose code produced no shape that could be measured: a script error, a timeout,
no output, an unreadable mesh) and the **mean IoU** over the valid ones. cadrille's
``evaluate.py`` computes the same from its predictions; here they come from a scored dump's
``mesh_compare`` or ``cad_code`` verdicts (the raw pose, as theirs: no alignment).

A verdict kept out of the reward (an infrastructure failure, score None) is counted apart,
neither valid nor invalid.

    >>> one, two = {"raw": {"chamfer": 2e-4, "iou": 0.9}}, {"raw": {"chamfer": 4e-4, "iou": 0.7}}
    >>> figures = set_figures([one, None, two])
    >>> round(figures["median_cd_x1000"], 6), round(figures["invalidity_ratio"], 4)
    (0.3, 0.3333)
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from rewardsmith.cli.runs import RunReader
from rewardsmith.datasets.dumps import DumpError
from rewardsmith.verifiers.types import Verdict

__all__ = ["cad_report", "set_figures"]

_VERIFIERS = ("mesh_compare", "cad_code")


def _measurement(verdict: Verdict) -> dict[str, Any] | None:
    """The verdict's evidence when it holds a raw measurement; None for an invalid sample."""
    evidence = dict(verdict.evidence or {})
    raw = evidence.get("raw")
    return evidence if isinstance(raw, dict) and "chamfer" in raw else None


def set_figures(measurements: list[dict[str, Any] | None]) -> dict[str, Any]:
    """The paper figures over one set: one entry per sample, None where it is invalid."""
    valid = [m for m in measurements if m is not None]
    chamfers = [1000 * float(m["raw"]["chamfer"]) for m in valid]
    ious = [float(m["raw"]["iou"]) for m in valid if m["raw"].get("iou") is not None]
    breps = [
        float(m["brep"]["brep_iou"])
        for m in valid
        if (m.get("brep") or {}).get("brep_iou") is not None
    ]
    points = sorted({int(m["raw"].get("n_points", 0)) for m in valid})
    return {
        "samples": len(measurements),
        "valid": len(valid),
        "invalidity_ratio": (len(measurements) - len(valid)) / len(measurements)
        if measurements
        else None,
        "median_cd_x1000": statistics.median(chamfers) if chamfers else None,
        "mean_cd_x1000": statistics.fmean(chamfers) if chamfers else None,
        "mean_iou": statistics.fmean(ious) if ious else None,
        "mean_brep_iou": statistics.fmean(breps) if breps else None,
        "n_points": points,
    }


def collect(path: Path, verifier: str | None) -> tuple[list[dict[str, Any] | None], int]:
    """Per sample its measurement (None when invalid), and how many were not scored (an
    infrastructure failure, or a row that is not a scored row)."""
    measurements: list[dict[str, Any] | None] = []
    not_scored = 0
    reader = RunReader(path)
    names = (verifier,) if verifier else _VERIFIERS
    for row in reader:
        # A skipped verdict is a row of another task (a mixed dump): not part of the set.
        verdicts = [
            v for v in row.reward.verdicts.values() if v.name in names and v.status != "skip"
        ]
        if not verdicts:
            continue
        if verdicts[0].is_infra_failure:
            not_scored += 1
            continue
        measurements.append(_measurement(verdicts[0]))
    if reader.errors:
        Console(stderr=True).print(
            f"[yellow]{reader.bad_rows} rows not read[/] (first: {reader.errors[0]})",
            highlight=False,
        )
    return measurements, not_scored + reader.bad_rows


def cad_report(
    scored: Annotated[Path, typer.Argument(help="A file written by `rewardsmith score`.")],
    verifier: Annotated[
        str | None, typer.Option(help="Only this verifier's verdicts (mesh_compare, cad_code).")
    ] = None,
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Also write the figures to this JSON file.")
    ] = None,
) -> None:
    """Median and mean Chamfer x 1000, invalidity ratio and IoU over a scored CAD set."""
    try:
        measurements, not_scored = collect(scored, verifier)
    except DumpError as exc:
        raise typer.BadParameter(str(exc), param_hint="SCORED") from exc
    if not measurements:
        raise typer.BadParameter(f"no {verifier or ' or '.join(_VERIFIERS)} verdicts in {scored}")
    figures = {**set_figures(measurements), "not_scored": not_scored}
    table = Table(title=f"CAD set figures: {scored.name}")
    table.add_column("figure")
    table.add_column("value", justify="right")
    for key, value in figures.items():
        table.add_row(key, _fmt(value))
    Console().print(table)
    if json_out is not None:
        json_out.write_text(json.dumps(figures, indent=2), encoding="utf-8")


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return "-" if value is None else str(value)
