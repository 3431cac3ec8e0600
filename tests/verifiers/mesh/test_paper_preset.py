"""``preset="cadrille"`` reproduces cadrille's Chamfer distance; ``rewardsmith cad-report``
gives the papers' set figures.

cadrille's evaluate.py (github.com/col14m/cadrille): the prediction's bounding-box centre to
the origin, scaled by 1 / its longest side, moved by +0.5 (into [0, 1]^3), against a ground
truth normalised the same way; 8,192 points sampled on each surface; with cKDTree nearest
distances d, ``CD = mean(d_gt->pred^2) + mean(d_pred->gt^2)``; reported x 1000. Below it is
written again from that definition with scipy, independently of our code, on the same
seeded samples, and checked by hand where the answer is known in closed form.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import trimesh
from scipy.spatial import cKDTree
from typer.testing import CliRunner

from rewardsmith.cli.main import app
from rewardsmith.datasets.scored import SCORE_COLUMN
from rewardsmith.verifiers.mesh import MeshCompare
from rewardsmith.verifiers.types import Sample


def cadrille_normalised(mesh: trimesh.Trimesh) -> trimesh.Trimesh:
    out = mesh.copy()
    out.apply_translation(-(out.bounds[0] + out.bounds[1]) / 2.0)
    out.apply_scale(1.0 / np.max(out.extents))
    out.apply_translation([0.5, 0.5, 0.5])
    return out


def cadrille_chamfer(gt: trimesh.Trimesh, pred: trimesh.Trimesh, seed: int) -> float:
    """Their formula, with our verifier's sample streams (candidate `seed`, reference +1)."""
    pred_points, _ = trimesh.sample.sample_surface(cadrille_normalised(pred), 8192, seed=seed)
    gt_points, _ = trimesh.sample.sample_surface(cadrille_normalised(gt), 8192, seed=seed + 1)
    gt_distance, _ = cKDTree(gt_points).query(pred_points, k=1)
    pred_distance, _ = cKDTree(pred_points).query(gt_points, k=1)
    return float(np.mean(np.square(gt_distance)) + np.mean(np.square(pred_distance)))


def shifted_cube(d: float) -> trimesh.Trimesh:
    return trimesh.creation.box(bounds=[[d, 0, 0], [1 + d, 1, 1]])


def spheres(r: float) -> trimesh.Trimesh:
    # Two concentric spheres, radii 1 and r, as one part: normalisation keeps both sizes.
    outer = trimesh.creation.icosphere(subdivisions=5, radius=1.0)
    inner = trimesh.creation.icosphere(subdivisions=5, radius=r)
    inner.invert()
    return trimesh.util.concatenate([outer, inner])


# (name, ground truth, prediction, closed-form Chamfer on the surfaces or None)
BOX = trimesh.creation.box
PAIRS = [
    ("same cube", BOX(), BOX(), 0.0),
    ("cube vs box 1 x 1 x 0.5", BOX(), BOX(extents=[1, 1, 0.5]), None),
    ("moved and scaled copy", BOX(extents=[4, 2, 1]),
     BOX(extents=[8, 4, 2]).apply_translation([5, 5, 5]), 0.0),
    ("torus vs annulus", trimesh.creation.torus(1.0, 0.3),
     trimesh.creation.annulus(0.7, 1.3, 0.6), None),
    ("shell radii 1 / 0.5 vs 1 / 0.6", spheres(0.5), spheres(0.6), None),
]  # fmt: skip


@pytest.mark.parametrize(("name", "gt", "pred", "by_hand"), PAIRS, ids=[p[0] for p in PAIRS])
def test_cadrille_preset_equals_their_definition(
    tmp_path: Path, name: str, gt: trimesh.Trimesh, pred: trimesh.Trimesh, by_hand: float | None
) -> None:
    gt_path, pred_path = tmp_path / "gt.stl", tmp_path / "pred.stl"
    gt.export(gt_path)
    pred.export(pred_path)
    verdict = MeshCompare(preset="cadrille")(
        Sample(id=name, completion=str(pred_path), reference=str(gt_path))
    )
    ours = verdict.evidence["raw"]["chamfer"]
    theirs = cadrille_chamfer(trimesh.load(gt_path), trimesh.load(pred_path), seed=0)
    assert verdict.evidence["raw"]["n_points"] == 8192
    assert ours == pytest.approx(theirs, rel=1e-9, abs=1e-15)
    if by_hand is not None:  # sampling noise only: two samples of one surface
        assert ours < 5e-4


def test_chamfer_of_two_offset_unit_cubes_by_hand(tmp_path: Path) -> None:
    # Normalisation puts a 1-cube and the same cube moved by d in the same place, so to see
    # an offset both are one part: a unit cube and a 1 x 1 x 1 cube apart are compared
    # within one bounding box. Simplest closed form: a unit square plate and the same plate
    # lifted by h inside one normalised frame; each point's nearest is straight across.
    h = 0.1
    plate = trimesh.creation.box(bounds=[[0, 0, 0], [1, 1, 1e-4]])
    lifted = trimesh.creation.box(bounds=[[0, 0, h], [1, 1, h + 1e-4]])
    frame = trimesh.creation.box(bounds=[[0, 0, 0], [1e-4, 1e-4, 1]])  # same bbox for both
    gt = trimesh.util.concatenate([plate, frame])
    pred = trimesh.util.concatenate([lifted, frame])
    gt.export(tmp_path / "gt.stl")
    pred.export(tmp_path / "pred.stl")
    verdict = MeshCompare(preset="cadrille", require_valid=False, check_topology=False)(
        Sample(
            id="plates", completion=str(tmp_path / "pred.stl"), reference=str(tmp_path / "gt.stl")
        )
    )
    # Each direction: a point on a plate is h (normalised: h / 1) from the other plate.
    assert verdict.evidence["raw"]["chamfer"] == pytest.approx(2 * h**2, rel=0.05)


def scored_dump(path: Path, rows: list[dict[str, object]]) -> Path:
    with path.open("w") as handle:
        for k, verdict in enumerate(rows):
            # A verdict as `score` writes it (cad-report reads rows with cli.runs.RunReader).
            score = verdict.get("score")
            status = {None: "error", 1.0: "pass", 0.0: "fail"}.get(score, "partial")  # type: ignore[call-overload]
            failure = {"infra": "crash", "model": "wrong_answer"}.get(str(verdict.get("fault")))
            verdict = {"version": "1", "status": status, "failure": failure, "elapsed_s": 0.0,
                       **verdict}  # fmt: skip
            reward = {"value": verdict.get("score"), "verdicts": {"shape": verdict}}
            row = {"id": str(k), "task": "cad", SCORE_COLUMN: reward}
            handle.write(json.dumps(row) + "\n")
    return path


def test_cad_report_gives_the_papers_set_figures(tmp_path: Path) -> None:
    def measured(cd: float, iou: float) -> dict[str, object]:
        return {"name": "cad_code", "score": 0.5, "fault": None,
                "evidence": {"raw": {"chamfer": cd, "iou": iou, "n_points": 8192}}}  # fmt: skip

    failed = {"name": "cad_code", "score": 0.0, "fault": "model", "evidence": {}}
    infra = {"name": "cad_code", "score": None, "fault": "infra", "evidence": {}}
    rows = [measured(1e-4, 0.9), measured(3e-4, 0.7), measured(9e-4, 0.5), failed, infra]
    path = scored_dump(tmp_path / "scored.jsonl", rows)
    out = tmp_path / "figures.json"
    result = CliRunner().invoke(app, ["cad-report", str(path), "--json", str(out)])
    assert result.exit_code == 0, result.output
    figures = json.loads(out.read_text())
    assert figures["samples"] == 4 and figures["valid"] == 3 and figures["not_scored"] == 1
    assert figures["invalidity_ratio"] == pytest.approx(0.25)
    assert figures["median_cd_x1000"] == pytest.approx(0.3)
    assert figures["mean_cd_x1000"] == pytest.approx((0.1 + 0.3 + 0.9) / 3)
    assert figures["mean_iou"] == pytest.approx(0.7) and figures["n_points"] == [8192]
    assert "median_cd_x1000" in result.output


def test_cad_report_says_when_there_is_nothing_to_report(tmp_path: Path) -> None:
    path = scored_dump(tmp_path / "none.jsonl", [{"name": "math", "score": 1.0, "evidence": {}}])
    result = CliRunner().invoke(app, ["cad-report", str(path)])
    assert result.exit_code != 0 and "no mesh_compare or cad_code verdicts" in result.output


def test_the_preset_is_validated() -> None:
    assert MeshCompare(preset="cadrille").n_points == 8192
    assert not MeshCompare(preset="cadrille").check_scale
    with pytest.raises(ValueError, match="preset must be one of"):
        MeshCompare(preset="deepcad")
    assert math.isclose(MeshCompare(preset="cadrille").fscore_tau, 0.02)
