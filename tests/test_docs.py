"""Every ```python block in docs/*.md runs, so the examples cannot go stale.

The blocks of one page run in order in one fresh process from the repo root (forked from a
warm interpreter that has imported the toolkit once: the `page_runner` fixture). A block
right after an ``<!-- not-run -->`` line is skipped (use it for fragments that need a
cluster, a GPU or a long run, and say so in the text). A block right after
``<!-- needs: MODULE -->`` (an optional client such as ``openrlhf``) runs alone, in its own
process, and skips with the reason where MODULE is not installed.
"""

from __future__ import annotations

import re
from importlib.util import find_spec
from pathlib import Path

import pytest

from tests.support.page_runner import PageRunner

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"
PAGES = sorted((REPO / "docs").glob("*.md"))
BLOCK = re.compile(
    r"(<!-- (?:not-run|needs: [\w.]+) -->\s*)?```python\n(.*?)^```", re.DOTALL | re.MULTILINE
)
NEEDS = re.compile(r"<!-- needs: ([\w.]+) -->\s*```python\n(.*?)^```", re.DOTALL | re.MULTILINE)
CLIENT_BLOCKS = [(page, *found) for page in PAGES for found in NEEDS.findall(page.read_text())]


def _runnable_code(page: Path) -> str:
    blocks = [code for skip, code in BLOCK.findall(page.read_text()) if not skip]
    return "\n\n".join(blocks)


def skip_without_shared_data(text: str, where: str) -> None:
    """Examples that read ../shared/data (third-party files, not in the repo) skip where
    that folder is absent, as the other shared-data tests do, saying why."""
    if "../shared/data" in text and not SHARED_DATA.is_dir():
        pytest.skip(f"{where} read ../shared/data, not found at {SHARED_DATA}")


@pytest.mark.parametrize("page", [p for p in PAGES if _runnable_code(p)], ids=lambda p: p.name)
def test_docs_examples_run(page: Path, page_runner: PageRunner) -> None:
    skip_without_shared_data(_runnable_code(page), f"the examples of {page.name}")
    result = page_runner.run(_runnable_code(page), timeout=300)
    assert result.returncode == 0, f"{page.name}:\n{result.stderr[-3000:]}"


@pytest.mark.parametrize(
    ("page", "module", "code"),
    CLIENT_BLOCKS,
    ids=[f"{page.name}-{module}-{i}" for i, (page, module, _) in enumerate(CLIENT_BLOCKS)],
)
def test_docs_examples_needing_a_client_run(
    page: Path, module: str, code: str, page_runner: PageRunner
) -> None:
    if find_spec(module) is None:
        pytest.skip(f"an example of {page.name} needs {module}, not installed")
    result = page_runner.run(code, timeout=300)
    assert result.returncode == 0, f"{page.name}:\n{result.stderr[-3000:]}"
