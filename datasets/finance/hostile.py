"""Hostile PDFs made on demand for tests and benchmarks (never committed).

`flate_bomb` writes a small PDF whose one content stream inflates to many megabytes of
path operators: 30 KB on disk, about a minute of parsing for 20 MB (53 s measured on the
build VM), the kind of file a parse limit and the failure cache exist for.
"""

from __future__ import annotations

import zlib
from pathlib import Path

__all__ = ["flate_bomb"]


def flate_bomb(path: Path, megabytes: float = 20) -> Path:
    """Write the bomb to `path` (inflating to `megabytes` MB) and return `path`."""
    stream = zlib.compress(b"0 0 m " * int(megabytes * 1024 * 1024 // 6), 9)
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    trailer = b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n"
    out += trailer % (len(objects) + 1, xref)
    path.write_bytes(bytes(out))
    return path
