"""Where `mesh_compare`'s time goes, stage by stage, against a plain Chamfer (issue 27).

Measures today's `measure_pair` on the pinned pairs (`verdict_pairs`: the bundled 3D
tasks with their exploit variants, CadQuery's examples and the generated parts' variants)
under cProfile and sums, per set and setting, the cumulative seconds of each stage:
loading with the validity and topology gates, sampling, the KD-tree queries of the
nearest samples (the 1-nearest, which gives the Chamfer too, and the 8-nearest where a
bound is loose), the point-to-surface upper bounds, the exact distances, the vertices'
check, the pose search, IoU and the volume ratio. A plain Chamfer on the same points
(sampling, two KD-trees, two queries: `mesh_verdicts.plain_chamfer_s`) is timed pair by
pair, interleaved, for scale. cProfile slows Python-heavy stages more than NumPy-heavy
ones, and a stage called inside another counts in both: read the shares, and
`mesh_verdicts.py` for the totals.

With ``--aligned ROUNDS``, instead: the aligned case alone, every pair whose candidate is
the same part in the same pose as its reference (the bundled parts' copies, scored with
the defaults; CadQuery's examples and generated parts against their own meshes, cadrille
preset; and each bundled part against itself subdivided, the same surface retessellated),
timed in interleaved rounds: per pair, the plain Chamfer (`plain_chamfer_s`, the anchor
every ratio divides by), the Chamfer as scipy users write it (default trees, queries in
sample order), `--base`'s code, then today's with the reference cache emptied ("cold": a
task's first sample) and again with it kept ("warm"), then the next pair (a base that
keeps references too is timed cold and warm the same way: "base cold", "base warm";
the base's columns come before today's in even rounds and after them in odd ones, so a
before/after is interleaved pair by pair); every round is
printed, the table gives the median and range of the per-round ratios, none dropped.
Each is timed for the distances and the pose check (`surface_metrics` and the ramps the
skip reads), then with IoU and the volume ratio (`measure._figures`, "+IoU"). Pairs are
grouped by whether the two meshes are the same arrays (`distance.same_mesh`: the CAD
kernel's own tessellation) or not.

Run: ``cd benchmarks && ../.venv/bin/python mesh_cost.py [--skip-cad] [--aligned 5
[--base f4abc85] [--cpu]]``. Prints the load. ``--cpu`` times each column in this
process's CPU time (every thread's, the KD queries' workers too) instead of wall time.
"""

from __future__ import annotations

import argparse
import cProfile
import importlib
import os
import pstats
import statistics
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from mesh_verdicts import EXAMPLES, REPO, plain_chamfer_s
from scipy.spatial import cKDTree

from rewardsmith.verifiers.mesh import compare, measure, metrics
from rewardsmith.verifiers.mesh.align import normalise
from rewardsmith.verifiers.mesh.distance import same_mesh
from rewardsmith.verifiers.mesh.load import load_mesh
from rewardsmith.verifiers.mesh.thresholds import Thresholds
from rewardsmith.verifiers.mesh.verdict_pairs import (
    SETTINGS,
    Pair,
    base_code,
    bundled_pairs,
    cadquery_pairs,
)

STAGES = {
    "load + gates": ("measure.py", "_load"),
    "sampling": ("metrics.py", "sample_with_faces"),
    "nearest samples": ("distance.py", "nearest_samples"),
    "upper bounds": ("distance.py", "upper_bounds"),
    "exact distances": ("distance.py", "exact"),
    "vertices": ("distance.py", "farthest_vertex"),
    "pose search": ("align.py", "align_pair"),
    "IoU": ("volume.py", "iou"),
    "volume ratio": ("volume.py", "volume_ratio"),
}
"""Stage name: (file, function) whose cumulative time it is."""


CLOCK: list[Any] = [time.perf_counter]
"""The clock every timing of ``--aligned`` reads: wall time, or with ``--cpu`` this
process's CPU time (all its threads), steadier on a machine other work is loading."""


def stage_seconds(profile: cProfile.Profile) -> dict[str, float]:
    stats = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    out = dict.fromkeys(STAGES, 0.0)
    for (path, _, function), (_, _, _, cumulative, _) in stats.items():
        for stage, (file, name) in STAGES.items():
            if function == name and path.endswith(file):
                out[stage] += cumulative
    return out


def aligned_pairs(scratch: Path, skip_cad: bool) -> list[tuple[Pair, str]]:
    """(pair, setting) for every aligned pair (see the module docstring)."""
    chosen = [(p, "default") for p in bundled_pairs(scratch) if p.id.endswith("/copy")]
    for pair, _ in list(chosen):
        finer = scratch / Path(pair.candidate).name.replace("_copy", "_subdivided")
        load_mesh(pair.reference["mesh"]).subdivide().export(finer)
        chosen.append(
            (
                Pair(
                    pair.id.replace("/copy", "/subdivided"),
                    str(finer),
                    pair.reference,
                    ("default",),
                ),
                "default",
            )
        )
    if not skip_cad:
        for pair in cadquery_pairs(scratch, EXAMPLES):
            name = pair.id.removeprefix("cadquery/")
            if (EXAMPLES / f"{name}.py").exists() or "-" not in name:
                chosen.append((pair, "cadrille"))  # an example or a part, against itself
    return chosen


def scipy_chamfer_s(pair: Pair, setting: str) -> float:
    """The plain Chamfer as scipy users write it (default trees, queries in sample order)."""
    n = compare.MeshCompare(**SETTINGS[setting]).n_points
    a, b = normalise(load_mesh(pair.candidate)), normalise(load_mesh(pair.reference["mesh"]))
    start = CLOCK[0]()
    p, _ = metrics.sample_with_faces(a, n, 0)
    q, _ = metrics.sample_with_faces(b, n, 1)
    d_pq, _ = cKDTree(q).query(p)
    d_qp, _ = cKDTree(p).query(q)
    float(np.mean(d_pq**2) + np.mean(d_qp**2))
    return CLOCK[0]() - start


def _timed(code: tuple[Any, Any], a: Any, b: Any, settings: dict[str, Any], whole: bool) -> float:
    """Seconds of `code`'s (metrics, measure) distances and pose check (with IoU and the
    volume ratio when `whole`), on fresh copies (the anchor loads its meshes afresh)."""
    measuring, measuring_pair = code
    a, b = a.copy(), b.copy()  # without trimesh's caches: as loaded for each sample
    start = CLOCK[0]()
    if whole:
        figures = measuring_pair._figures(a, b, settings)
        measuring_pair._passes(figures, settings)
    else:
        levels = Thresholds(**settings["thresholds"])
        found = measuring.surface_metrics(
            a,
            b,
            n_points=settings["n_points"],
            seed=settings["seed"],
            threshold=settings["fscore_tau"],
            levels=levels,
        )
        [levels.ramp(m, getattr(found, m)) for m in ("chamfer", "hausdorff", "p95", "fscore")]
    return CLOCK[0]() - start


def _row(
    pair: Pair, setting: str, a: Any, b: Any, base: tuple[Any, Any] | None, today_first: bool
) -> dict[str, float]:
    """One pair's seconds, each column in turn (see the module docstring); today's code
    before the base's when `today_first` (the rounds alternate)."""
    settings = compare.MeshCompare(**SETTINGS[setting]).settings()
    row = {
        "plain": plain_chamfer_s(pair, setting, CLOCK[0]),
        "scipy": scipy_chamfer_s(pair, setting),
    }
    codes = [("", (metrics, measure))] + ([] if base is None else [("base ", base)])
    timed = {}
    for prefix, code in codes if today_first else codes[::-1]:
        timed[prefix] = _columns(prefix, code, a, b, settings)
    return row | timed.get("base ", {}) | timed[""]


def _columns(
    prefix: str, code: tuple[Any, Any], a: Any, b: Any, settings: dict[str, Any]
) -> dict[str, float]:
    """`code`'s seconds on one pair: "cold" with its reference cache emptied (a task's
    first sample), then "warm" with it kept, without and with IoU. Code without a
    reference cache has one column each, named as before (`prefix` bare: "base")."""
    cache = getattr(code[0], "_reference_surfaces", None)
    out = {}
    for whole, suffix in ((False, ""), (True, "+IoU")):
        if cache is None:
            out[prefix.strip() + suffix] = _timed(code, a, b, settings, whole=whole)
            continue
        cache.clear()
        out[f"{prefix}cold{suffix}"] = _timed(code, a, b, settings, whole=whole)
        out[f"{prefix}warm{suffix}"] = _timed(code, a, b, settings, whole=whole)
    return out


def aligned(rounds: int, skip_cad: bool, base_commit: str | None) -> None:
    with tempfile.TemporaryDirectory(prefix="mesh-cost-") as scratch:
        base = None
        if base_commit:
            compared = base_code(base_commit, Path(scratch), REPO)
            base = (importlib.import_module("rs_base_mesh.metrics"), compared[1])
        meshes = Path(scratch) / "meshes"
        meshes.mkdir()
        loaded = []
        for pair, setting in aligned_pairs(meshes, skip_cad):
            a = normalise(load_mesh(pair.candidate))
            b = normalise(load_mesh(pair.reference["mesh"]))
            group = "same mesh" if same_mesh(a, b) else "retessellated"
            loaded.append((pair, setting, a, b, group))
        print(f"{len(loaded)} pairs, load {os.getloadavg()}", flush=True)
        per_round: dict[str, list[dict[str, float]]] = {}
        for k in range(rounds):
            sums: dict[str, dict[str, float]] = {}
            for pair, setting, a, b, group in loaded:
                row = _row(pair, setting, a, b, base, today_first=k % 2 == 1)
                total = sums.setdefault(group, dict.fromkeys(row, 0.0))
                for column, seconds in row.items():
                    total[column] += seconds
            for group, total in sums.items():
                per_round.setdefault(group, []).append(total)
                ratios = " ".join(
                    f"{c} {t / total['plain']:.2f}x" for c, t in total.items() if c != "plain"
                )
                print(
                    f"round {k + 1} {group}: plain {total['plain']:.2f} s, {ratios}, "
                    f"load {os.getloadavg()[0]:.1f}",
                    flush=True,
                )
        print(f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, load {os.getloadavg()}")
        columns = [c for c in next(iter(per_round.values()))[0] if c != "plain"]
        print(
            "| tessellation | pairs | plain Chamfer s/round | "
            + " | ".join(f"{c} / plain" for c in columns)
            + " |"
        )
        print("| --- | ---: | ---: | " + " | ".join("---:" for _ in columns) + " |")
        for group, rows in per_round.items():
            n = sum(1 for *_, g in loaded if g == group)
            cells = []
            for c in columns:
                ratios = [r[c] / r["plain"] for r in rows]
                cells.append(
                    f"{statistics.median(ratios):.2f}x ({min(ratios):.2f}-{max(ratios):.2f})"
                )
            plain = statistics.median(r["plain"] for r in rows)
            print(f"| {group} | {n} | {plain:.2f} | " + " | ".join(cells) + " |")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--skip-cad", action="store_true")
    parser.add_argument("--aligned", type=int, metavar="ROUNDS")
    parser.add_argument("--base", help="with --aligned: also time this commit's mesh code")
    parser.add_argument("--cpu", action="store_true", help="with --aligned: CPU time, not wall")
    args = parser.parse_args()
    if args.cpu:
        CLOCK[0] = time.process_time
    print(f"load at start {os.getloadavg()}", flush=True)
    if args.aligned:
        aligned(args.aligned, args.skip_cad, args.base)
        return
    with tempfile.TemporaryDirectory(prefix="mesh-cost-") as scratch:
        sets = {"bundled": list(bundled_pairs(Path(scratch)))}
        if not args.skip_cad:
            sets["cadquery"] = list(cadquery_pairs(Path(scratch), EXAMPLES))
        print("| set | setting | pairs | total s | plain Chamfer s | " + " | ".join(STAGES) + " |")
        print("| --- | --- | ---: | ---: | ---: | " + " | ".join("---:" for _ in STAGES) + " |")
        for name, pairs in sets.items():
            for setting in sorted({s for p in pairs for s in p.settings}):
                chosen = [p for p in pairs if setting in p.settings]
                verifier = compare.MeshCompare(**SETTINGS[setting])
                profile, plain = cProfile.Profile(), 0.0
                for pair in chosen:
                    profile.runcall(
                        measure.measure_pair,
                        pair.candidate,
                        pair.reference["mesh"],
                        verifier.settings(),
                    )
                    plain += plain_chamfer_s(pair, setting)
                total = sum(
                    v[3]
                    for k, v in pstats.Stats(profile).stats.items()  # type: ignore[attr-defined]
                    if k[2] == "measure_pair"
                )
                cells = " | ".join(f"{s:.1f}" for s in stage_seconds(profile).values())
                print(
                    f"| {name} | {setting} | {len(chosen)} | {total:.1f} | {plain:.1f} | {cells} |",
                    flush=True,
                )
    print(f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, load {os.getloadavg()}")


if __name__ == "__main__":
    main()
