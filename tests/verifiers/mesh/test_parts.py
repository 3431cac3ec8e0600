"""Generated parts (CadQuery in the sandbox): every one-feature difference fails, the same
part in another pose passes. These are the parts the pass levels were calibrated on
(`benchmarks/mesh_calibration.py`); the real parts are in test_pose, test_exploits and
test_cad_scripts."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from rewardsmith.datasets.scenes3d.parts import PARTS
from rewardsmith.verifiers.cad import cad_python, run_cad
from rewardsmith.verifiers.mesh import MeshCompare
from rewardsmith.verifiers.sandbox import Limits
from rewardsmith.verifiers.types import Sample, Status

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(cad_python() is None, reason="no CAD venv: make .venv-cad/.installed"),
]
LIMITS = Limits(wall_s=60, cpu_s=60, memory_bytes=2 << 30)
BY_NAME = {p.name: p for p in PARTS}
VARIANTS = [(p.name, v) for p in PARTS for v in p.variants]


@cache
def mesh_of(script: str) -> bytes:
    run = run_cad(script, kind="cadquery", limits=LIMITS)
    assert run.mesh is not None, run.build.stderr.decode()[-400:]
    return run.mesh


def compare(verifier: MeshCompare, candidate: str, reference: str, folder: Path) -> object:
    (folder / "cand.stl").write_bytes(mesh_of(candidate))
    (folder / "ref.stl").write_bytes(mesh_of(reference))
    sample = Sample(id="p", completion=str(folder / "cand.stl"), reference=str(folder / "ref.stl"))
    return verifier(sample)


@pytest.mark.slow
@pytest.mark.parametrize(("part", "variant"), VARIANTS, ids=[f"{p}-{v}" for p, v in VARIANTS])
def test_every_one_feature_difference_fails(tmp_path: Path, part: str, variant: str) -> None:
    base = BY_NAME[part]
    verdict = compare(
        MeshCompare(n_points=8000), base.variant_scripts()[variant], base.script(), tmp_path
    )
    assert verdict.status is Status.FAIL and verdict.score == 0.0, verdict.feedback


@pytest.mark.slow
@pytest.mark.parametrize("part", ["plate_hole", "bracket", "slot_plate"])
def test_the_part_turned_in_its_script_passes(tmp_path: Path, part: str) -> None:
    base = BY_NAME[part]
    turned = base.script(extra="result = result.rotate((0, 0, 0), (1, 1, 0), 37)\n")
    verdict = compare(MeshCompare(align=True), turned, base.script(), tmp_path)
    assert verdict.status is Status.PASS, verdict.feedback
    # The mirror of a plate whose features go through it is the plate turned over.
    for name, script in base.same_scripts().items():
        same = compare(MeshCompare(align=True), script, base.script(), tmp_path)
        assert same.status is Status.PASS, (name, same.feedback)
