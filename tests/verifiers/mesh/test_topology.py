"""Topology by hand: shells, Euler characteristic, genus (through-holes)."""

from __future__ import annotations

from pathlib import Path

import pytest
import trimesh

from rewardsmith.verifiers.mesh import Topology, load_mesh, measure_topology


def plate(holes: int, blind: bool = False) -> trimesh.Trimesh:
    part = trimesh.creation.box(bounds=[[0, 0, 0], [60, 20, 5]])
    for k in range(holes):
        drill = trimesh.creation.cylinder(radius=3, height=4 if blind else 20, sections=24)
        drill.apply_translation([10 + 15 * k, 10, 4 if blind else 2.5])
        part = trimesh.boolean.difference([part, drill], engine="manifold")
    return part


@pytest.mark.parametrize(
    ("mesh", "shells", "genus"),
    [
        (trimesh.creation.box(), 1, 0),
        (trimesh.creation.icosphere(), 1, 0),
        (trimesh.creation.torus(2.0, 0.5), 1, 1),
        (plate(1), 1, 1),
        (plate(3), 1, 3),
        (plate(3, blind=True), 1, 0),  # blind holes are not handles
        (trimesh.util.concatenate([trimesh.creation.box(), plate(2)]), 2, 2),
    ],
    ids=["box", "sphere", "torus", "plate 1 hole", "plate 3 holes", "3 blind holes", "two parts"],
)
def test_genus_and_shells_by_hand(mesh: trimesh.Trimesh, shells: int, genus: int) -> None:
    found = measure_topology(mesh)
    assert (found.shells, found.genus, found.closed) == (shells, genus, True)
    assert found.euler == 2 * shells - 2 * genus


def test_a_solid_with_a_void_has_two_shells() -> None:
    outer = trimesh.creation.box(extents=[4, 4, 4])
    inner = trimesh.creation.box(extents=[2, 2, 2])
    inner.invert()  # the cavity's faces point into the void
    found = measure_topology(trimesh.util.concatenate([outer, inner]))
    assert (found.shells, found.genus) == (2, 0)


@pytest.mark.parametrize(
    "name", ["angle_block.STL", "plate_holes.STL", "featuretype.STL", "tube.obj", "box.STL"]
)
def test_real_parts_agree_with_trimeshs_euler_number(shared_data: Path, name: str) -> None:
    mesh = load_mesh(shared_data / "meshes" / name)
    found = measure_topology(mesh)
    assert found.closed and found.euler == mesh.euler_number  # an independent count
    assert found.genus == (2 * found.shells - mesh.euler_number) // 2 >= 1  # each has holes


def test_open_surfaces_have_no_genus(shared_data: Path) -> None:
    for name in ("soup.stl", "teapot.stl"):
        found = measure_topology(load_mesh(shared_data / "meshes" / name))
        assert found.genus is None and not found.closed


def test_differences_are_sentences_and_open_meshes_are_left_to_distances() -> None:
    one, two = Topology(1, 0, 1, True), Topology(1, -2, 2, True)
    assert two.differences(one) == ["part has 2 through-holes (genus); the reference has 1"]
    assert Topology(3, 1, None, False).differences(one) == []
