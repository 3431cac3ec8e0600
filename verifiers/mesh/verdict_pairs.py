"""The mesh pairs on which `mesh_compare`'s verdicts are pinned across a speed-up.

`benchmarks/mesh_verdicts.py` scores these with the code of an earlier commit and records
the verdicts (`tests/verifiers/mesh/data/verdicts_12af234.json`);
`tests/verifiers/mesh/test_verdicts_pinned.py` scores them with today's code and compares
(where the CAD kernel tessellated a part differently from the recording, against the base
code run there and then: `base_code`).
Two sets, each pair with the settings it is scored under:

- **bundled**: the 3D tasks' reference meshes (`datasets/scenes3d`), each against a copy of
  itself and itself turned and moved (a right answer in another pose), scored with the
  defaults and with ``align=True``, and against the first instance of every exploit class
  (`exploits.transformed_parts`: hollowed, scaled, mirrored, needles, ...) with the
  defaults;
- **cadquery**: CadQuery's examples (``../shared/data/cad/``) against their own meshes and
  the generated parts' one-feature variants against their parts, made on the OCP kernel
  in the sandbox (needs the CAD venv), scored as the CAD benchmark scores them
  (``preset="cadrille"``).
"""

from __future__ import annotations

import hashlib
import importlib
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import trimesh

__all__ = ["SETTINGS", "Pair", "base_code", "bundled_pairs", "cadquery_pairs", "digest"]

SETTINGS: dict[str, dict[str, Any]] = {
    "default": {},
    "align": {"align": True},
    "cadrille": {"preset": "cadrille"},
}
"""`MeshCompare` keyword arguments, by name."""


@dataclass(frozen=True)
class Pair:
    id: str
    candidate: str
    reference: dict[str, Any]
    settings: tuple[str, ...]


def digest(path: str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]


def _turned(mesh: trimesh.Trimesh) -> trimesh.Trimesh:
    out = mesh.copy()
    out.apply_transform(trimesh.transformations.rotation_matrix(np.pi / 2, [0, 0, 1]))
    out.apply_translation([3.0, -2.0, 1.0])
    return out


def bundled_pairs(folder: Path, per_class: int = 1) -> Iterator[Pair]:
    """See the module docstring; meshes written under `folder`."""
    from rewardsmith.datasets.scenes3d.tasks import load_tasks
    from rewardsmith.verifiers.mesh.exploits import transformed_parts
    from rewardsmith.verifiers.mesh.load import load_mesh

    for task in load_tasks():
        if task.verifier != "cad_code":
            continue
        reference = task.reference
        mesh = load_mesh(reference["mesh"])
        copy = folder / f"{task.id}_copy.stl"
        shutil.copyfile(reference["mesh"], copy)
        yield Pair(f"{task.id}/copy", str(copy), reference, ("default", "align"))
        turned = folder / f"{task.id}_turned.stl"
        _turned(mesh).export(turned)
        yield Pair(f"{task.id}/turned", str(turned), reference, ("default", "align"))
        seen: dict[str, int] = {}
        for exploit_class, _, out in transformed_parts(mesh, align=True, level=0.005):
            k = seen[exploit_class] = seen.get(exploit_class, 0) + 1
            if k > per_class:
                continue
            path = folder / f"{task.id}_{exploit_class.replace('/', '_')}_{k}.stl"
            out.export(path)
            yield Pair(f"{task.id}/{exploit_class}/{k}", str(path), reference, ("default",))


def cadquery_pairs(folder: Path, examples: Path) -> Iterator[Pair]:
    """See the module docstring; nothing when the CAD venv is missing."""
    from rewardsmith.datasets.scenes3d.parts import PARTS
    from rewardsmith.verifiers.cad import cad_python, run_cad
    from rewardsmith.verifiers.sandbox import Limits

    if cad_python() is None or not examples.is_dir():
        return
    limits = Limits(wall_s=120, cpu_s=120, memory_bytes=2 << 30)
    scripts: list[tuple[str, str, str]] = []
    for path in sorted(examples.glob("*.py")):
        scripts.append((path.stem, path.read_text(), path.read_text()))
    for part in PARTS:
        base = part.script()
        scripts.append((part.name, base, base))
        scripts += [(f"{part.name}-{k}", v, base) for k, v in part.variant_scripts().items()]
    meshes: dict[str, bytes] = {}  # each script built once: an example (or a part) and
    # its reference are one script, one mesh (as recorded: their digests are equal), written
    # to a file per role (a candidate that is the reference's own file is refused)
    made: dict[str, str] = {}
    for name, candidate, reference in scripts:
        for role, script in (("cand", candidate), ("ref", reference)):
            key = f"{role}:{script}"
            if key not in made:
                if script not in meshes:
                    run = run_cad(script, kind="cadquery", limits=limits)
                    assert run.mesh is not None, f"{name}: the script made no mesh"
                    meshes[script] = run.mesh
                path = folder / f"{role}_{hashlib.sha256(script.encode()).hexdigest()[:12]}.stl"
                path.write_bytes(meshes[script])
                made[key] = str(path)
        ref = {"mesh": made[f"ref:{reference}"], "components": None}
        yield Pair(f"cadquery/{name}", made[f"cand:{candidate}"], ref, ("cadrille",))


def base_code(commit: str, folder: Path, repo: Path) -> tuple[ModuleType, ModuleType]:
    """(compare, measure) of `commit`'s mesh package (``git show`` in `repo`), imported as
    ``rs_base_mesh`` from `folder`. Raises CalledProcessError without git or the commit."""
    package = folder / "rs_base_mesh"
    package.mkdir()
    listed = ["git", "ls-tree", "--name-only", commit, "verifiers/mesh/"]
    names = subprocess.run(listed, cwd=repo, check=True, capture_output=True, text=True)
    for name in names.stdout.split():
        if name.endswith(".py"):
            shown = ["git", "show", f"{commit}:{name}"]
            text = subprocess.run(shown, cwd=repo, check=True, capture_output=True, text=True)
            code = text.stdout.replace("rewardsmith.verifiers.mesh", "rs_base_mesh")
            (package / Path(name).name).write_text(code)
    sys.path.insert(0, str(folder))
    return (
        importlib.import_module("rs_base_mesh.compare"),
        importlib.import_module("rs_base_mesh.measure"),
    )
