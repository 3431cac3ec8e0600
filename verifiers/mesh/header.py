"""Refuse an oversized mesh from what its file says, before any parser builds it.

A hostile mesh can make a verifier spend its whole time limit parsing (a 1.3M-face STL took
about 55 s of a 60 s limit before the face cap refused it). Every format states or reveals
its size cheaply:

- **binary STL** states its face count in bytes 80-84, and its size must then be exactly
  ``84 + 50 n`` bytes (that is how a binary STL is told from an ASCII one);
- **PLY** and **OFF** state their counts in the header (``element face N``; ``nv nf ne``);
- **GLB** states each primitive's index count in its JSON chunk;
- **ASCII STL** and **OBJ** state nothing, so their faces are counted while the bytes are
  read in chunks (``facet`` and ``f`` lines), stopping as soon as the count passes the cap.

The file size itself is capped before this (`load.py`), so counting is bounded too.

    >>> import os, tempfile, trimesh
    >>> path = os.path.join(tempfile.mkdtemp(), "box.stl")
    >>> _ = trimesh.creation.box().export(path)
    >>> stated_faces(path, "stl", cap=1000)
    12
"""

from __future__ import annotations

import json
import re
import struct
from pathlib import Path

__all__ = ["stated_faces"]

_CHUNK = 1 << 20
_PLY_FACES = re.compile(rb"^element\s+face\s+(\d+)", re.MULTILINE)


def stated_faces(path: str | Path, suffix: str, cap: int) -> int | None:
    """Faces the file holds by its own account (counting stops past `cap`); None when the
    format says nothing readable (the parser then decides)."""
    path = Path(path)
    if suffix == "stl":
        binary = _binary_stl_faces(path)
        return binary if binary is not None else _count_lines(path, (b"facet",), cap)
    if suffix == "obj":
        return _count_lines(path, (b"f ", b"f\t"), cap)
    if suffix == "ply":
        match = _PLY_FACES.search(_head(path))
        return int(match.group(1)) if match else None
    if suffix == "off":
        return _off_faces(_head(path))
    if suffix == "glb":
        return _glb_faces(path)
    return None


def _head(path: Path, size: int = 64 << 10) -> bytes:
    with path.open("rb") as handle:
        return handle.read(size)


def _binary_stl_faces(path: Path) -> int | None:
    size = path.stat().st_size
    if size < 84:
        return None
    with path.open("rb") as handle:
        handle.seek(80)
        (count,) = struct.unpack("<I", handle.read(4))
    return count if size == 84 + 50 * count else None


def _count_lines(path: Path, starts: tuple[bytes, ...], cap: int) -> int:
    """Lines that start (after blanks) with one of `starts`, read in chunks; stops past cap."""
    count, tail = 0, b""
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            lines = (tail + chunk).split(b"\n")
            tail = lines.pop()
            count += sum(1 for line in lines if line.lstrip().startswith(starts))
            if count > cap:
                return count
    return count + (1 if tail.lstrip().startswith(starts) else 0)


def _off_faces(head: bytes) -> int | None:
    numbers: list[int] = []
    for raw in head.split(b"\n")[:50]:
        line = raw.split(b"#")[0].strip()
        if not line or (line.upper().endswith(b"OFF") and not numbers):
            continue
        try:
            numbers = [int(x) for x in line.split()]
        except ValueError:
            return None
        break
    return numbers[1] if len(numbers) >= 2 else None


def _glb_faces(path: Path) -> int | None:
    head = _head(path, 20)
    if len(head) < 20 or head[:4] != b"glTF":
        return None
    (json_length,) = struct.unpack("<I", head[12:16])
    if json_length > path.stat().st_size:
        return None
    with path.open("rb") as handle:
        handle.seek(20)
        try:
            document = json.loads(handle.read(json_length))
            return _gltf_faces(document)
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            return None


def _gltf_faces(document: dict) -> int:
    """Faces of every mesh instance: a mesh used by many nodes is flattened many times."""
    accessors = document.get("accessors", [])
    per_mesh = []
    for mesh in document.get("meshes", []):
        faces = 0
        for primitive in mesh.get("primitives", []):
            index = primitive.get("indices", primitive.get("attributes", {}).get("POSITION"))
            faces += int(accessors[index]["count"]) // 3
        per_mesh.append(faces)
    nodes = [n["mesh"] for n in document.get("nodes", []) if "mesh" in n]
    return sum(per_mesh[i] for i in nodes) if nodes else sum(per_mesh)
