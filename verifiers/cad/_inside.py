"""Code that runs inside the sandboxed CAD children (the CAD venv's interpreter, OCP loaded).

Never imported by the scoring process: `run.py` sends this file's text, followed by one
call, as trusted source to a warm server of the CAD venv that has imported cadquery and
build123d, so no child pays for OCP. Two entry points, each in its own fresh child:

- `build(kind)` (phase 1, with the model's code): runs ``main.py`` with CQ-editor's
  ``show_object`` (and ``debug``) defined, takes what it showed (or a variable named
  ``result``), and writes it as an OCP B-rep, ``result.brep``. Exit 4: syntax error; 3: the
  script raised; 5: it showed no shape.
- `inspect(deflection, angular)` (phase 2, trusted code on hostile data, no model code in
  the process): reads ``result.brep``, checks it with ``BRepCheck_Analyzer``, counts solids,
  shells and faces, measures the volume, tessellates it to ``out.stl``, and when
  ``reference.brep`` is there and both are solids, measures the volume IoU of the two
  normalised B-reps (OCP boolean common). Writes ``report.json``.

Phase 2 runs in a different process from the model's code, so what is judged is the
geometry in the saved file, measured by code the script never touched.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from typing import Any

EXIT_SCRIPT_ERROR = 3
EXIT_SYNTAX_ERROR = 4
EXIT_NO_SHAPE = 5


def _shapes_of(obj: Any) -> list[Any]:
    """TopoDS shapes held by a CadQuery or build123d object (or a raw OCP shape)."""
    from OCP.TopoDS import TopoDS_Shape

    if isinstance(obj, TopoDS_Shape):
        return [obj]
    for attribute in ("part", "sketch", "line"):  # build123d builders
        held = getattr(obj, attribute, None)
        if held is not None and not callable(held) and hasattr(held, "wrapped"):
            return _shapes_of(held)
    if hasattr(obj, "vals") and callable(obj.vals):  # a cadquery Workplane
        return [s for v in obj.vals() for s in _shapes_of(v)]
    wrapped = getattr(obj, "wrapped", None)
    if isinstance(wrapped, TopoDS_Shape):
        return [wrapped]
    if isinstance(obj, list | tuple):
        return [s for item in obj for s in _shapes_of(item)]
    return []


def _compound(shapes: list[Any]) -> Any:
    from OCP.BRep import BRep_Builder
    from OCP.TopoDS import TopoDS_Compound

    if len(shapes) == 1:
        return shapes[0]
    compound, builder = TopoDS_Compound(), BRep_Builder()
    builder.MakeCompound(compound)
    for shape in shapes:
        builder.Add(compound, shape)
    return compound


def build(kind: str) -> None:
    """Phase 1: run the model's script and save what it showed (see the module docstring)."""
    with open("main.py", encoding="utf-8", errors="replace") as handle:
        source = handle.read()
    try:
        code = compile(source, "main.py", "exec")
    except (SyntaxError, ValueError) as exc:
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        sys.exit(EXIT_SYNTAX_ERROR)
    shown: list[Any] = []
    namespace = {
        "__name__": "__main__",
        "show_object": lambda obj, *args, **kwargs: shown.append(obj),
        "debug": lambda *args, **kwargs: None,
    }
    try:
        exec(code, namespace)
    except SystemExit as exc:
        if exc.code not in (None, 0):
            print(f"the script exited with {exc.code!r}", file=sys.stderr)
            sys.exit(EXIT_SCRIPT_ERROR)
    except BaseException:
        traceback.print_exc(limit=6)
        sys.exit(EXIT_SCRIPT_ERROR)
    chosen = shown or [namespace[n] for n in ("result", "part") if n in namespace][:1]
    shapes = [s for obj in chosen for s in _shapes_of(obj)]
    if os.path.exists("result.brep"):
        os.remove("result.brep")  # only the harness writes the judged file
    if not shapes:
        print(f"no {kind} shape: call show_object(result) or assign `result`", file=sys.stderr)
        sys.exit(EXIT_NO_SHAPE)
    from OCP.BRepTools import BRepTools

    BRepTools.Write_s(_compound(shapes), "result.brep")


# --------------------------------------------------------------------------- phase 2


def _read(path: str) -> Any:
    from OCP.BRep import BRep_Builder
    from OCP.BRepTools import BRepTools
    from OCP.TopoDS import TopoDS_Shape

    shape = TopoDS_Shape()
    if not BRepTools.Read_s(shape, path, BRep_Builder()) or shape.IsNull():
        raise ValueError(f"{path} holds no readable B-rep")
    return shape


def _count(shape: Any, kind: Any, outside: Any = None) -> int:
    """Sub-shapes of `kind`; with `outside`, only those not inside a sub-shape of that kind."""
    from OCP.TopExp import TopExp_Explorer

    explorer = (
        TopExp_Explorer(shape, kind) if outside is None else TopExp_Explorer(shape, kind, outside)
    )
    n = 0
    while explorer.More():
        n += 1
        explorer.Next()
    return n


def _volume(shape: Any) -> float:
    from OCP.BRepGProp import BRepGProp
    from OCP.GProp import GProp_GProps

    props = GProp_GProps()
    BRepGProp.VolumeProperties_s(shape, props)
    return float(props.Mass())


def _bounds(shape: Any) -> tuple[list[float], list[float]]:
    from OCP.Bnd import Bnd_Box
    from OCP.BRepBndLib import BRepBndLib

    box = Bnd_Box()
    BRepBndLib.AddOptimal_s(shape, box, False, False)
    x0, y0, z0, x1, y1, z1 = box.Get()
    return [x0, y0, z0], [x1, y1, z1]


def _normalised(shape: Any) -> Any:
    """Bounding-box centre to the origin, longest side 1 (as the mesh comparison does)."""
    from OCP.BRepBuilderAPI import BRepBuilderAPI_Transform
    from OCP.gp import gp_Pnt, gp_Trsf, gp_Vec

    low, high = _bounds(shape)
    longest = max(h - lo for h, lo in zip(high, low, strict=True)) or 1.0
    centre = [(h + lo) / 2 for h, lo in zip(high, low, strict=True)]
    move, scale = gp_Trsf(), gp_Trsf()
    move.SetTranslation(gp_Vec(*[-c for c in centre]))
    scale.SetScale(gp_Pnt(0, 0, 0), 1.0 / longest)
    return BRepBuilderAPI_Transform(shape, scale.Multiplied(move), True).Shape()


def _brep_iou(a: Any, b: Any) -> float:
    from OCP.BRepAlgoAPI import BRepAlgoAPI_Common

    a, b = _normalised(a), _normalised(b)
    common = BRepAlgoAPI_Common(a, b)
    if not common.IsDone():
        raise ValueError("the boolean common of the two B-reps failed")
    shared = _volume(common.Shape())
    union = _volume(a) + _volume(b) - shared
    return shared / union if union > 0 else 0.0


def _describe(shape: Any) -> dict[str, Any]:
    from OCP.BRepCheck import BRepCheck_Analyzer
    from OCP.TopAbs import TopAbs_FACE, TopAbs_SHELL, TopAbs_SOLID

    low, high = _bounds(shape)
    return {
        "valid": bool(BRepCheck_Analyzer(shape).IsValid()),
        "solids": _count(shape, TopAbs_SOLID),
        "shells": _count(shape, TopAbs_SHELL),
        "faces": _count(shape, TopAbs_FACE),
        # Faces that bound no solid: a sheet of the part's skin beside a token solid is
        # tessellated as the part, though it holds none of its material.
        "loose_faces": _count(shape, TopAbs_FACE, TopAbs_SOLID),
        "volume": _volume(shape),
        "bbox_min": low,
        "bbox_max": high,
    }


def _tessellate(shape: Any, deflection: float, angular: float) -> None:
    from OCP.BRepMesh import BRepMesh_IncrementalMesh
    from OCP.StlAPI import StlAPI_Writer

    low, high = _bounds(shape)
    size = max(h - lo for h, lo in zip(high, low, strict=True)) or 1.0
    BRepMesh_IncrementalMesh(shape, deflection * size, False, angular, True)
    writer = StlAPI_Writer()
    writer.ASCIIMode = False
    if not writer.Write(shape, "out.stl"):
        raise ValueError("the shape could not be written as STL (no triangles?)")


def inspect(deflection: float, angular: float) -> None:
    """Phase 2: validity, counts, volume, tessellation, B-rep IoU (see the module docstring)."""
    shape = _read("result.brep")
    report = _describe(shape)
    report["brep_iou"] = None
    if os.path.exists("reference.brep"):
        reference = _read("reference.brep")
        report["reference"] = _describe(reference)
        if report["valid"] and report["solids"] and report["reference"]["solids"]:
            try:
                report["brep_iou"] = _brep_iou(shape, reference)
            except Exception as exc:  # the kernel refused the boolean: say so, measure on
                report["brep_iou_error"] = f"{type(exc).__name__}: {exc}"[:300]
    try:
        _tessellate(shape, deflection, angular)
    except Exception as exc:
        report["tessellation_error"] = f"{type(exc).__name__}: {exc}"[:300]
    with open("report.json", "w", encoding="utf-8") as handle:
        json.dump(report, handle)
