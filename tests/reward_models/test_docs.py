"""The runnable example in docs/reward_models.md runs and does what it says."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "reward_models.md"

pytestmark = pytest.mark.slow


def test_docs_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    example = re.search(r"```python\n(.*?)```", DOC.read_text(), re.DOTALL)
    assert example is not None
    exec(compile(example.group(1), str(DOC), "exec"), {"__name__": "docs_example"})
    out = capsys.readouterr().out
    assert "1280 pairs, 0 skipped" in out and "accuracy" in out
