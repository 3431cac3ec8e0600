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

Run: ``cd benchmarks && ../.venv/bin/python mesh_cost.py [--skip-cad]``. Prints the load.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from mesh_verdicts import EXAMPLES, plain_chamfer_s

from rewardsmith.verifiers.mesh import compare, measure
from rewardsmith.verifiers.mesh.verdict_pairs import SETTINGS, bundled_pairs, cadquery_pairs

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


def stage_seconds(profile: cProfile.Profile) -> dict[str, float]:
    stats = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    out = dict.fromkeys(STAGES, 0.0)
    for (path, _, function), (_, _, _, cumulative, _) in stats.items():
        for stage, (file, name) in STAGES.items():
            if function == name and path.endswith(file):
                out[stage] += cumulative
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--skip-cad", action="store_true")
    args = parser.parse_args()
    print(f"load at start {os.getloadavg()}", flush=True)
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
