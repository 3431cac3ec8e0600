"""Loading hostile mesh files and the validity gates, on the shared real meshes."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
import trimesh

from rewardsmith.verifiers.mesh.load import MeshLoadError, load_mesh
from rewardsmith.verifiers.mesh.validity import check_validity

# (file, expected problems as substrings; empty means valid). Measured facts about the files.
REAL_MESHES = [
    ("unit_cube.STL", []),
    ("7_8ths_cube.stl", []),  # holds a 0.00002-degree sliver: thin, not degenerate
    ("large_block.STL", []),
    ("angle_block.STL", []),
    ("fandisk.obj", []),
    ("ballA.off", []),
    # busted.STL, despite its name, is a closed genus-0 solid: exact shared vertices, Euler
    # characteristic 2, consistent outward winding, no edge crossing any face. Only its
    # stored facet normals are all zero, which STL readers ignore. The gate passes it.
    ("busted.STL", []),
    ("soup.stl", ["not watertight", "100 components"]),
    ("multibody.stl", ["winding is inconsistent", "2 components"]),
    ("not_convex.obj", ["not watertight"]),
    ("teapot.stl", ["not watertight", "3 components"]),
    ("box.STL", ["10 components"]),
]


@pytest.mark.parametrize(("name", "expected"), REAL_MESHES)
def test_gates_on_real_meshes(shared_data: Path, name: str, expected: list[str]) -> None:
    problems = check_validity(load_mesh(shared_data / "meshes" / name)).problems()
    assert len(problems) == len(expected), problems
    for fragment, problem in zip(expected, problems, strict=True):
        assert fragment in problem


def test_expected_component_count_is_honoured(shared_data: Path) -> None:
    report = check_validity(load_mesh(shared_data / "meshes" / "box.STL"))
    assert report.problems(expected_components=10) == []
    assert report.problems(expected_components=None) == []


def test_inward_normals_fail(tmp_path: Path) -> None:
    box = trimesh.creation.box()
    box.invert()
    path = tmp_path / "inside_out.stl"
    box.export(path)
    assert any("inward" in p for p in check_validity(load_mesh(path)).problems())


def test_degenerate_face_fails(tmp_path: Path) -> None:
    box = trimesh.creation.box()
    faces = [*box.faces.tolist(), [0, 0, 1]]  # a zero-area triangle
    path = tmp_path / "degenerate.obj"
    trimesh.Trimesh(box.vertices, faces, process=False).export(path)
    assert any("degenerate" in p for p in check_validity(load_mesh(path)).problems())


def _binary_stl_header(count: int) -> bytes:
    return b"\0" * 80 + struct.pack("<I", count)


# (file name, bytes, message fragment): each must end in MeshLoadError, never a crash.
HOSTILE_FILES = [
    ("empty.stl", b"", "empty file"),
    ("notes.txt", b"solid x", "is not one of"),
    ("garbage.stl", b"\x00\xff" * 500, None),
    ("liar.stl", _binary_stl_header(10**9) + b"\0" * 100, None),  # claims a billion faces
    ("nan.obj", b"v nan 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n", "non-finite"),
    ("inf.obj", b"v inf 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n", "non-finite"),
    ("no_faces.obj", b"v 0 0 0\nv 1 0 0\n", "no triangles"),
    ("bad_index.off", b"OFF\n3 1 0\n0 0 0\n1 0 0\n0 1 0\n3 0 1 7\n", None),
    ("text.ply", b"ply\nformat ascii 1.0\nelement vertex 99999999\nend_header\n", None),
    ("fake.glb", b"glTF" + b"\xff" * 64, None),
]


@pytest.mark.parametrize(("name", "data", "fragment"), HOSTILE_FILES)
def test_hostile_files_are_refused_cleanly(
    tmp_path: Path, name: str, data: bytes, fragment: str | None
) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(MeshLoadError, match=fragment):
        load_mesh(path)


def test_size_cap_is_checked_before_parsing(tmp_path: Path) -> None:
    path = tmp_path / "big.stl"
    trimesh.creation.icosphere(subdivisions=3).export(path)
    with pytest.raises(MeshLoadError, match="the limit is 1000"):
        load_mesh(path, max_bytes=1000)


def test_face_cap(tmp_path: Path) -> None:
    path = tmp_path / "many.stl"
    trimesh.creation.icosphere(subdivisions=3).export(path)
    with pytest.raises(MeshLoadError, match=r"states 1280 faces \(or more\); the limit is 100"):
        load_mesh(path, max_faces=100)


def test_special_files_are_refused(tmp_path: Path) -> None:
    link = tmp_path / "zero.stl"
    link.symlink_to("/dev/zero")  # endless data behind an allowed extension
    with pytest.raises(MeshLoadError, match="not a regular file"):
        load_mesh(link)


def test_glb_scene_is_flattened(tmp_path: Path) -> None:
    scene = trimesh.Scene()
    scene.add_geometry(
        trimesh.creation.box(), transform=trimesh.transformations.translation_matrix([5, 0, 0])
    )
    scene.add_geometry(trimesh.creation.box())
    path = tmp_path / "two.glb"
    scene.export(path)
    mesh = load_mesh(path)
    assert len(mesh.faces) == 24
    assert mesh.extents.tolist() == pytest.approx([6, 1, 1])
    assert check_validity(mesh).components == 2


@pytest.mark.parametrize("suffix", ["stl", "obj", "ply", "off", "glb"])
def test_every_supported_format_loads(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"box.{suffix}"
    trimesh.creation.box(extents=[3, 2, 1]).export(path)
    mesh = load_mesh(path)
    assert len(mesh.faces) == 12 and mesh.extents.tolist() == pytest.approx([3, 2, 1])
    assert check_validity(mesh).problems() == []
