"""veRL's own generation-dump writer, run from its installed source.

verl 0.9.1 (installed by make without its GPU dependencies) writes rollout and
validation dumps with ``RayPPOTrainer._write_generations`` (what ``_dump_generations``
runs in its background thread). Importing its module needs packages we do not install
(torchdata, CUDA torch), so the method's source is taken from the installed file and run
as it is: the rows are veRL's, not our reading of its format.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
from pathlib import Path
from typing import Any

__all__ = ["verl_write_generations"]


def verl_write_generations() -> Any:
    """``write(inputs, outputs, gts, scores, reward_extra_infos_dict, dump_path, step)``;
    raises ModuleNotFoundError where verl is not installed."""
    spec = importlib.util.find_spec("verl")
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError("make installs verl 0.9.1 (.venv/.installed-clients)")
    source = Path(spec.origin).parent / "trainer" / "ppo" / "ray_trainer.py"
    tree = ast.parse(source.read_text())
    trainer = next(
        n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "RayPPOTrainer"
    )
    method = next(
        n for n in trainer.body if isinstance(n, ast.FunctionDef) and n.name == "_write_generations"
    )
    namespace: dict[str, Any] = {"os": os, "json": json}
    exec(compile(ast.Module([method], []), str(source), "exec"), namespace)
    return namespace["_write_generations"]
