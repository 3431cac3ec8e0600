"""Verifiers by name, for YAML specs and the CLI.

Built-in verifiers are listed here as ``name -> "module:attribute"`` and imported only when
asked for, so naming `mesh_compare` does not import Blender. Other packages add verifiers
through the ``rewardsmith.verifiers`` entry-point group; in their ``pyproject.toml``:

    [project.entry-points."rewardsmith.verifiers"]
    my_check = "my_package.checks:MyCheck"

After ``pip install`` of that package, ``create("my_check", threshold=0.5)`` works and a
reward spec can name ``my_check``.
"""

from __future__ import annotations

import difflib
import importlib
from importlib.metadata import entry_points
from typing import Any

from rewardsmith.verifiers.protocol import Verifier

__all__ = ["UnknownVerifierError", "available", "create", "resolve"]

ENTRY_POINT_GROUP = "rewardsmith.verifiers"

# One line per built-in verifier; keep sorted. Add yours here when you add a verifier.
_BUILTIN: dict[str, str] = {
    "blender_scene": "rewardsmith.verifiers.blender.scene:BlenderScene",
    "cad_code": "rewardsmith.verifiers.mesh.cad:CadCode",
    "chart_claims": "rewardsmith.verifiers.finance:ChartClaims",
    "code_tests": "rewardsmith.verifiers.code:CodeTests",
    "compile_gate": "rewardsmith.verifiers.diagnostics.rewards:CompileGate",
    "consistency": "rewardsmith.verifiers.finance:Consistency",
    "cross_document": "rewardsmith.verifiers.finance:CrossDocument",
    "diagnostics_score": "rewardsmith.verifiers.diagnostics.rewards:DiagnosticsScore",
    "exact_match": "rewardsmith.verifiers.text:ExactMatch",
    "format": "rewardsmith.verifiers.text:FormatCheck",
    "grounding": "rewardsmith.verifiers.finance:Grounding",
    "judge": "rewardsmith.reward_models.judge:JudgeVerifier",
    "math": "rewardsmith.verifiers.math:MathAnswer",
    "mesh_compare": "rewardsmith.verifiers.mesh.compare:MeshCompare",
    "numeric_answer": "rewardsmith.verifiers.finance:NumericAnswer",
    "repair_progress": "rewardsmith.verifiers.diagnostics.rewards:RepairProgress",
    "repair_tests": "rewardsmith.verifiers.diagnostics.repair_tests:RepairTests",
    "reward_model": "rewardsmith.reward_models.verifier:RewardModelVerifier",
    "reward_model_ensemble": "rewardsmith.reward_models.ensemble:EnsembleVerifier",
    "table_match": "rewardsmith.verifiers.finance:TableMatch",
}


class UnknownVerifierError(KeyError):
    """A verifier name that neither the built-ins nor any installed plugin provides."""

    def __str__(self) -> str:
        return str(self.args[0])


def _plugins() -> dict[str, Any]:
    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def available() -> list[str]:
    """Every verifier name that can be created: built-ins and installed plugins."""
    return sorted(set(_BUILTIN) | set(_plugins()))


def resolve(name: str) -> Any:
    """The factory (usually a class) registered under `name`."""
    if name in _BUILTIN:
        module_name, _, attribute = _BUILTIN[name].partition(":")
        return getattr(importlib.import_module(module_name), attribute)
    plugin = _plugins().get(name)
    if plugin is not None:
        return plugin.load()
    close = difflib.get_close_matches(name, available(), n=3)
    hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    raise UnknownVerifierError(
        f"unknown verifier {name!r}.{hint} Known: {', '.join(available())}. Plugins register "
        f"under the entry-point group {ENTRY_POINT_GROUP!r}."
    )


def create(name: str, /, **config: Any) -> Verifier:
    """Build the verifier registered under `name` with the given settings."""
    verifier = resolve(name)(**config)
    if not isinstance(verifier, Verifier):
        raise TypeError(f"{name!r} did not build a Verifier (needs name, version, cost, __call__)")
    return verifier
