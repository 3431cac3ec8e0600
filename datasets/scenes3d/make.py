"""Regenerate the reference meshes and preview images from the reference scripts.

    .venv/bin/python datasets/scenes3d/make.py

The CAD meshes are what the reference scripts write when run in the sandbox exactly as
`cad_code` runs a candidate; the block is made with trimesh; the preview is what
`blender_scene` renders for the reference script (Cycles, CPU, fixed seed: bit-identical
pixels from run to run).
"""

from __future__ import annotations

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
    run = run_scripts([red_box], LIMITS, preview_size=64, preview_samples=16)
    assert run.preview is not None, run.build.describe()
    (HERE / "previews" / "red_box.png").write_bytes(run.preview)


if __name__ == "__main__":
    main()
