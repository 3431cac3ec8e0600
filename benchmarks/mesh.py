"""3D verifiers, side by side with the obvious implementations, in one run.

(a) **Blender scene verification**, per sample, on the same 50 scripts (variants of the
    bundled scenes3d tasks: correct scenes, wrong colours, sizes, lights, cameras, script
    errors), both with the same jail, the same two phases and the same checks:

    - ``warm``: `BlenderScene`: children forked from a warm sandbox server that imported
      `bpy` and reset factory settings once;
    - ``fresh``: the obvious approach: a fresh ``python`` that runs ``import bpy`` (and the
      factory reset) for every phase of every sample, in the same sandbox jail.

    The two interleave in chunks of 10 samples (warm, fresh, warm, fresh, ...), so load on
    the shared machine falls on both alike. Reported: samples per second for each, their
    ratio, and whether every verdict agrees.

(c) **CadQuery scripts** (`cad_code`, ``kind="cadquery"``): CadQuery's 27 examples and the
    generated parts with their one-feature variants, each against its reference:

    - ``warm``: the CAD venv's warm sandbox server (cadquery and build123d imported once),
      one forked child per phase;
    - ``fresh``: each phase in a fresh interpreter of the CAD venv that imports what it
      needs (``import cadquery`` in the script), in the same jail.

    Interleaved in chunks the same way; reported for the runner alone (the two sandboxed
    phases, what the warm server changes) and end to end (with the mesh comparison, the
    same on both sides), with the verdicts compared.

(b) **Chamfer distance and IoU** from 1k to 200k faces (a torus against a copy moved by
    0.1 of its size):

    - Chamfer: ours (`surface_metrics`, KD-tree queries on both cores) against a plain
      single-threaded ``scipy.spatial.cKDTree`` on the same seeded samples: same value to
      1e-6, time ratio;
    - IoU: ours (exact, manifold3d booleans) against a plain voxel IoU (trimesh's
      ``voxelized(pitch).fill()`` on a 64^3 shared grid): values side by side, time ratio.

(d) **Truth render cost** (issue 32): the same scripts through the warm server with the
    truth render and without it, alternating, one worker: the cost per check.

Run: ``.venv/bin/python benchmarks/mesh.py [--workers 2] [--samples 50] [--skip-blender]
[--skip-cad] [--skip-metrics] [--skip-truth] [--cad-samples 20] [--skip-cad-runner]``.
Figures print with the load average. Prints a Markdown report (paste into docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import platform
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import trimesh
from scipy.spatial import cKDTree
from side_by_side import agreement, interleaved, row  # beside this script

from rewardsmith.datasets.scenes3d.tasks import Task, load_tasks
from rewardsmith.verifiers.blender.run import BlenderRun, run_scripts
from rewardsmith.verifiers.blender.scene import BlenderScene, _load_spec, extract_script
from rewardsmith.verifiers.mesh.metrics import (
    chamfer_from_distances,
    nearest_both_ways,
    sample_points,
)
from rewardsmith.verifiers.mesh.metrics import surface_metrics as our_surface_metrics
from rewardsmith.verifiers.mesh.volume import iou_exact, iou_voxel
from rewardsmith.verifiers.sandbox import Limits, run
from rewardsmith.verifiers.types import Sample, Verdict

# ----------------------------------------------------------------------------- (a) Blender

EDITS: dict[str, list[tuple[str, str]]] = {
    "red_box": [
        ("", ""),
        ("(0.8, 0.05, 0.05, 1.0)", "(0.05, 0.05, 0.8, 1.0)"),
        ("box.scale = (1.5, 1.0, 0.5)", "box.scale = (1.5, 1.0, 0.8)"),
        ("camera.data.lens = 50", "camera.data.lens = 85"),
        ("bpy.context.scene.collection.objects.link(sun)", "pass"),
        ("import bpy", "import bpy\nbpy.data.objects['missing'].name = 'x'"),
        ("import bpy", "import bpy\ndef broken(:"),
        ("sun.data.energy = 3.0", "sun.data.energy = 30.0"),
        ("import bpy", "import bpy\nbpy.ops.mesh.primitive_uv_sphere_add(location=(4, 0, 1))"),
        ('Roughness"].default_value = 0.4', 'Roughness"].default_value = 0.9'),
    ],
    "gold_sphere": [
        ("", ""),
        ('Metallic"].default_value = 1.0', 'Metallic"].default_value = 0.0'),
        ("500.0", "50.0"),
        ("camera.location = (0, -8, 3)", "camera.location = (0, -10, 3)"),
        ('ball.modifiers.new("Smooth", "SUBSURF").levels = 1', "pass"),
    ],
}


def blender_samples(n: int) -> list[Sample]:
    """`n` samples cycling through the variants, each script made distinct by a comment."""
    tasks = {t.id: t for t in load_tasks()}
    variants: list[tuple[Task, str]] = []
    for task_id, edits in EDITS.items():
        task = tasks[task_id]
        for old, new in edits:
            assert old in task.scripts[0], (task_id, old)
            variants.append((task, task.scripts[0].replace(old, new, 1)))
    samples = []
    for k in range(n):
        task, script = variants[k % len(variants)]
        samples.append(task.sample([f"# sample {k}\n{script}"]))
    return samples


# Its path, without importing it here (importing it imports bpy and starts Cycles).
_SPEC = importlib.util.find_spec("rewardsmith.verifiers.blender._inside")
assert _SPEC is not None and _SPEC.origin is not None
_INSIDE = Path(_SPEC.origin)
_FRESH = "import sys; sys.path.insert(0, '/box'); import _inside; _inside.{call}"


def _fresh_modules() -> dict[str, bytes]:
    """`_inside.py` and the two modules it imports, as flat files in the jail's /box (the
    fresh interpreter imports them by file name, as it imports `_inside` itself)."""
    files = {}
    for name in ("_inside", "_view", "_truth"):
        text = (_INSIDE.parent / f"{name}.py").read_text(encoding="utf-8")
        for other in ("_view", "_truth"):
            text = text.replace(f"from rewardsmith.verifiers.blender.{other} ", f"from {other} ")
        files[f"{name}.py"] = text.encode()
    return files


def fresh_run(
    scripts: list[str], limits: Limits, size: int, samples: int, views: list[dict[str, Any]]
) -> BlenderRun:
    """The same two phases, each in a fresh interpreter that imports bpy itself."""
    inside = _fresh_modules()
    n = len(scripts)
    files = {**inside, **{f"step_{k}.py": s.encode() for k, s in enumerate(scripts)}}
    blends = tuple(f"step_{k}.blend" for k in range(n))
    call = f"run_steps({n})"
    build = run(
        ["python3", "-c", _FRESH.format(call=call)], files=files, limits=limits, collect=blends
    )
    if not build.ok or build.missing:
        return BlenderRun(build)
    call = f"inspect_blends({n}, {size}, {samples}, {json.dumps(views)!r})"
    view_files = tuple(f"view_{k}.png" for k in range(len(views)))
    collect = ("scene.json", "preview.png", *view_files) if size else ("scene.json",)
    inspect = run(
        ["python3", "-c", _FRESH.format(call=call)],
        files={**inside, **build.files},
        limits=limits,
        collect=collect,
    )
    raw = inspect.files.get("scene.json")
    if not inspect.ok or raw is None:
        return BlenderRun(build, inspect)
    rendered = tuple(inspect.files.get(name) for name in view_files)
    steps = json.loads(raw)["steps"]
    return BlenderRun(build, inspect, steps, inspect.files.get("preview.png"), rendered)


def fresh_verdict(verifier: BlenderScene, sample: Sample) -> Verdict:
    """`verifier(sample)` with fresh interpreters instead of the warm server."""
    spec, base = _load_spec(sample.reference)
    assert not isinstance(spec, str), spec
    scripts = [extract_script(step.action) for step in sample.steps]
    size = spec.image.size if spec.image else 0
    samples = spec.image.samples if spec.image else 16
    limits = Limits(
        wall_s=verifier.wall_s, cpu_s=verifier.wall_s, memory_bytes=verifier.memory_bytes
    )
    views = (
        [v.model_dump(include={"location", "look_at"}) for v in spec.image.views]
        if spec.image
        else []
    )
    return verifier._judge(fresh_run(scripts, limits, size, samples, views), spec, base)


def bench_blender(n: int, workers: int) -> list[str]:
    samples = blender_samples(n)
    verifier = BlenderScene(wall_s=60)
    verifier(samples[0])  # start the warm server once, outside the timing
    ours, ours_s, fresh, fresh_s = interleaved(
        verifier, lambda s: fresh_verdict(verifier, s), samples, workers
    )
    statuses = sorted({v.status.value for v in ours})
    return [
        f"### (a) Blender scene verification, {n} scripts, {workers} workers, interleaved",
        "",
        "| runner | total s | samples/s | per sample ms |",
        "| --- | ---: | ---: | ---: |",
        row("warm forked server", ours_s, n),
        row("fresh `python` + `import bpy`", fresh_s, n),
        "",
        f"Throughput ratio: **{fresh_s / ours_s:.2f}x**. Same verdicts (status, score, failure): "
        f"{agreement(ours, fresh)}/{n}. Statuses seen: {', '.join(statuses)}.",
        "",
    ]


def bench_truth(n: int) -> list[str]:
    """(d) What the truth render costs per check: the same samples through the warm server
    with it and without it, alternating sample by sample (one worker)."""
    import os

    limits = Limits(wall_s=60, cpu_s=60, memory_bytes=2 << 30)
    spent = {48: 0.0, 0: 0.0}
    scripts = [[extract_script(s.steps[0].action)] for s in blender_samples(n)]
    run_scripts(scripts[0], limits)  # the warm server, started outside the timing
    for script in scripts:
        for size in (48, 0):
            start = time.perf_counter()
            run_scripts(script, limits, truth_size=size)
            spent[size] += time.perf_counter() - start
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    per = {k: 1000 * v / n for k, v in spent.items()}
    return [
        f"### (d) Truth render cost, {n} scripts, warm server, alternating, load {load}",
        "",
        "| inspection | per check ms |",
        "| --- | ---: |",
        f"| with the truth render (48 px, 4 samples, plus the index render) | {per[48]:.0f} |",
        f"| without it | {per[0]:.0f} |",
        "",
        f"Cost of the truth render: **{per[48] - per[0]:.0f} ms per check** "
        f"({per[48] / per[0]:.2f}x the check without it).",
        "",
    ]


# ----------------------------------------------------------------------------- (b) meshes


def torus(target_faces: int) -> trimesh.Trimesh:
    """A torus (major radius 1, minor 0.3) with about `target_faces` faces."""
    minor = max(3, int(np.sqrt(target_faces / 8)))
    major = max(3, target_faces // (2 * minor))
    return trimesh.creation.torus(1.0, 0.3, major_sections=major, minor_sections=minor)


def plain_chamfer(a: trimesh.Trimesh, b: trimesh.Trimesh, n: int, seed: int) -> float:
    """The straightforward version: default cKDTree, one thread, same seeded samples."""
    pa, _ = sample_points(a, n, seed)
    pb, _ = sample_points(b, n, seed + 1)
    d_ab = cKDTree(pb).query(pa)[0]
    d_ba = cKDTree(pa).query(pb)[0]
    return chamfer_from_distances(d_ab, d_ba)


def plain_voxel_iou(a: trimesh.Trimesh, b: trimesh.Trimesh, resolution: int = 64) -> float:
    """The straightforward voxel IoU: trimesh voxelisation, filled, on a shared grid."""
    low = np.minimum(a.bounds[0], b.bounds[0])
    pitch = float((np.maximum(a.bounds[1], b.bounds[1]) - low).max()) / resolution

    def cells(mesh: trimesh.Trimesh) -> set[tuple[int, int, int]]:
        points = mesh.voxelized(pitch).fill().points
        return set(map(tuple, np.floor((points - low) / pitch).astype(int).tolist()))

    ca, cb = cells(a), cells(b)
    return len(ca & cb) / len(ca | cb)


def clock(fn: Callable[[], Any], repeat: int = 3) -> tuple[Any, float]:
    """The value and the best of `repeat` wall times (the machine is shared and noisy)."""
    best, value = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - start)
    return value, best


def plain_queries(p: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return cKDTree(q).query(p)[0], cKDTree(p).query(q)[0]


def metrics_row(a: trimesh.Trimesh, b: trimesh.Trimesh, n_points: int) -> str:
    ours, t_ours = clock(lambda: our_surface_metrics(a, b, n_points=n_points, seed=0).chamfer)
    plain, t_plain = clock(lambda: plain_chamfer(a, b, n_points, 0))
    pa, _ = sample_points(a, n_points, 0)
    pb, _ = sample_points(b, n_points, 1)
    _, t_kd_ours = clock(lambda: nearest_both_ways(pa, pb))
    _, t_kd_plain = clock(lambda: plain_queries(pa, pb))
    exact, t_exact = clock(lambda: iou_exact(a, b))
    voxel, t_voxel = clock(lambda: plain_voxel_iou(a, b), repeat=1)
    fallback, t_fallback = clock(lambda: iou_voxel(a, b, 64))
    return (
        f"| {len(a.faces)} | {ours:.8f} | {plain:.8f} | {abs(ours - plain):.1e} "
        f"| {t_plain / t_ours:.2f}x | {t_kd_plain / t_kd_ours:.2f}x "
        f"| {exact:.4f} | {voxel:.4f} | {t_voxel / t_exact:.1f}x "
        f"| {fallback:.4f} | {t_voxel / t_fallback:.1f}x |"
    )


def bench_metrics(n_points: int) -> list[str]:
    lines = [
        f"### (b) Chamfer ({n_points} points a side) and IoU, torus vs moved torus",
        "",
        "| faces | CD ours | CD plain | abs diff | CD time ratio | KD part ratio "
        "| IoU exact (ours) | IoU voxel (plain) | IoU time ratio | IoU voxel (our fallback) "
        "| its time ratio |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for target in (1_000, 10_000, 50_000, 200_000):
        a = torus(target)
        b = a.copy()
        b.apply_translation([0.1, 0.0, 0.0])
        lines.append(metrics_row(a, b, n_points))
    lines += [
        "",
        "CD time ratio = plain / ours, over the whole metric call (ours also computes "
        "Hausdorff, F-score and normal consistency; both sample the surfaces); "
        "KD part ratio = the nearest-neighbour queries alone on the same points. "
        "IoU time ratios: plain voxel time over ours (exact; and our voxel fallback, "
        "same 64^3 grid).",
        "",
    ]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--samples", type=int, default=50)
    parser.add_argument("--points", type=int, default=100_000)
    parser.add_argument("--skip-blender", action="store_true")
    parser.add_argument("--skip-cad", action="store_true")
    parser.add_argument("--skip-metrics", action="store_true")
    parser.add_argument("--skip-truth", action="store_true")
    parser.add_argument("--cad-samples", type=int, default=0, help="every k-th of the 56 (0: all)")
    parser.add_argument("--skip-cad-runner", action="store_true", help="(c) end to end only")
    args = parser.parse_args()
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    load = Path("/proc/loadavg").read_text().split()[:3]
    report = [
        f"Run {stamp} on {platform.node()} ({platform.processor() or 'cpu'}), "
        f"load average at start {' '.join(load)}.",
        "",
    ]
    if not args.skip_blender:
        report += bench_blender(args.samples, args.workers)
    if not args.skip_truth:
        report += bench_truth(min(args.samples, 15))
    if not args.skip_cad:
        from mesh_cad import bench_cad  # beside this script; needs .venv-cad

        report += bench_cad(args.workers, args.cad_samples, not args.skip_cad_runner)
    if not args.skip_metrics:
        report += bench_metrics(args.points)
    report.append(
        f"Load average at the end: {' '.join(Path('/proc/loadavg').read_text().split()[:3])}."
    )
    print("\n".join(report))


if __name__ == "__main__":
    main()
