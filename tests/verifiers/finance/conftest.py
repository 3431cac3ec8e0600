"""PDFs for the finance tests: the bundled sample set, and hostile files made in tmp_path.

The hostile files are written by the tests themselves (never committed): an encrypted PDF,
a truncated one, a scanned page with no text layer, a 0-byte file, a 500-page file, and a
file that is not a PDF at all.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from fpdf import FPDF
from PIL import Image, ImageDraw
from pypdf import PdfReader, PdfWriter

REPO_ROOT = Path(__file__).resolve().parents[3]
BUNDLED = REPO_ROOT / "datasets" / "finance"


@pytest.fixture
def bomb(tmp_path: Path) -> Path:
    """A 30 KB PDF that takes about a minute to parse (`datasets/finance/hostile.py`)."""
    from rewardsmith.datasets.finance.hostile import flate_bomb

    return flate_bomb(tmp_path / "bomb.pdf")


@pytest.fixture(autouse=True)
def private_failure_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test remembers PDF failures in its own folder: a timeout another test (or
    another engineer's run on this machine) remembered must not answer for this one."""
    from rewardsmith.verifiers.finance import reference
    from rewardsmith.verifiers.finance.doc_cache import FailureCache

    monkeypatch.setattr(reference, "_failures", FailureCache(tmp_path / "pdf-failures"))


@pytest.fixture(scope="session")
def bundled() -> Path:
    return BUNDLED


@pytest.fixture(scope="session")
def parsed(bundled: Path) -> dict[str, object]:
    """Both bundled reports parsed whole once, as a scorer would (later page reads hit the
    cache: a parse of every page answers for any pages)."""
    from rewardsmith.verifiers.finance.reference import load_document

    return {name: load_document(str(bundled / f"{name}.pdf")) for name in ("acme", "globex")}


@pytest.fixture(scope="session")
def truth() -> dict:
    return json.loads((BUNDLED / "truth.json").read_text())


@pytest.fixture(scope="session")
def tasks() -> dict[str, dict]:
    lines = (BUNDLED / "tasks.jsonl").read_text().splitlines()
    return {t["id"]: t for t in map(json.loads, lines)}


@pytest.fixture(scope="session")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Bad PDFs, made once per session in a scratch folder."""
    root = tmp_path_factory.mktemp("hostile_pdfs")
    source = (BUNDLED / "acme.pdf").read_bytes()
    files = {
        "empty": root / "empty.pdf",
        "truncated": root / "truncated.pdf",
        "not_pdf": root / "not_pdf.pdf",
        "encrypted": root / "encrypted.pdf",
        "scanned": root / "scanned.pdf",
        "long": root / "long.pdf",
        "mixed": root / "mixed.pdf",
        "owner_only": root / "owner_only.pdf",
    }
    files["empty"].write_bytes(b"")
    files["truncated"].write_bytes(source[: len(source) // 3])
    files["not_pdf"].write_bytes(b"Revenue,2024\nAcme,1234\n" * 50)
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(source)))
    writer.encrypt(user_password="secret", owner_password="owner")
    with open(files["encrypted"], "wb") as handle:
        writer.write(handle)
    owner = PdfWriter(clone_from=PdfReader(io.BytesIO(source)))
    owner.encrypt(user_password="", owner_password="owner", algorithm="AES-256")
    with open(files["owner_only"], "wb") as handle:  # permissions only: opens with ""
        owner.write(handle)
    _scanned(files["scanned"])
    _long(files["long"], pages=500)
    mixed = PdfWriter(clone_from=PdfReader(io.BytesIO(source)))  # 4 text pages, then a scan
    mixed.append(str(files["scanned"]))
    with open(files["mixed"], "wb") as handle:
        mixed.write(handle)
    return files


def _scanned(path: Path) -> None:
    """A page that is only a picture of a table: no text layer at all."""
    image = Image.new("RGB", (800, 400), "white")
    draw = ImageDraw.Draw(image)
    for i, line in enumerate(["Revenue   122,445", "Costs      (44,943)", "Total      77,502"]):
        draw.text((40, 40 + 60 * i), line, fill="black")
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    pdf = FPDF()
    pdf.add_page()
    pdf.image(buffer, x=10, y=10, w=180)
    pdf.output(str(path))


def _long(path: Path, pages: int) -> None:
    pdf = FPDF()
    pdf.set_font("Helvetica", size=10)
    for n in range(1, pages + 1):
        pdf.add_page()
        pdf.cell(0, 10, f"Page {n}: segment revenue {n * 1000 + 7:,} thousand")
    pdf.output(str(path))
