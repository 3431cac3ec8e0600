"""CAD code in the sandbox: CadQuery and build123d scripts, run on the OCP kernel.

- `run_cad(script, kind=..., limits=...)`: run a script (ending in CQ-editor's
  ``show_object(result)``, or assigning ``result``) in a warm sandbox server of the CAD
  venv; get back its B-rep, the BRepCheck report, volumes, the B-rep IoU against a
  reference B-rep, and the tessellated mesh. See `run.py` and `_inside.py`.
- `cad_python()`: the CAD venv's interpreter, or None when it is not installed.

The `cad_code` verifier (`rewardsmith.verifiers.mesh.cad.CadCode`, ``kind="cadquery"`` or
``"build123d"``) scores with it. See docs/3d.md.
"""

from rewardsmith.verifiers.cad.run import CadRun, cad_python, run_cad

__all__ = ["CadRun", "cad_python", "run_cad"]
