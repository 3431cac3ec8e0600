"""The packages' layers (../shared/ARCHITECTURE.md): verifiers at the bottom, graders and
reward models on them, environments above graders, the trainer and the CLI on top. A
package imports only its own layer and those below, at module level or inside a function
(a lazy import is still a dependency: `rewardsmith env run` once made the environments
import the trainer, so veRL or verifiers could not drive an environment without it)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MAY_IMPORT: dict[str, set[str]] = {
    "verifiers": {"verifiers", "datasets"},
    "datasets": {"datasets", "verifiers"},
    "graders": {"graders", "verifiers", "datasets"},
    "reward_models": {"reward_models", "graders", "verifiers", "datasets"},
    "environments": {"environments", "graders", "reward_models", "verifiers", "datasets"},
}


def _imported_packages(source: Path) -> list[tuple[int, str]]:
    """(line, package) for every `rewardsmith.<package>` the file imports."""
    found = []
    for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        for name in names:
            parts = name.split(".")
            if parts[0] == "rewardsmith" and len(parts) > 1:
                found.append((node.lineno, parts[1]))
    return found


@pytest.mark.parametrize("package", sorted(MAY_IMPORT))
def test_a_package_imports_only_its_layer_and_those_below(package: str) -> None:
    allowed = MAY_IMPORT[package]
    crossings = [
        f"{path.relative_to(ROOT)}:{line} imports rewardsmith.{imported}"
        for path in sorted((ROOT / package).rglob("*.py"))
        for line, imported in _imported_packages(path)
        if imported not in allowed
    ]
    assert not crossings, "\n".join(crossings)


def test_the_scan_sees_a_lazy_import(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text("def f():\n    from rewardsmith.trainer.data import sample_seed\n")
    assert _imported_packages(source) == [(2, "trainer")]
