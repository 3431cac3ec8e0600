"""Run a CadQuery or build123d script in the sandbox and read back its B-rep, mesh and report.

CadQuery and build123d need numpy 2, so they live in their own venv (``.venv-cad``, built by
``make .venv-cad/.installed``; or the interpreter named by ``REWARDSMITH_CAD_PYTHON``). A
warm sandbox server runs on that venv's interpreter with cadquery and build123d imported
once (`fork_server(python=...)`); each phase is a fresh jailed child forked from it:

1. ``build``: the model's script, with ``show_object`` defined, saves what it showed as a
   B-rep (``result.brep``);
2. ``inspect``: trusted code opens that file (and the reference B-rep, when there is one),
   checks it with ``BRepCheck``, measures it and tessellates it to STL (see `_inside.py`).

The scoring process only reads the bytes that come back.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from rewardsmith.verifiers.sandbox import Limits, Program, SandboxResult, fork_server

__all__ = ["PRELOAD", "CadRun", "Execute", "cad_python", "program_source", "run_cad", "venv_of"]

PRELOAD = ("cadquery", "build123d")
EXIT_NO_SHAPE = 5  # the same code as in _inside (not imported here: it imports OCP)
_INSIDE = (Path(__file__).parent / "_inside.py").read_text(encoding="utf-8")
_REPO = Path(__file__).resolve().parents[1].parent
_MAX_REPORT_BYTES = 1 << 20


@dataclass(frozen=True)
class CadRun:
    """What the two phases produced."""

    build: SandboxResult
    inspect: SandboxResult | None = None
    brep: bytes | None = None
    mesh: bytes | None = None
    report: dict[str, Any] | None = None


@cache
def cad_python() -> str | None:
    """The CAD venv's interpreter, or None when it is not installed."""
    named = os.environ.get("REWARDSMITH_CAD_PYTHON")
    candidate = Path(named) if named else _REPO / ".venv-cad" / "bin" / "python"
    return str(candidate) if candidate.is_file() else None


def venv_of(python: str) -> str:
    """The venv folder of an interpreter inside it (bound read-only into the jail)."""
    return str(Path(python).parent.parent.resolve())


def program_source(call: str) -> str:
    """The trusted source a phase runs: `_inside.py` and one call of it."""
    return f"{_INSIDE}\n{call}\n"


def _program(call: str, limits: Limits, **fields: Any) -> Program:
    return Program(python=program_source(call), limits=limits, trusted_code=True, **fields)


Execute = Callable[[Program], SandboxResult]
"""Runs one program in a jail: by default a child of the CAD venv's warm server."""


def run_cad(
    script: str,
    *,
    kind: str,
    limits: Limits,
    reference_brep: bytes | None = None,
    deflection: float = 5e-4,
    angular: float = 0.1,
    execute: Execute | None = None,
) -> CadRun:
    """Phase 1 then (when it left a B-rep) phase 2; see the module docstring.

    `deflection` is the tessellation's largest chord error as a fraction of the part's
    longest side; `angular` the largest angle between neighbouring facets, in radians.
    `execute` replaces the warm server (the benchmark runs each phase in a fresh process)."""
    python = cad_python()
    if python is None:
        missing = SandboxResult(
            exit_code=None,
            error="the CAD runtime is not installed: run `make .venv-cad/.installed` "
            "(or set REWARDSMITH_CAD_PYTHON to an interpreter with cadquery and build123d)",
        )
        return CadRun(missing)
    if execute is not None:
        return _phases(script, kind, limits, reference_brep, (deflection, angular), execute)
    with fork_server(PRELOAD, binds=(venv_of(python),), python=python) as server:
        return _phases(
            script,
            kind,
            limits,
            reference_brep,
            (deflection, angular),
            lambda program: server.run_programs([program])[0],
        )


def _phases(
    script: str,
    kind: str,
    limits: Limits,
    reference_brep: bytes | None,
    mesh_settings: tuple[float, float],
    execute: Execute,
) -> CadRun:
    files = {"main.py": script.encode("utf-8", "replace")}
    build = execute(_program(f"build({kind!r})", limits, files=files, collect=("result.brep",)))
    brep = build.files.get("result.brep")
    if not build.ok or brep is None:
        return CadRun(build)
    readonly = {"result.brep": brep}
    if reference_brep is not None:
        readonly["reference.brep"] = reference_brep
    deflection, angular = (float(x) for x in mesh_settings)
    call = f"inspect({deflection!r}, {angular!r})"
    inspect = execute(
        _program(call, limits, readonly_files=readonly, collect=("out.stl", "report.json"))
    )
    raw = inspect.files.get("report.json")
    if not inspect.ok or raw is None or len(raw) > _MAX_REPORT_BYTES:
        return CadRun(build, inspect, brep)
    return CadRun(build, inspect, brep, inspect.files.get("out.stl"), json.loads(raw))
