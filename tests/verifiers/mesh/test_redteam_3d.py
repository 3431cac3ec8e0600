"""Red team rt3d: a way a wrong part earned reward, failing before its fix.

- A CadQuery "part" made of the right part's faces (one doubled) beside a token solid:
  the B-rep held one solid, the mesh gates are off for CAD kinds, the doubled face made the
  tessellation open (topology and the material gate skipped) and the voxel IoU filled the
  skin: it passed with 1.0 (0.938 against a B-rep reference). Faces outside any solid are
  refused now.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rewardsmith.verifiers.cad import cad_python, run_cad
from rewardsmith.verifiers.mesh.cad import CadCode
from rewardsmith.verifiers.sandbox import Limits
from rewardsmith.verifiers.types import Sample, Status

BLOCK = """
import cadquery as cq
result = cq.Workplane("XY").box(80.0, 60.0, 10.0)
show_object(result)
"""
SKIN = """
import cadquery as cq
faces = cq.Workplane("XY").box(80.0, 60.0, 10.0).val().Faces()
token = cq.Workplane("XY").box(1.0, 1.0, 0.1).translate((0, 0, 4.9)).val()
result = cq.Compound.makeCompound(faces + [faces[0], token])
show_object(result)
"""


@pytest.mark.sandbox
@pytest.mark.skipif(cad_python() is None, reason="no CAD venv: make .venv-cad/.installed")
def test_b_the_skin_of_a_part_beside_a_token_solid_earns_nothing(tmp_path: Path) -> None:
    made = run_cad(BLOCK, kind="cadquery", limits=Limits(wall_s=120, cpu_s=120))
    assert made.mesh is not None and made.brep is not None
    (tmp_path / "ref.stl").write_bytes(made.mesh)
    (tmp_path / "ref.brep").write_bytes(made.brep)
    verifier = CadCode(kind="cadquery", wall_s=120)
    for reference in (
        {"mesh": str(tmp_path / "ref.stl")},
        {"mesh": str(tmp_path / "ref.stl"), "brep": str(tmp_path / "ref.brep")},
    ):
        skin = verifier(Sample(id="skin", completion=SKIN, reference=reference))
        assert skin.score == 0.0, skin.feedback
        assert "outside any solid" in skin.feedback
        right = verifier(Sample(id="right", completion=BLOCK, reference=reference))
        assert right.status is Status.PASS, right.feedback
