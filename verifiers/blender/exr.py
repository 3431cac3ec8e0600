"""Read the channels of an uncompressed, scanline OpenEXR file (what the truth render
writes) into numpy arrays: no OpenEXR library in the Blender child or the scoring process.

Layout (openexr.com, "OpenEXR File Layout"): magic ``76 2f 31 01``, a version word, then
header attributes ``name\\0 type\\0 size:int32 value`` up to an empty name (a multi-part
file, as Blender writes multi-layer renders, has one header per part and an empty one
after them); then per part one uint64 offset per scanline; each scanline is ``y:int32
size:int32`` (after a ``part:int32`` in a multi-part file) and, channel after channel in
the header's (sorted) order, that row's values (HALF 2 bytes, FLOAT and UINT 4). Only
``compression == 0`` (none) is read; anything else, or a file that disagrees with itself,
raises `ValueError`. Sizes are bounded before anything is allocated.

    >>> import numpy as np
    >>> data = write_exr({"A.R": np.arange(6, dtype=np.float32).reshape(2, 3)})
    >>> read_exr(data)["A.R"].tolist()
    [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
"""

from __future__ import annotations

import struct

import numpy as np

__all__ = ["read_exr", "write_exr"]

_MAGIC = b"\x76\x2f\x31\x01"
_TYPES = {0: np.dtype("<u4"), 1: np.dtype("<f2"), 2: np.dtype("<f4")}
_MAX_PIXELS = 1 << 22


def _cstring(data: bytes, at: int) -> tuple[str, int]:
    end = data.index(b"\x00", at)
    return data[at:end].decode("latin-1"), end + 1


def _attributes(data: bytes, at: int) -> tuple[dict[str, bytes], int]:
    """One header's attributes, and where the next byte after its terminator is."""
    attributes: dict[str, bytes] = {}
    while True:
        name, at = _cstring(data, at)
        if not name:
            return attributes, at
        _, at = _cstring(data, at)
        (size,) = struct.unpack_from("<i", data, at)
        if size < 0 or at + 4 + size > len(data):
            raise ValueError("an EXR attribute runs past the end of the file")
        attributes[name] = data[at + 4 : at + 4 + size]
        at += 4 + size


def _headers(data: bytes) -> tuple[list[dict[str, bytes]], int, bool]:
    """(the headers: one, or one per part of a multi-part file; where the offset tables
    start; whether the file is multi-part). Blender writes multi-layer renders multi-part."""
    if data[:4] != _MAGIC:
        raise ValueError("not an OpenEXR file")
    (version,) = struct.unpack_from("<i", data, 4)
    multipart = bool(version & 0x1000)
    if version & 0x200:
        raise ValueError("tiled EXR files are not read")
    headers, at = [], 8
    while True:
        header, at = _attributes(data, at)
        headers.append(header)
        if not multipart or data[at : at + 1] == b"\x00":
            return headers, at + (1 if multipart else 0), multipart
        if len(headers) > 64:
            raise ValueError("too many EXR parts")


def _channels(raw: bytes) -> list[tuple[str, np.dtype]]:
    found, at = [], 0
    while at < len(raw) and raw[at] != 0:
        name, at = _cstring(raw, at)
        (kind,) = struct.unpack_from("<i", raw, at)
        if kind not in _TYPES:
            raise ValueError(f"channel {name} has an unknown pixel type {kind}")
        found.append((name, _TYPES[kind]))
        at += 16  # type, pLinear + 3 reserved bytes, xSampling, ySampling
    return found


def read_exr(data: bytes) -> dict[str, np.ndarray]:
    """Channel name -> (height, width) array, for every part of an uncompressed scanline
    file (see the module docstring)."""
    out: dict[str, np.ndarray] = {}
    try:
        headers, at = _headers(data)[:2]
        multipart = len(headers) > 1 or bool(struct.unpack_from("<i", data, 4)[0] & 0x1000)
        parts = [_part_layout(h) for h in headers]
        tables = []
        for _, height, _ in parts:
            tables.append(np.frombuffer(data, "<u8", count=height, offset=at))
            at += 8 * height
    except (KeyError, IndexError, struct.error) as exc:
        raise ValueError(f"malformed EXR header: {exc}") from exc
    for number, ((width, height, channels), table) in enumerate(zip(parts, tables, strict=True)):
        y0 = struct.unpack("<4i", headers[number]["dataWindow"])[1]
        planes = {name: np.empty((height, width), dtype=np.float64) for name, _ in channels}
        _read_rows(data, table, number if multipart else None, (width, y0, channels), planes)
        out.update(planes)
    return out


def _part_layout(header: dict[str, bytes]) -> tuple[int, int, list[tuple[str, np.dtype]]]:
    if header.get("compression", b"\x00")[:1] != b"\x00":
        raise ValueError("only uncompressed EXR files are read")
    x0, y0, x1, y1 = struct.unpack("<4i", header["dataWindow"])
    width, height = x1 - x0 + 1, y1 - y0 + 1
    if not (0 < width and 0 < height and width * height <= _MAX_PIXELS):
        raise ValueError(f"EXR of {width} x {height} pixels is out of bounds")
    return width, height, _channels(header["channels"])


def _read_rows(
    data: bytes,
    table: np.ndarray,
    part: int | None,
    layout: tuple[int, int, list[tuple[str, np.dtype]]],
    planes: dict[str, np.ndarray],
) -> None:
    width, y0, channels = layout
    height = len(table)
    row_bytes = sum(width * dtype.itemsize for _, dtype in channels)
    lead = 12 if part is not None else 8  # a multi-part chunk starts with its part number
    for offset in table:
        at = int(offset)
        if at + lead + row_bytes > len(data):
            raise ValueError("an EXR scanline runs past the end of the file")
        if part is not None and struct.unpack_from("<i", data, at)[0] != part:
            raise ValueError("an EXR chunk names another part")
        y, size = struct.unpack_from("<ii", data, at + lead - 8)
        if size != row_bytes or not y0 <= y < y0 + height:
            raise ValueError("an EXR scanline disagrees with the header")
        at += lead
        for name, dtype in channels:
            planes[name][y - y0] = np.frombuffer(data, dtype, count=width, offset=at)
            at += width * dtype.itemsize


def write_exr(channels: dict[str, np.ndarray]) -> bytes:
    """A minimal uncompressed FLOAT scanline EXR of `channels` (for tests and examples)."""
    names = sorted(channels)
    height, width = channels[names[0]].shape
    chlist = b"".join(n.encode() + b"\x00" + struct.pack("<i4xii", 2, 1, 1) for n in names)
    attributes = [
        ("channels", "chlist", chlist + b"\x00"),
        ("compression", "compression", b"\x00"),
        ("dataWindow", "box2i", struct.pack("<4i", 0, 0, width - 1, height - 1)),
        ("displayWindow", "box2i", struct.pack("<4i", 0, 0, width - 1, height - 1)),
        ("lineOrder", "lineOrder", b"\x00"),
        ("pixelAspectRatio", "float", struct.pack("<f", 1.0)),
        ("screenWindowCenter", "v2f", struct.pack("<2f", 0, 0)),
        ("screenWindowWidth", "float", struct.pack("<f", 1.0)),
    ]
    head = _MAGIC + struct.pack("<i", 2)
    for name, kind, value in attributes:
        head += name.encode() + b"\x00" + kind.encode() + b"\x00" + struct.pack("<i", len(value))
        head += value
    head += b"\x00"
    rows = []
    for y in range(height):
        body = b"".join(np.asarray(channels[n][y], dtype="<f4").tobytes() for n in names)
        rows.append(struct.pack("<ii", y, len(body)) + body)
    start = len(head) + 8 * height
    offsets, at = [], start
    for row in rows:
        offsets.append(at)
        at += len(row)
    return head + np.asarray(offsets, dtype="<u8").tobytes() + b"".join(rows)
