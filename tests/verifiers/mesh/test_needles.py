"""Features with almost no area: needles that surface samples miss (red team, issue 21).

A pin 8 µm thick (of 60 mm) standing 2-4 mm into the 10 mm hole of the 60 x 40 x 5 plate held no
sample in three of five places and passed with score 1: samples are uniform by area, and
a needle has none. Its tip is a vertex, so the Hausdorff distance reads the vertices too.
Every row is another needle; none may earn anything, in either direction (the candidate
has a needle the reference lacks, or lacks the reference's). Right parts, tessellated
more finely or less, still pass.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import trimesh

from rewardsmith.verifiers.mesh import MeshCompare
from rewardsmith.verifiers.types import Sample, Status

SIZE = [60, 40, 5]


def plate(sections: int = 48) -> trimesh.Trimesh:
    block = trimesh.creation.box(bounds=[[0, 0, 0], SIZE])
    hole = trimesh.creation.cylinder(radius=5, height=20, sections=sections)
    hole.apply_translation([30, 20, 2.5])
    return trimesh.boolean.difference([block, hole], engine="manifold")


def with_pin(y: float, radius: float, length: float) -> trimesh.Trimesh:
    """The plate with a pin from the hole's wall at height 2.5 and `y`, `length` mm out."""
    wall = 30 - np.sqrt(25 - (y - 20) ** 2)
    pin = trimesh.creation.cylinder(
        radius=radius, segment=[[wall - 0.5, y, 2.5], [wall + length, y, 2.5]], sections=8
    )
    return trimesh.boolean.union([plate(), pin], engine="manifold")


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("needles")
    plate().export(out / "plate.stl")
    return out


def score(folder: Path, candidate: trimesh.Trimesh | str, reference: str = "plate.stl") -> Sample:
    path = folder / "candidate.stl"
    if isinstance(candidate, str):
        path = folder / candidate
    else:
        candidate.export(path)
    return MeshCompare(n_points=8000)(
        Sample(
            id="needle",
            completion=str(path),
            reference={"mesh": str(folder / reference), "dimensions": SIZE},
        )
    )


NEEDLES = [
    pytest.param(y, radius, length, id=f"y{y}-r{radius}-l{length}")
    for y, radius, length in [
        (16, 0.001, 2.0),
        (18, 0.001, 3.0),
        (20, 0.001, 4.0),
        (22, 0.002, 3.0),
        (24, 0.002, 1.5),
        (20, 0.0005, 1.0),
        (17, 0.0005, 2.0),
    ]
]


@pytest.mark.parametrize(("y", "radius", "length"), NEEDLES)
def test_a_needle_earns_nothing(folder: Path, y: float, radius: float, length: float) -> None:
    verdict = score(folder, with_pin(y, radius, length))
    assert verdict.score == 0.0, verdict.feedback
    assert verdict.evidence["raw"]["hausdorff"] > 0.005


def test_a_missing_needle_earns_nothing(folder: Path) -> None:
    with_pin(20, 0.004, 4.0).export(folder / "pinned.stl")
    verdict = score(folder, plate(), reference="pinned.stl")
    assert verdict.score == 0.0, verdict.feedback


@pytest.mark.parametrize("sections", [48, 32, 96], ids=["same", "coarser", "finer"])
def test_the_right_plate_passes_however_it_is_tessellated(folder: Path, sections: int) -> None:
    verdict = score(folder, plate(sections))
    assert verdict.status is Status.PASS, verdict.feedback
