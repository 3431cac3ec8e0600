"""Every ```python block in docs/*.md runs, so the examples cannot go stale.

The blocks of one page run in order in one fresh process from the repo root (forked from a
warm interpreter that has imported the toolkit once: the `page_runner` fixture). A block
right after an ``<!-- not-run -->`` line is skipped (use it for fragments that need a
cluster, a GPU or a long run, and say so in the text).
"""

from __future__ import annotations

import re
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pytest

from tests.support.page_runner import PageRunner

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"
PAGES = sorted((REPO / "docs").glob("*.md"))
BLOCK = re.compile(r"(<!-- not-run -->\s*)?```python\n(.*?)^```", re.DOTALL | re.MULTILINE)


def _runnable_code(page: Path) -> str:
    blocks = [code for skip, code in BLOCK.findall(page.read_text()) if not skip]
    return "\n\n".join(blocks)


def skip_without_shared_data(text: str, where: str) -> None:
    """Examples that read ../shared/data (third-party files, not in the repo) skip where
    that folder is absent, as the other shared-data tests do, saying why."""
    if "../shared/data" in text and not SHARED_DATA.is_dir():
        pytest.skip(f"{where} read ../shared/data, not found at {SHARED_DATA}")


CLIENTS = {"integrations.verifiers_env": "verifiers", "integrations.openrlhf_agent": "openrlhf"}
"""The adapters whose examples need a trainer's client (module -> its distribution)."""


def skip_without_clients(text: str, where: str) -> None:
    """Examples that drive another trainer's client (willccbb/verifiers, OpenRLHF) skip where
    it is not installed (the Makefile's clients install puts them in; `make test` does that
    first). A distribution is looked up, not imported: the repo's own `verifiers/` folder
    shadows that name here."""
    for module, distribution in CLIENTS.items():
        if module not in text:
            continue
        try:
            version(distribution)
        except PackageNotFoundError:
            pytest.skip(f"{where} drive {distribution}, not installed (make test installs it)")


# What a page's example prints that its text relies on, checked on this one run of the page
# (a second run elsewhere only to read its output would pay for the example twice: the
# reward-model training is the slowest page).
PRINTS = {
    "reward_models.md": ("1280 pairs, 0 skipped", "accuracy"),
}


@pytest.mark.parametrize("page", [p for p in PAGES if _runnable_code(p)], ids=lambda p: p.name)
def test_docs_examples_run(page: Path, page_runner: PageRunner) -> None:
    skip_without_shared_data(_runnable_code(page), f"the examples of {page.name}")
    skip_without_clients(_runnable_code(page), f"the examples of {page.name}")
    result = page_runner.run(_runnable_code(page), timeout=300)
    assert result.returncode == 0, f"{page.name}:\n{result.stderr[-3000:]}"
    for claim in PRINTS.get(page.name, ()):
        assert claim in result.stdout, f"{page.name} no longer prints {claim!r}"
