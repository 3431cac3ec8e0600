"""CadQuery and build123d scripts, run on the OCP kernel in the sandbox, then compared.

Real parts: the 27 scripts of CadQuery's own examples (../shared/data/cad/), which end with
CQ-editor's ``show_object(result)``. Needs the CAD venv (``make .venv-cad/.installed``).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from rewardsmith.verifiers.cad import cad_python, run_cad
from rewardsmith.verifiers.mesh import MeshCompare
from rewardsmith.verifiers.mesh.cad import CadCode
from rewardsmith.verifiers.sandbox import Limits
from rewardsmith.verifiers.types import Failure, Sample, Status, Verdict

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(cad_python() is None, reason="no CAD venv: make .venv-cad/.installed"),
]
LIMITS = Limits(wall_s=60, cpu_s=60, memory_bytes=2 << 30)
EXAMPLES = sorted(
    p.name
    for p in (
        Path(__file__).resolve().parents[3].parent / "shared/data/cad/cadquery-examples"
    ).glob("*.py")
)


@pytest.fixture(scope="module")
def examples(shared_data: Path) -> Path:
    folder = shared_data / "cad" / "cadquery-examples"
    if not folder.is_dir():
        pytest.skip("no CadQuery examples in ../shared/data/cad/")
    return folder


@cache
def reference_of(script: str, folder: str) -> dict[str, object]:
    """The reference a task would ship: the part's mesh and B-rep, made by the same runner."""
    run = run_cad(script, kind="cadquery", limits=LIMITS)
    assert run.mesh is not None and run.brep is not None and run.report is not None
    target = Path(folder)
    (target / "ref.stl").write_bytes(run.mesh)
    (target / "ref.brep").write_bytes(run.brep)
    return {"mesh": str(target / "ref.stl"), "brep": str(target / "ref.brep")}


def judge(script: str, reference: object, kind: str = "cadquery", **config: object) -> Verdict:
    verifier = CadCode(kind=kind, **{"wall_s": 60.0, **config})  # type: ignore[arg-type]
    return verifier(Sample(id="cad", completion=script, reference=reference))


@pytest.mark.parametrize("name", EXAMPLES)
def test_every_cadquery_example_runs_and_its_brep_is_valid(examples: Path, name: str) -> None:
    run = run_cad((examples / name).read_text(), kind="cadquery", limits=LIMITS)
    assert run.build.ok, run.build.stderr.decode()[-500:]
    assert run.report is not None and run.report["valid"] and run.report["solids"] >= 1
    assert run.mesh is not None and len(run.mesh) > 84


@pytest.mark.slow
@pytest.mark.parametrize(
    "name",
    [
        "Ex019_Counter_Sunk_Holes.py",
        "Ex022_Revolution.py",
        "Ex100_Lego_Brick.py",
    ],
)
def test_an_example_against_its_own_reference_passes(
    examples: Path, tmp_path: Path, name: str
) -> None:
    script = (examples / name).read_text()
    verdict = judge(script, reference_of(script, str(tmp_path)))
    assert verdict.status is Status.PASS, verdict.feedback
    assert verdict.evidence["brep"]["brep_iou"] == pytest.approx(1.0, abs=1e-6)
    assert verdict.evidence["iou_source"] == "brep"


def test_the_block_and_the_block_with_a_hole_are_told_apart(examples: Path, tmp_path: Path) -> None:
    block = (examples / "Ex001_Simple_Block.py").read_text()
    holed = (examples / "Ex002_Block_With_Bored_Center_Hole.py").read_text()
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    for candidate, reference in ((block, reference_of(holed, str(tmp_path / "a"))),
                                 (holed, reference_of(block, str(tmp_path / "b")))):  # fmt: skip
        verdict = judge(candidate, reference)
        assert verdict.status is Status.FAIL and verdict.score == 0.0
        assert "through-holes" in verdict.feedback


def test_build123d_builds_the_same_part_as_cadquery(examples: Path, tmp_path: Path) -> None:
    reference = reference_of(
        (examples / "Ex002_Block_With_Bored_Center_Hole.py").read_text(), str(tmp_path)
    )
    builder = "from build123d import *\nwith BuildPart() as p:\n    Box(80, 60, 10)\n    Hole(11)\n"
    algebra = "from build123d import *\nresult = Box(80, 60, 10) - Cylinder(11, 10)\n"
    for script in (builder + "show_object(p)\n", algebra):
        verdict = judge(script, reference, kind="build123d")
        assert verdict.status is Status.PASS, verdict.feedback


BAD_SCRIPTS = [
    ("import cadquery as cq\nresult = cq.Workplane('XY').box(", Failure.COMPILE_ERROR, "Syntax"),
    ("import cadquery as cq\ncq.Workplane('XY').box(1, 1, 1).fillet(5)\nresult = 1/0",
     Failure.RUNTIME_ERROR, ""),
    ("import cadquery as cq\nx = cq.Workplane('XY').box(1, 1, 1)\n", Failure.FORMAT, "show"),
    ("open('out.stl', 'w').write('solid x\\nendsolid x\\n')\n", Failure.FORMAT, "show"),
    ("show_object(None)\n", Failure.FORMAT, "show"),
    ("", Failure.FORMAT, "show"),
    ("import os\nos._exit(0)\n", Failure.FORMAT, "show"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("script", "failure", "fragment"), BAD_SCRIPTS, ids=range(len(BAD_SCRIPTS))
)
def test_scripts_that_make_no_part_are_verdicts(
    tmp_path: Path, script: str, failure: Failure, fragment: str
) -> None:
    block = "import cadquery as cq\nshow_object(cq.Workplane('XY').box(10, 10, 10))\n"
    verdict = judge(script, reference_of(block, str(tmp_path)))
    assert verdict.failure is failure and verdict.score == 0.0
    assert fragment in verdict.feedback


def test_an_invalid_brep_scores_zero(tmp_path: Path) -> None:
    block = "import cadquery as cq\nshow_object(cq.Workplane('XY').box(10, 10, 5))\n"
    bowtie = (
        "import cadquery as cq\nresult = cq.Workplane().polyline("
        "[(0, 0), (10, 10), (10, 0), (0, 10)]).close().extrude(5)\nshow_object(result)\n"
    )
    verdict = judge(bowtie, reference_of(block, str(tmp_path)))
    assert verdict.status is Status.FAIL and verdict.score == 0.0
    assert "B-rep is invalid" in verdict.feedback and not verdict.evidence["brep"]["valid"]


def test_a_face_is_not_a_solid(tmp_path: Path) -> None:
    block = "import cadquery as cq\nshow_object(cq.Workplane('XY').box(10, 10, 5))\n"
    face = "import cadquery as cq\nshow_object(cq.Workplane('XY').box(10, 10, 5).faces('>Z'))\n"
    verdict = judge(face, reference_of(block, str(tmp_path)))
    assert verdict.status is Status.FAIL and "no solid" in verdict.feedback


def test_limits_end_in_the_models_verdicts(tmp_path: Path) -> None:
    block = "import cadquery as cq\nshow_object(cq.Workplane('XY').box(10, 10, 5))\n"
    reference = reference_of(block, str(tmp_path))
    loop = judge("import cadquery\nwhile True:\n    pass\n", reference, wall_s=3.0)
    assert loop.status is Status.TIMEOUT and loop.failure is Failure.TIME_LIMIT
    hog = judge(
        "chunks = []\nwhile True:\n    chunks.append(bytearray(64 << 20))\n",
        reference,
        memory_bytes=1 << 30,
    )
    assert hog.failure is Failure.MEMORY_LIMIT and hog.score == 0.0


def test_a_missing_reference_brep_is_a_data_error(tmp_path: Path) -> None:
    block = "import cadquery as cq\nshow_object(cq.Workplane('XY').box(10, 10, 5))\n"
    reference = {**reference_of(block, str(tmp_path)), "brep": str(tmp_path / "gone.brep")}
    verdict = judge(block, reference)
    assert verdict.failure is Failure.BAD_REFERENCE and verdict.score is None


def test_the_runner_leaves_the_cad_venv_out_of_the_scoring_process() -> None:
    import sys

    assert "cadquery" not in sys.modules and "OCP" not in sys.modules
    assert MeshCompare().name == "mesh_compare"
