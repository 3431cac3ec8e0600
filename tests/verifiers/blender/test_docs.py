"""The examples in docs/3d.md and the module docstrings run and say what they claim."""

from __future__ import annotations

import doctest
import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_docs import skip_without_shared_data

DOC = Path(__file__).resolve().parents[3] / "docs" / "3d.md"
MODULES = [
    "rewardsmith.verifiers.mesh.load",
    "rewardsmith.verifiers.mesh.header",
    "rewardsmith.verifiers.mesh.topology",
    "rewardsmith.verifiers.mesh.distance",
    "rewardsmith.verifiers.mesh.thresholds",
    "rewardsmith.verifiers.mesh.validity",
    "rewardsmith.verifiers.mesh.metrics",
    "rewardsmith.verifiers.mesh.volume",
    "rewardsmith.verifiers.mesh.align",
    "rewardsmith.verifiers.mesh.compare",
    "rewardsmith.verifiers.mesh.cad",
    "rewardsmith.verifiers.blender.check",
    "rewardsmith.verifiers.blender.image",
    "rewardsmith.verifiers.blender.scene",
    "rewardsmith.datasets.scenes3d.tasks",
    "rewardsmith.datasets.scenes3d.parts",
    "rewardsmith.cli.cad_report",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0


@pytest.mark.slow
@pytest.mark.blender
@pytest.mark.sandbox
def test_docs_page_examples_run(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(DOC.parents[1])  # the examples use paths relative to the repo root
    skip_without_shared_data(DOC.read_text(), f"the examples of {DOC.name}")
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.DOTALL)
    assert len(blocks) == 4
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), {})
    out = capsys.readouterr().out
    assert out.count(" pass 1.0") >= 6  # every bundled reference solution passes
    assert "fail 0.0 0.875" in out  # the 7/8 cube example: an octant is a feature
    assert "[0.17857142857142858, 0.5, 0.75, 1.0]" in out  # the staged crate
    from rewardsmith.verifiers.cad import cad_python

    if cad_python() is not None:  # the CadQuery example
        assert "with hole pass 1.0" in out and "without fail 0.0" in out


def test_public_surface_is_pinned() -> None:
    import rewardsmith.verifiers.blender as blender
    import rewardsmith.verifiers.mesh as mesh

    assert mesh.__all__ == [
        "Alignment", "MeshCompare", "MeshLoadError", "SurfaceMetrics", "Thresholds",
        "Topology", "Validity", "align_pair", "check_validity", "iou", "iou_exact",
        "iou_voxel", "load_mesh", "measure_topology", "normalise", "surface_metrics",
    ]  # fmt: skip
    assert blender.__all__ == [
        "STAGES", "BlenderScene", "Check", "SceneSpec", "check_scene", "extract_script",
        "psnr", "ssim", "stage_scores", "staged_score",
    ]  # fmt: skip
    # Importing the packages (and the registry's entries) never loads Blender in the scorer.
    code = (
        "import sys, rewardsmith.verifiers.blender, rewardsmith.verifiers.mesh.cad; "
        "assert 'bpy' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
