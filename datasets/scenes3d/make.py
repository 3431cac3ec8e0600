"""Regenerate the reference meshes and preview images from the reference scripts.

    .venv/bin/python datasets/scenes3d/make.py

The CAD meshes are what the reference scripts write when run in the sandbox exactly as
`cad_code` runs a candidate; the block is made with trimesh; the preview is what
`blender_scene` renders for the reference script (Cycles, CPU, fixed seed: bit-identical
pixels from run to run), from the scene camera and from each extra view in its spec.
"""

from __future__ import annotations

import json

import trimesh

from rewardsmith.datasets.scenes3d.tasks import HERE
from rewardsmith.verifiers.blender.run import run_scripts
from rewardsmith.verifiers.sandbox import Limits, run_python

LIMITS = Limits(wall_s=60, memory_bytes=2 << 30)


def main() -> None:
    for name in ("bracket", "plate_hole"):
        script = (HERE / "scripts" / f"{name}.py").read_text()
        result = run_python(script, limits=LIMITS, collect=("out.stl",), preload=("trimesh",))
        assert result.ok, result.describe() + result.stderr.decode()
        (HERE / "meshes" / f"{name}.stl").write_bytes(result.files["out.stl"])
    block = trimesh.creation.box(bounds=[[-1, -0.5, 0], [1, 0.5, 0.5]])
    block.export(HERE / "meshes" / "block.stl")
    red_box = (HERE / "scripts" / "red_box.py").read_text()
    image = json.loads((HERE / "specs" / "red_box.json").read_text())["image"]
    views = [{"location": v["location"], "look_at": v["look_at"]} for v in image["views"]]
    run = run_scripts([red_box], LIMITS, preview_size=64, preview_samples=16, views=views)
    assert run.preview is not None, run.build.describe()
    (HERE / "previews" / "red_box.png").write_bytes(run.preview)
    for view, render in zip(image["views"], run.views, strict=True):
        assert render is not None, run.inspect
        (HERE / "specs" / view["reference"]).resolve().write_bytes(render)


if __name__ == "__main__":
    main()
