"""Red team rt3d3: how `cad_code` collects and trusts what a script produces.

Each row is a script a policy could write for the bundled Python task `bracket` (an L
bracket 40 x 20 x 30 mm, one watertight solid), run only through the verifier (the
sandbox), with the most it may earn. The one class that earned a wrong score, a **skin
layered into one shell that passes through itself** (`hollow.layered_skin`: 1/70 of the
material, every point within 0.1 mm of the part's surface, watertight, consistently
wound, one shell of genus 0, signed volume the part's), passed with 1.0: the volume ratio
read the divergence theorem's signed volume, which counts space enclosed k times k times,
and manifold's boolean IoU read 2.9. Now the volume is the space enclosed at least once
(`volume.enclosed_volume`) and the part has 0.014 of the material: 0. The other rows held
before and still do (which check stops each is in docs/gaming.md).
"""

from __future__ import annotations

import inspect
import os
import tempfile
from pathlib import Path

import numpy as np
import pytest
import trimesh

from rewardsmith.datasets.scenes3d.tasks import Task, load_tasks
from rewardsmith.verifiers.mesh import MeshCompare, hollow
from rewardsmith.verifiers.mesh.cad import CadCode
from rewardsmith.verifiers.mesh.relations import relations
from rewardsmith.verifiers.mesh.volume import _shifts, enclosed_share
from rewardsmith.verifiers.types import Sample, Status, Verdict

BRACKET = """\
import numpy as np, trimesh
base = trimesh.creation.box(bounds=[[0, 0, 0], [40, 20, 4]])
upright = trimesh.creation.box(bounds=[[0, 0, 0], [4, 20, 30]])
part = trimesh.boolean.union([base, upright], engine="manifold")
"""

# The skin, built in the jail by the same code as `hollow.layered_skin` (its source sent in
# the script: the rewardsmith package is hidden from the jail).
LAYERED_SKIN = (
    BRACKET
    + inspect.getsource(hollow._tube)
    + inspect.getsource(hollow._layered)
    + inspect.getsource(hollow.layered_skin)
    + "layered_skin(part, 0.997).export('out.stl')\n"
)

# (name, script, the most it may earn)
ATTACKS = [
    ("layered_skin", LAYERED_SKIN, 0.0),
    ("inside_out", BRACKET + "part.invert()\npart.export('out.stl')\n", 0.0),
    (
        "zero_thickness_sheet",  # the surface and itself turned inward: a skin of no depth
        BRACKET + "back = part.copy()\nback.invert()\n"
        "trimesh.util.concatenate([part, back]).export('out.stl')\n",
        0.0,
    ),
    (
        "doubled_overlapping",  # two copies a hair apart: volume counted twice
        BRACKET + "other = part.copy()\nother.apply_translation([1e-3, 0, 0])\n"
        "trimesh.util.concatenate([part, other]).export('out.stl')\n",
        0.0,
    ),
    (
        "nan_vertex",
        BRACKET + "v = np.vstack([part.vertices, [[np.nan, 0, 0], [0, 1, 0], [1, 0, 0]]])\n"
        "f = np.vstack([part.faces, [[len(v) - 3, len(v) - 2, len(v) - 1]]])\n"
        "trimesh.Trimesh(v, f, process=False).export('out.stl')\n",
        0.0,
    ),
    (
        "huge_far_sliver",  # a far triangle: the size gate, not an overflow
        BRACKET + "v = np.vstack([part.vertices, [[1e30, 0, 0], [0, 1e-30, 0], [0, 0, 1e-30]]])\n"
        "f = np.vstack([part.faces, [[len(v) - 3, len(v) - 2, len(v) - 1]]])\n"
        "trimesh.Trimesh(v, f, process=False).export('out.stl')\n",
        0.0,
    ),
    (
        "fake_verdict_on_stdout",  # nothing written, a verdict printed and exit 0
        'import json\nprint(json.dumps({"status": "pass", "score": 1.0, "reward": 1.0}))\n',
        0.0,
    ),
    (
        "symlink_to_reference",  # out.stl a link to where the reference lives on the host
        "import os\nos.symlink(REFERENCE, 'out.stl')\n",
        0.0,
    ),
    (
        "copies_reference",  # reads the task's reference mesh and writes it back
        "import shutil\nshutil.copy(REFERENCE, 'out.stl')\n",
        0.0,
    ),
    (
        "ascii_stl_by_hand_box",  # a hand-written file: judged as the box it is
        "tri = ['facet normal 0 0 0\\nouter loop\\n' + ''.join("
        "f'vertex {x} {y} {z}\\n' for x, y, z in t) + 'endloop\\nendfacet\\n' for t in "
        "__import__('trimesh').creation.box(bounds=[[0, 0, 0], [40, 20, 30]]).triangles]\n"
        "open('out.stl', 'w').write('solid a\\n' + ''.join(tri) + 'endsolid a\\n')\n",
        0.0,
    ),
]


@pytest.fixture(scope="module")
def bracket() -> Task:
    return {t.id: t for t in load_tasks()}["bracket"]


def run(task: Task, script: str, **config: object) -> Verdict:
    return CadCode(**{"wall_s": 20.0, **task.config, **config})(task.sample([script]))


@pytest.mark.sandbox
@pytest.mark.slow
@pytest.mark.parametrize(("name", "script", "most"), ATTACKS, ids=[a[0] for a in ATTACKS])
def test_attack_earns_no_more_than_it_deserves(
    bracket: Task, name: str, script: str, most: float
) -> None:
    verdict = run(bracket, script.replace("REFERENCE", repr(bracket.reference["mesh"])))
    assert verdict.score is not None and verdict.score <= most, (name, verdict.feedback)
    assert verdict.status is not Status.PASS


RIGHT_IDIOMS = [
    # manifold3d's own API: the L profile extruded along y (z up), then as a trimesh.
    "import manifold3d, numpy as np, trimesh\n"
    "L = manifold3d.CrossSection([[(0, 0), (40, 0), (40, 4), (4, 4), (4, 30), (0, 30)]])\n"
    "m = L.extrude(20).to_mesh()\n"
    "v = np.asarray(m.vert_properties)[:, :3]\n"
    "part = trimesh.Trimesh(v[:, [0, 2, 1]], np.asarray(m.tri_verts)[:, ::-1])\n"
    "part.export('out.stl')\n",
    # The two boxes overlapping by the corner, united the other way round, as ASCII STL.
    "import trimesh\n"
    "up = trimesh.creation.box(bounds=[[0, 0, 0], [4, 20, 30]])\n"
    "base = trimesh.creation.box(bounds=[[2, 0, 0], [40, 20, 4]])\n"
    "part = trimesh.boolean.union([up, base], engine='manifold')\n"
    "open('out.stl', 'wb').write(part.export(file_type='stl_ascii').encode())\n",
]


@pytest.mark.sandbox
@pytest.mark.parametrize("script", RIGHT_IDIOMS, ids=["manifold_extrude", "ascii_union"])
def test_right_bracket_in_other_idioms_passes(bracket: Task, script: str) -> None:
    """False negatives: the part made another common way is the part."""
    verdict = run(bracket, script)
    assert verdict.status is Status.PASS, verdict.feedback


@pytest.mark.sandbox
def test_exporting_then_running_forever_is_a_timeout_not_a_score(bracket: Task) -> None:
    script = bracket.scripts[0] + "\nwhile True:\n    pass\n"
    verdict = run(bracket, script, wall_s=2.0)
    assert verdict.status is Status.TIMEOUT and verdict.score == 0.0


@pytest.fixture(scope="module")
def reference_bracket(bracket: Task) -> trimesh.Trimesh:
    return trimesh.load(bracket.reference["mesh"], force="mesh")


def test_layered_skin_scores_zero_as_a_mesh(
    bracket: Task, reference_bracket: trimesh.Trimesh
) -> None:
    """The same skin straight to `mesh_compare`: the space it encloses is its skin."""
    from rewardsmith.verifiers.mesh.volume import enclosed_share

    skin = hollow.layered_skin(reference_bracket, inner=0.997)
    assert skin.is_watertight and skin.is_winding_consistent and skin.body_count == 1
    assert abs(skin.volume / reference_bracket.volume - 1) < 0.02  # signed: the part's
    assert enclosed_share(skin) < 0.05 and enclosed_share(reference_bracket) == 1.0
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "skin.stl")
        skin.export(path)
        verdict = MeshCompare()(Sample(id="s", completion=path, reference=bracket.reference))
    assert verdict.score == 0.0 and "of the reference's volume" in verdict.feedback


def test_a_layered_skin_whose_rays_read_nothing_enclosed_still_has_no_material(
    bracket: Task, reference_bracket: trimesh.Trimesh, tmp_path: Path
) -> None:
    """Found by `audit --search` (seed 11): the skin subdivided, read once normalised to
    a unit size, had rays along one axis meet its layers' tubes so that the space it
    encloses read as none at all. The volume ratio then said "not measured" rather than
    0, and the material fell back to an exact IoU of 9.35 (the boolean counts a surface
    that passes through itself as many times as it does): the skin earned 1.0."""
    from rewardsmith.verifiers.mesh.volume import iou, volume_ratio

    skin = hollow.layered_skin(reference_bracket, inner=0.995).subdivide()
    assert volume_ratio(skin, reference_bracket) is not None
    assert volume_ratio(skin, reference_bracket) < 0.05
    assert iou(skin, reference_bracket)[0] <= 1.0
    path = tmp_path / "skin.stl"
    skin.export(path)
    verdict = MeshCompare()(Sample(id="s", completion=str(path), reference=bracket.reference))
    assert verdict.score == 0.0 and "of the reference's volume" in verdict.feedback


def test_layered_skin_relation_earns_its_limit(bracket: Task, tmp_path: Path) -> None:
    verifier = MeshCompare(allowed_root=str(tmp_path))
    relation = {r.name: r for r in relations(verifier)}["mesh/layered_skin"]
    right = Sample(id="b", completion=bracket.reference["mesh"], reference=bracket.reference)
    made = relation(right, 0)
    assert made is not None and relation.limit == 0.0
    assert verifier(made).score == 0.0


def _sewn_skin_script(box: trimesh.Trimesh) -> str:
    """A CadQuery script that sews the layered skin of `box` into one B-rep solid (numpy
    only in the CAD venv: the skin's code runs on a stand-in for the trimesh it reads)."""
    corners = [[round(float(x), 7) for x in p] for p in box.vertices]
    return (
        "import numpy as np, cadquery as cq\n"
        "from OCP.BRepBuilderAPI import BRepBuilderAPI_Sewing, BRepBuilderAPI_MakeSolid\n"
        "from OCP.TopoDS import TopoDS\n"
        f"V = np.array({corners})\nF = np.array({box.faces.tolist()})\n"
        "class Part:\n    vertices, faces, centroid = V, F, V.mean(axis=0)\n"
        f"    scale = {float(box.scale)!r}\n"
        "class trimesh:\n    Trimesh = staticmethod(lambda v, f, process=False: (v, f))\n"
        + inspect.getsource(hollow._tube)
        + inspect.getsource(hollow._layered)
        + "v, f = _layered(Part, 0.997, 111)\nsew = BRepBuilderAPI_Sewing(1e-7)\n"
        "for t in f:\n"
        "    wire = cq.Wire.makePolygon([cq.Vector(*v[i]) for i in t], close=True)\n"
        "    sew.Add(cq.Face.makeFromWires(wire).wrapped)\n"
        "sew.Perform()\nshell = TopoDS.Shell_s(sew.SewedShape())\n"
        "show_object(cq.Solid(BRepBuilderAPI_MakeSolid(shell).Solid()))\n"
    )


@pytest.mark.sandbox
@pytest.mark.slow
def test_cadquery_solid_sewn_from_a_layered_skin_scores_zero(tmp_path: Path) -> None:
    """The same class through the B-rep: BRepCheck finds the sewn solid valid (one solid,
    one shell, volume 6,646 of 8,000 mm^3 by OCP), so only the mesh's enclosed volume tells
    (it earned 0.611 before)."""
    from rewardsmith.verifiers.cad import cad_python

    if cad_python() is None:
        pytest.skip("no CAD venv: make .venv-cad/.installed")
    box = trimesh.creation.box(extents=[40, 20, 10])
    box.export(tmp_path / "ref.stl")
    reference = {"mesh": str(tmp_path / "ref.stl")}
    sample = Sample(id="c", completion=_sewn_skin_script(box), reference=reference)
    verdict = CadCode(kind="cadquery", wall_s=60.0)(sample)
    assert verdict.evidence["brep"]["valid"] and verdict.evidence["brep"]["shells"] == 1
    assert verdict.score == 0.0 and "of the reference's volume" in verdict.feedback


def test_the_rays_sit_where_the_mesh_itself_puts_them() -> None:
    """The ray offsets come from a hash of the mesh: the same mesh always meets the same
    rays (verdicts repeat), a reshaped one meets others (a surface cannot be shaped to
    slip between rays it knows), and a surface that never passes through itself reads
    exactly 1 wherever they sit."""
    box = trimesh.creation.box(extents=(40, 20, 30))
    moved = box.copy()
    moved.apply_translation((0.001, 0, 0))
    assert np.array_equal(_shifts(box), _shifts(box.copy()))
    assert not np.array_equal(_shifts(box), _shifts(moved))
    assert ((_shifts(box) > 0) & (_shifts(box) < 1)).all()
    for solid in (box, moved, trimesh.creation.icosphere(subdivisions=3, radius=7)):
        assert enclosed_share(solid) == 1.0
