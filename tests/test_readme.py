"""The README's Python example runs and prints what its comment says."""

from __future__ import annotations

import re
from pathlib import Path

from tests.support.page_runner import PageRunner

REPO = Path(__file__).resolve().parents[1]


def test_readme_python_example(page_runner: PageRunner) -> None:
    [code] = re.findall(r"```python\n(.*?)^```", (REPO / "README.md").read_text(), re.S | re.M)
    expected = re.search(r"# (.+)$", code.strip().splitlines()[-1])
    assert expected is not None
    result = page_runner.run(code, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == expected.group(1)


def test_readme_spec_is_the_demo_spec() -> None:
    import yaml

    [shown] = re.findall(r"```yaml\n(.*?)^```", (REPO / "README.md").read_text(), re.S | re.M)
    bundled = (REPO / "datasets" / "samples" / "mixed.yaml").read_text()
    assert yaml.safe_load(shown) == yaml.safe_load(bundled)
