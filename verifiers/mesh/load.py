"""Load a mesh file that nobody vouches for: STL, OBJ, PLY, OFF or GLB, scenes flattened.

A mesh file written by a model (or by a model's script) is hostile data. Before trimesh
parses it we check that it is a regular file of an allowed format under a size cap, and
that the face count its header states (or a bounded count while reading, for formats that
state none: see `header.py`) is under the face cap; after, that its vertices are finite.
The caller still runs this in a killable worker (`rewardsmith.verifiers.killable`),
because a parser can hang or allocate without bound on inputs no cap catches.

    >>> import trimesh, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "box.stl")
    >>> _ = trimesh.creation.box().export(path)
    >>> len(load_mesh(path).faces)
    12
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import numpy as np
import trimesh

from rewardsmith.verifiers.mesh.header import stated_faces

__all__ = ["FORMATS", "MeshLoadError", "load_mesh"]

FORMATS = frozenset({"stl", "obj", "ply", "off", "glb"})
"""File types accepted, by extension (case-insensitive)."""


class MeshLoadError(ValueError):
    """The file is not a mesh we will read: wrong type, too large, empty or malformed."""


def _check_file(path: Path, max_bytes: int) -> str:
    suffix = path.suffix.lower().lstrip(".")
    if suffix not in FORMATS:
        raise MeshLoadError(f"{path.name}: type {suffix!r} is not one of {sorted(FORMATS)}")
    try:
        info = os.stat(path)  # follows links: what matters is the file actually read
    except OSError as exc:
        raise MeshLoadError(f"{path.name}: cannot stat ({exc.strerror})") from None
    if not stat.S_ISREG(info.st_mode):
        raise MeshLoadError(f"{path.name}: not a regular file")  # /dev/zero, a FIFO...
    if info.st_size == 0:
        raise MeshLoadError(f"{path.name}: empty file")
    if info.st_size > max_bytes:
        raise MeshLoadError(f"{path.name}: {info.st_size} bytes; the limit is {max_bytes}")
    return suffix


def load_mesh(
    path: str | os.PathLike[str], *, max_bytes: int = 64 << 20, max_faces: int = 2_000_000
) -> trimesh.Trimesh:
    """Read one mesh, flattening a multi-object scene into one mesh in world coordinates.

    Vertices are merged (STL stores each triangle's corners separately); no other repair is
    done, so the validity gates see the file as written. Raises `MeshLoadError`.
    """
    path = Path(path)
    suffix = _check_file(path, max_bytes)
    stated = stated_faces(path, suffix, max_faces)
    if stated is not None and stated > max_faces:
        raise MeshLoadError(
            f"{path.name}: states {stated} faces (or more); the limit is {max_faces}"
        )
    try:
        # force="mesh" applies each node's transform and concatenates: a GLB scene of
        # several parts becomes one mesh, as the issue asks ("scenes flattened").
        loaded = trimesh.load(str(path), file_type=suffix, force="mesh", process=False)
    except MemoryError:
        raise  # the file drove the worker past its memory: the caller's memory_limit
    except Exception as exc:  # trimesh raises many types on malformed files
        message = f"{path.name}: unreadable {suffix}: {type(exc).__name__}: {exc}"
        raise MeshLoadError(message[:400]) from None
    if not isinstance(loaded, trimesh.Trimesh) or len(loaded.faces) == 0:
        raise MeshLoadError(f"{path.name}: holds no triangles")
    if len(loaded.faces) > max_faces:
        raise MeshLoadError(f"{path.name}: {len(loaded.faces)} faces; the limit is {max_faces}")
    if not np.isfinite(loaded.vertices).all():
        raise MeshLoadError(f"{path.name}: has non-finite (NaN or infinite) vertex coordinates")
    if loaded.faces.min() < 0 or loaded.faces.max() >= len(loaded.vertices):
        raise MeshLoadError(f"{path.name}: a face refers to a vertex that does not exist")
    loaded.merge_vertices()
    return loaded
