"""A CadQuery example's mesh compared with itself passes under every preset; bent or
hollowed, it fails (metamorphic: the same part is right, another part is not).

Regression: with exact point-to-surface measurement capped at 1,000 points a side, the
points past the cap kept upper bounds a face wide (Ex024's neighbouring slivers), so the
cadrille preset failed Ex024 against itself (Hausdorff read 0.0112, not 1e-3) and scored
Ex025 0.61. Ex024-Ex026 are always in the sample; the others every third, for time."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import trimesh

from rewardsmith.verifiers.cad import cad_python, run_cad
from rewardsmith.verifiers.mesh import MeshCompare
from rewardsmith.verifiers.mesh.compare import PRESETS
from rewardsmith.verifiers.mesh.hollow import hollowed
from rewardsmith.verifiers.mesh.validity import Validity
from rewardsmith.verifiers.sandbox import Limits
from rewardsmith.verifiers.types import Sample, Status, Verdict

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(cad_python() is None, reason="no CAD venv: make .venv-cad/.installed"),
]
LIMITS = Limits(wall_s=120, cpu_s=120, memory_bytes=2 << 30)
ALWAYS = ("Ex024", "Ex025", "Ex026")
SETTINGS: list[dict[str, Any]] = [{}, *({"preset": name} for name in PRESETS)]
EXAMPLES = sorted(
    (Path(__file__).resolve().parents[3].parent / "shared/data/cad/cadquery-examples").glob("*.py")
)
SAMPLED = [p.stem for i, p in enumerate(EXAMPLES) if p.stem[:5] in ALWAYS or i % 3 == 0]


@pytest.fixture(scope="module")
def meshes(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Each sampled example's mesh (the OCP kernel, in the sandbox), written once."""
    examples = shared_data / "cad" / "cadquery-examples"
    if not examples.is_dir():
        pytest.skip("no CadQuery examples in ../shared/data/cad/")
    folder = tmp_path_factory.mktemp("cad-self")
    for name in SAMPLED:
        run = run_cad((examples / f"{name}.py").read_text(), kind="cadquery", limits=LIMITS)
        assert run.mesh is not None, f"{name}: the script made no mesh"
        (folder / f"{name}.stl").write_bytes(run.mesh)
    return folder


def _judge(settings: dict[str, Any], candidate: Path, reference: Path) -> Verdict:
    sample = Sample(
        id=candidate.stem,
        completion=str(candidate),
        reference={"mesh": str(reference), "components": None},
    )
    return MeshCompare(**settings)(sample)


@pytest.mark.parametrize("name", SAMPLED)
def test_an_example_passes_against_itself_under_every_preset(meshes: Path, name: str) -> None:
    reference = meshes / f"{name}.stl"
    copy = meshes / f"{name}-copy.stl"
    shutil.copyfile(reference, copy)
    for settings in SETTINGS:
        verdict = _judge(settings, copy, reference)
        ramps = verdict.evidence["ramps"]
        assert all(r == 1.0 for r in ramps.values()), (settings, ramps, verdict.feedback)
        if verdict.status is not Status.PASS:
            # Only a validity gate the mesh fails on its own may stop it (Ex026's kernel
            # output is not watertight: the gate's business, not the distances').
            validity = verdict.evidence["reference"]["validity"]
            shared = Validity(**validity).problems(expected_components=None)
            assert shared and verdict.evidence["problems"] == shared, (settings, verdict)


def _bent(mesh: trimesh.Trimesh) -> trimesh.Trimesh:
    """The part bent along its longest axis: 1.25 % of its size at the middle."""
    out = mesh.copy()
    axis = int(np.argmax(out.extents))
    low, size = out.bounds[0][axis], out.extents[axis]
    across = (axis + 1) % 3
    along = (out.vertices[:, axis] - low) / size
    out.vertices[:, across] += 0.05 * size * along * (1 - along)
    return out


@pytest.mark.parametrize("name", [n for n in SAMPLED if n[:5] in ALWAYS])
def test_a_bent_or_hollowed_example_still_fails(meshes: Path, name: str) -> None:
    reference = meshes / f"{name}.stl"
    mesh = trimesh.load_mesh(reference)
    variants = {"bent": _bent(mesh)}
    if mesh.is_watertight:
        variants["hollowed"] = hollowed(mesh, wall=0.02 * float(max(mesh.extents)))
    for kind, variant in variants.items():
        path = meshes / f"{name}-{kind}.stl"
        variant.export(path)
        for settings in SETTINGS:
            verdict = _judge(settings, path, reference)
            assert verdict.status is Status.FAIL, (kind, settings, verdict.feedback)
