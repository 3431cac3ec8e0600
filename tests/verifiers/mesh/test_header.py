"""Oversized meshes are refused from what the file says, before trimesh parses it."""

from __future__ import annotations

import json
import struct
import time
from pathlib import Path

import pytest
import trimesh

from rewardsmith.verifiers.mesh import MeshCompare
from rewardsmith.verifiers.mesh.header import stated_faces
from rewardsmith.verifiers.mesh.load import MeshLoadError, load_mesh
from rewardsmith.verifiers.types import Failure, Sample, Status


def binary_stl(path: Path, faces: int) -> Path:
    """A binary STL of `faces` zero triangles: the header states them, the size agrees."""
    with path.open("wb") as handle:
        handle.write(b"\0" * 80 + struct.pack("<I", faces))
        handle.write(b"\0" * (50 * faces))
    return path


@pytest.mark.parametrize("fmt", ["stl", "obj", "ply", "off", "glb"])
def test_every_format_states_its_faces(tmp_path: Path, fmt: str) -> None:
    mesh = trimesh.creation.icosphere(subdivisions=2)  # 320 faces
    path = tmp_path / f"ball.{fmt}"
    mesh.export(path)
    assert stated_faces(path, fmt, cap=10_000) == 320


def test_ascii_stl_and_obj_are_counted_while_reading(tmp_path: Path) -> None:
    mesh = trimesh.creation.icosphere(subdivisions=3)  # 1280 faces
    ascii_stl = tmp_path / "ball.stl"
    ascii_stl.write_bytes(trimesh.exchange.stl.export_stl_ascii(mesh).encode())
    assert stated_faces(ascii_stl, "stl", cap=10_000) == 1280
    # Counting stops soon after the cap: the rest of the file is never scanned.
    assert 100 < stated_faces(ascii_stl, "stl", cap=100) <= 1280


def test_a_header_stating_too_many_faces_is_refused_at_once(tmp_path: Path) -> None:
    path = binary_stl(tmp_path / "big.stl", 300_000)  # 15 MB of triangles
    start = time.perf_counter()
    with pytest.raises(MeshLoadError, match="states 300000 faces"):
        load_mesh(path, max_faces=200_000)
    assert time.perf_counter() - start < 5  # generous: parsing it is what must not happen


def test_the_verifier_refuses_it_as_the_models_format_failure(tmp_path: Path) -> None:
    big = binary_stl(tmp_path / "big.stl", 300_000)
    reference = tmp_path / "ref.stl"
    trimesh.creation.box().export(reference)
    verdict = MeshCompare(max_faces=200_000)(
        Sample(id="big", completion=str(big), reference=str(reference))
    )
    assert verdict.status is Status.FAIL and verdict.failure is Failure.FORMAT
    assert "states 300000 faces" in verdict.feedback and verdict.score == 0.0


def instanced_glb(path: Path, copies: int) -> Path:
    """A GLB whose one mesh (80 faces) is placed by `copies` nodes."""
    data = trimesh.creation.icosphere(subdivisions=1).export(file_type="glb")
    (json_length,) = struct.unpack("<I", data[12:16])
    document = json.loads(data[20 : 20 + json_length])
    binary = data[20 + json_length :]
    document["nodes"] = [{"mesh": 0, "translation": [3.0 * k, 0, 0]} for k in range(copies)]
    document["scenes"] = [{"nodes": list(range(copies))}]
    text = json.dumps(document).encode()
    text += b" " * (-len(text) % 4)
    body = struct.pack("<II", len(text), 0x4E4F534A) + text + binary
    path.write_bytes(b"glTF" + struct.pack("<II", 2, 12 + len(body)) + body)
    return path


def test_a_glb_instancing_one_mesh_many_times_counts_every_instance(tmp_path: Path) -> None:
    path = instanced_glb(tmp_path / "many.glb", 50)
    assert len(load_mesh(path).faces) == 50 * 80  # what the parser would build
    assert stated_faces(path, "glb", cap=10**6) == 50 * 80
    with pytest.raises(MeshLoadError, match="states 4000 faces"):
        load_mesh(path, max_faces=1000)


@pytest.mark.parametrize(
    "content", [b"\0" * 100, b"solid x\nfacet\n", b"ply\nformat ascii 1.0\n", b"OFF\nnonsense\n"]
)
def test_malformed_headers_never_crash(tmp_path: Path, content: bytes) -> None:
    for fmt in ("stl", "ply", "off", "glb", "obj"):
        path = tmp_path / f"bad.{fmt}"
        path.write_bytes(content)
        found = stated_faces(path, fmt, cap=1000)
        assert found is None or isinstance(found, int)
