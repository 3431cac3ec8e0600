"""A verifier that reports which heavy stacks its worker process has imported.

Top-level and importable by name (``tests.support.import_probe``), so a pool worker can
unpickle it without importing the caller's main module.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import ClassVar

from rewardsmith.verifiers.protocol import Cost
from rewardsmith.verifiers.types import Sample, Verdict

HEAVY = (
    "torch",
    "transformers",
    "numpy",
    "sympy",
    "trimesh",
    "typer",
    "rich",
    "fastapi",
    "rewardsmith.cli",
    "rewardsmith.environments",
    "rewardsmith.reward_models",
    "rewardsmith.trainer",
    "rewardsmith.verifiers.finance",
    "rewardsmith.verifiers.mesh",
    "rewardsmith.verifiers.cad",
    "rewardsmith.verifiers.blender",
)
"""What a math + code worker has no use for (each a module or a package prefix)."""


def heavy_loaded() -> list[str]:
    """The entries of `HEAVY` imported in this process."""
    return [h for h in HEAVY if any(m == h or m.startswith(h + ".") for m in sys.modules)]


@dataclass(frozen=True)
class ImportProbe:
    name: ClassVar[str] = "import_probe"
    version: ClassVar[str] = "1"
    cost: ClassVar[Cost] = Cost.CHEAP

    def __call__(self, sample: Sample) -> Verdict:
        evidence = {"heavy": heavy_loaded(), "main_imported": "__mp_main__" in sys.modules}
        return Verdict.passed(self.name, self.version, evidence=evidence)
