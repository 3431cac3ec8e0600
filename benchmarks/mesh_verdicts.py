"""`mesh_compare` before and after a speed-up: same verdicts, and what each costs.

Scores the pinned pairs (`rewardsmith.verifiers.mesh.verdict_pairs`: the bundled 3D tasks
with their exploit variants, CadQuery's examples and the generated parts' variants) with
the mesh code of a base commit (its ``verifiers/mesh/*.py`` read with ``git show`` and
imported under another name) and with today's, pair by pair, alternating, in this process
(the meshes are trusted here; the verifier runs the same code in a killable worker).
Prints per set and setting the seconds of each, their ratio, the verdicts that agree
(status, failure, score to 1e-9), and a plain Chamfer (two KD-trees, the same number of
points a side) on the same pairs for scale; with ``--record`` writes the base verdicts
that `tests/verifiers/mesh/test_verdicts_pinned.py` checks today's code against.

Run: ``.venv/bin/python benchmarks/mesh_verdicts.py [--base 12af234] [--skip-cad]
[--record tests/verifiers/mesh/data/verdicts_12af234.json]``. Prints the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from rewardsmith.verifiers.mesh import compare, measure
from rewardsmith.verifiers.mesh.align import normalise
from rewardsmith.verifiers.mesh.load import load_mesh
from rewardsmith.verifiers.mesh.metrics import nearest_both_ways, sample_with_faces
from rewardsmith.verifiers.mesh.verdict_pairs import (
    SETTINGS,
    Pair,
    base_code,
    bundled_pairs,
    cadquery_pairs,
    digest,
)
from rewardsmith.verifiers.types import Verdict

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO.parent / "shared/data/cad/cadquery-examples"


def judged(code: tuple[Any, Any], pair: Pair, setting: str) -> tuple[Verdict, float]:
    """The verdict of `code` on `pair` under `setting`, and the seconds it took."""
    comparing, measuring = code
    verifier = comparing.MeshCompare(**SETTINGS[setting])
    start = time.perf_counter()
    measured = measuring.measure_pair(pair.candidate, pair.reference["mesh"], verifier.settings())
    seconds = time.perf_counter() - start
    return comparing.verdict_from_measurement(verifier, measured, pair.reference), seconds


def plain_chamfer_s(pair: Pair, setting: str, clock: Any = time.perf_counter) -> float:
    """A plain Chamfer on the same number of points a side: sampling and two KD queries.
    `clock`: wall time by default (``time.process_time``: this process's CPU time)."""
    n = compare.MeshCompare(**SETTINGS[setting]).n_points
    a, b = normalise(load_mesh(pair.candidate)), normalise(load_mesh(pair.reference["mesh"]))
    start = clock()
    p, _ = sample_with_faces(a, n, 0)
    q, _ = sample_with_faces(b, n, 1)
    d_pq, _, d_qp, _ = nearest_both_ways(p, q)
    float(np.mean(d_pq**2) + np.mean(d_qp**2))
    return clock() - start


def key(v: Verdict) -> tuple[Any, ...]:
    return (
        v.status.value,
        v.failure and v.failure.value,
        None if v.score is None else round(v.score, 9),
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", default="12af234")
    parser.add_argument("--skip-cad", action="store_true")
    parser.add_argument("--record", type=Path)
    args = parser.parse_args()
    print(f"load at start {os.getloadavg()}", flush=True)
    with tempfile.TemporaryDirectory(prefix="mesh-verdicts-") as scratch:
        base = base_code(args.base, Path(scratch), REPO)
        today = (compare, measure)
        meshes = Path(scratch) / "meshes"
        meshes.mkdir()
        sets = {"bundled": list(bundled_pairs(meshes))}
        if not args.skip_cad:
            sets["cadquery"] = list(cadquery_pairs(meshes, EXAMPLES))
        rows, lines = [], []
        for name, pairs in sets.items():
            for setting in {s for p in pairs for s in p.settings}:
                chosen = [p for p in pairs if setting in p.settings]
                base_s = today_s = plain_s = 0.0
                agree = 0
                for pair in chosen:
                    before, seconds = judged(base, pair, setting)
                    base_s += seconds
                    after, seconds = judged(today, pair, setting)
                    today_s += seconds
                    plain_s += plain_chamfer_s(pair, setting)
                    agree += key(before) == key(after)
                    rows.append(
                        {
                            "id": pair.id,
                            "setting": setting,
                            "candidate": digest(pair.candidate),
                            "reference": digest(pair.reference["mesh"]),
                            "status": before.status.value,
                            "failure": before.failure and before.failure.value,
                            "score": before.score,
                            "today": list(key(after)),
                        }
                    )
                n = len(chosen)
                lines.append(
                    f"| {name} | {setting} | {n} | {base_s:.1f} | {today_s:.1f} | "
                    f"{base_s / today_s:.2f}x | {plain_s:.1f} | {today_s / plain_s:.1f}x | "
                    f"{agree}/{n} | {os.getloadavg()[0]:.1f} |"
                )
                print(lines[-1], flush=True)
    print()
    print(f"base {args.base}, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, load {os.getloadavg()}")
    print(
        "| set | setting | pairs | base s | today s | speed-up | plain Chamfer s |"
        " today / plain | same verdicts | load |"
    )
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    print("\n".join(lines))
    if args.record:
        args.record.write_text(
            json.dumps(
                {
                    "base": args.base,
                    "made_by": "benchmarks/mesh_verdicts.py --record",
                    "date": f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC",
                    "rows": rows,
                },
                indent=0,
            )
            + "\n"
        )


if __name__ == "__main__":
    main()
