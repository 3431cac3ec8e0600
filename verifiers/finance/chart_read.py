"""Reading a vector chart out of a PDF page: each series' values on the chart's own axis.

A chart drawn by a plotting program is, in the PDF, rectangles (bars), lines and curves
(series, ticks, frames) and characters (tick labels, legend), in the order they were
drawn. `read_charts` rebuilds the chart from them:

1. **y axes**: numeric tick labels stacked in a column, each beside a short horizontal
   tick mark; a linear fit of value against the marks' heights maps any height to a
   value (the labels fix the scale, the marks the positions). A second column to the
   right is a secondary axis. The tick step is the axis resolution;
2. **categories**: the labels under the plot, each at its x tick mark;
3. **legend**: a small patch (a rectangle or a short line) followed by a label: the
   patch's colour names a series;
4. **bars**: filled rectangles standing on the zero line (value = the height of the far
   end), or on another bar (stacked: value = their own height); the category is the
   nearest x tick;
5. **lines**: stroked polylines (and their markers), read at each category's x by linear
   interpolation;
6. **which axis**: a series is drawn against the y axis whose tick marks were drawn last
   before it (plotting programs draw an axes' ticks, then its data, then a twin axes' ticks
   and data); a legend label saying "right axis" or "rhs" overrides.
7. **scale**: the scale the page's text declares for its amounts ("($ millions)" in a
   title), so that a claim's "$0.15 billion" can be read in the axis's units.

A page whose chart is a picture (an image, no vector marks) cannot be read: it is reported
as such, never guessed. This runs inside the killable parsing worker.
"""

from __future__ import annotations

import itertools
import re
import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from rewardsmith.verifiers.finance.figures import parse_figure, scale_from_header
from rewardsmith.verifiers.finance.quantities import currency_of

__all__ = ["read_chart_pdf", "read_charts"]

MAX_OBJECTS = 50_000


@dataclass
class _Mark:
    index: int
    kind: str  # rect, line, curve, char, image
    bbox: tuple[float, float, float, float]  # PDF space: x0, y0, x1, y1
    fill: tuple[float, ...] | None = None
    stroke: tuple[float, ...] | None = None
    pts: list[tuple[float, float]] = field(default_factory=list)
    text: str = ""


def _marks(layout: Any) -> list[_Mark]:
    out: list[_Mark] = []

    def walk(container: Any) -> None:
        for item in container:
            if len(out) >= MAX_OBJECTS:
                return
            name = type(item).__name__
            if name == "LTFigure":
                walk(item)
            elif name == "LTChar":
                out.append(_Mark(len(out), "char", tuple(item.bbox), text=item.get_text()))
            elif name == "LTImage":
                out.append(_Mark(len(out), "image", tuple(item.bbox)))
            elif name in ("LTRect", "LTLine", "LTCurve"):
                fill = tuple(item.non_stroking_color.values) if item.fill else None
                stroke = tuple(item.stroking_color.values) if item.stroke else None
                kind = {"LTRect": "rect", "LTLine": "line", "LTCurve": "curve"}[name]
                pts = [tuple(p) for p in item.pts]
                out.append(_Mark(len(out), kind, tuple(item.bbox), fill, stroke, pts))

    walk(layout)
    return out


@dataclass
class _Word:
    text: str
    x0: float
    y0: float
    x1: float
    y1: float
    index: int

    @property
    def cx(self) -> float:
        return (self.x0 + self.x1) / 2

    @property
    def cy(self) -> float:
        return (self.y0 + self.y1) / 2


def _words(marks: list[_Mark]) -> list[_Word]:
    """Characters drawn one after another on one baseline, without a wide gap, are a word."""
    words: list[_Word] = []
    for m in (m for m in marks if m.kind == "char"):
        x0, y0, x1, y1 = m.bbox
        last = words[-1] if words else None
        height = y1 - y0
        if (
            last is not None
            and abs(last.y0 - y0) < 0.2 * height
            and -0.3 * height <= x0 - last.x1 < 0.6 * height  # kerning may overlap glyphs
            and (m.text.strip() or last.text.strip())
        ):
            last.text += m.text
            last.x1, last.y1 = max(last.x1, x1), max(last.y1, y1)
        elif m.text.strip():
            words.append(_Word(m.text, x0, y0, x1, y1, m.index))
    for w in words:
        w.text = w.text.strip()
    return words


@dataclass
class _Axis:
    side: str
    x: float  # where its tick marks are
    ticks: list[tuple[float, float]]  # (y, value)
    index: int  # stream position of its last tick mark
    slope: float = 0.0
    offset: float = 0.0

    def value(self, y: float) -> float:
        return self.slope * y + self.offset

    @property
    def step(self) -> float:
        values = sorted(v for _, v in self.ticks)
        return statistics.median(b - a for a, b in itertools.pairwise(values))


def _y_axes(marks: list[_Mark], words: list[_Word]) -> list[_Axis]:
    ticks = [m for m in marks if m.kind == "line" and _is_hline(m) and m.bbox[2] - m.bbox[0] < 8]
    numeric = [(w, f) for w in words if (f := parse_figure(w.text)) is not None]
    columns: dict[tuple[str, int], list[tuple[_Mark, float]]] = defaultdict(list)
    for tick in ticks:
        y = tick.bbox[1]
        for w, f in numeric:
            if w.y0 - 2 <= y <= w.y1 + 2:
                if 0 <= tick.bbox[0] - w.x1 <= 12:  # label left of its mark: a left axis
                    columns[("left", round(tick.bbox[2]))].append((tick, f.value))
                elif 0 <= w.x0 - tick.bbox[2] <= 12:
                    columns[("right", round(tick.bbox[0]))].append((tick, f.value))
    axes = []
    for (side, x), found in columns.items():
        if len(found) < 3:
            continue
        axis = _Axis(
            side, float(x), [(t.bbox[1], v) for t, v in found], max(t.index for t, _ in found)
        )
        if _fit(axis):
            axes.append(axis)
    return sorted(axes, key=lambda a: a.x)


def _is_hline(m: _Mark) -> bool:
    return abs(m.bbox[3] - m.bbox[1]) < 0.5 and m.bbox[2] - m.bbox[0] > 0.5


def _fit(axis: _Axis) -> bool:
    """Least squares value = slope·y + offset; the ticks must lie on it (a real axis)."""
    ys = [y for y, _ in axis.ticks]
    vs = [v for _, v in axis.ticks]
    if len(set(ys)) < 2:
        return False
    my, mv = statistics.fmean(ys), statistics.fmean(vs)
    axis.slope = sum((y - my) * (v - mv) for y, v in axis.ticks) / sum((y - my) ** 2 for y in ys)
    axis.offset = mv - axis.slope * my
    span = max(vs) - min(vs)
    return span > 0 and all(abs(axis.value(y) - v) <= 1e-3 * span for y, v in axis.ticks)


def _categories(marks: list[_Mark], words: list[_Word], bottom: float) -> list[tuple[str, float]]:
    """(label, x) of each x tick mark under the plot with a label just below it."""
    vticks = [m for m in marks if m.kind == "line" and abs(m.bbox[2] - m.bbox[0]) < 0.5
              and m.bbox[3] - m.bbox[1] < 8 and m.bbox[3] <= bottom + 0.5]  # fmt: skip
    out = []
    for tick in vticks:
        x = tick.bbox[0]
        below = [
            w for w in words if w.y1 <= tick.bbox[1] + 1 and abs(w.cx - x) < 0.6 * (w.x1 - w.x0) + 2
        ]
        if below:
            label = max(below, key=lambda w: w.y1)
            out.append((label.text, x))
    return sorted(out, key=lambda c: c[1])


def _legend(marks: list[_Mark], words: list[_Word]) -> dict[tuple[float, ...], str]:
    """Colour of each legend patch -> the label written right after it."""
    out: dict[tuple[float, ...], str] = {}
    for m in marks:
        small = m.bbox[2] - m.bbox[0] < 30 and m.bbox[3] - m.bbox[1] < 12
        color = m.fill if m.kind == "rect" else m.stroke
        if not small or color is None or m.kind not in ("rect", "line", "curve"):
            continue
        after = [w for w in words if w.index > m.index and 0 <= w.x0 - m.bbox[2] < 15
                 and abs(w.cy - (m.bbox[1] + m.bbox[3]) / 2) < 6]  # fmt: skip
        if after:
            out.setdefault(color, _label_from(min(after, key=lambda w: w.index), words))
    return out


def _label_from(first: _Word, words: list[_Word]) -> str:
    """The words that follow `first` on its line, each within a space of the one before."""
    line = sorted((w for w in words if abs(w.y0 - first.y0) < 1 and w.x0 >= first.x0),
                  key=lambda w: w.x0)  # fmt: skip
    label = [first]
    for w in line[1:]:
        if w.x0 - label[-1].x1 > 1.2 * (first.y1 - first.y0):
            break
        label.append(w)
    return " ".join(w.text for w in label)


def read_charts(layout: Any) -> dict[str, Any]:
    """The chart on a laid-out page (`playa.miner.extract_page(page, None)`), as data:
    ``{"series": {name: {"axis", "kind", "values": {category: value}}}, "axes": {...},
    "categories": [...], "scale": ...}`` (the scale the page's text declares: "($ millions)"
    is 1e6, 1.0 when none), or ``{"problem": ...}`` when there is none to read."""
    marks = _marks(layout)
    words = _words(marks)
    axes = _y_axes(marks, words)
    images = [m for m in marks if m.kind == "image"]
    if not axes:
        if images:
            return {"problem": "the chart is a picture (an image with no vector marks): its "
                    "values cannot be read from the PDF"}  # fmt: skip
        return {"problem": "no chart axis found on this page (no column of numeric tick labels)"}
    left = axes[0]
    right = axes[-1] if len(axes) > 1 and axes[-1].side == "right" else None
    bottom = min(y for y, _ in left.ticks)
    categories = _categories(marks, words, bottom + 0.5)
    if len(categories) < 2:
        return {"problem": "no category labels found under the chart"}
    legend = _legend(marks, words)
    plot = (left.x, right.x if right else max(m.bbox[2] for m in marks))
    series: dict[str, dict[str, Any]] = {}
    _bars(marks, legend, categories, left, right, plot, series)
    _lines(marks, legend, categories, axes, plot, series)
    return {
        "categories": [c for c, _ in categories],
        "axes": {a.side: {"step": a.step, "ticks": sorted(v for _, v in a.ticks)} for a in axes},
        "series": series,
        "scale": scale_from_header(" ".join(w.text for w in words)),
        "currency": currency_of(" ".join(w.text for w in words)),
    }


def _axis_of(index: int, name: str, axes: list[_Axis]) -> _Axis:
    if re.search(r"right axis|\brhs\b|\(right\)", name, re.IGNORECASE):
        return axes[-1]
    before = [a for a in axes if a.index < index]
    return max(before, key=lambda a: a.index) if before else min(axes, key=lambda a: a.index)


def _nearest(categories: list[tuple[str, float]], x: float) -> str:
    return min(categories, key=lambda c: abs(c[1] - x))[0]


def _bars(
    marks: list[_Mark],
    legend: dict[tuple[float, ...], str],
    categories: list[tuple[str, float]],
    left: _Axis,
    right: _Axis | None,
    plot: tuple[float, float],
    series: dict[str, dict[str, Any]],
) -> None:
    axes = [a for a in (left, right) if a is not None]
    rects = [m for m in marks if m.kind == "rect" and m.fill and not _white(m.fill)
             and plot[0] <= m.bbox[0] and m.bbox[2] <= plot[1] + 0.5
             and m.bbox[2] - m.bbox[0] < 0.5 * (plot[1] - plot[0])]  # fmt: skip
    legend_patch = {m.index for m in rects if _is_legend_patch(m, legend, marks)}
    rects = [m for m in rects if m.index not in legend_patch]
    tops = {(round(m.bbox[0], 1), round(m.bbox[3], 1)) for m in rects}
    for m in rects:
        name = legend.get(m.fill or (), f"series {len(series) + 1}")
        axis = _axis_of(m.index, name, axes)
        zero_y = -axis.offset / axis.slope
        x0, y0, x1, y1 = m.bbox
        if abs(y0 - zero_y) < 0.5:
            value = axis.value(y1)
        elif abs(y1 - zero_y) < 0.5:
            value = axis.value(y0)
        elif (round(x0, 1), round(y0, 1)) in tops:  # stacked on another bar
            value = axis.value(y1) - axis.value(y0)
        else:
            continue
        entry = series.setdefault(name, {"axis": axis.side, "kind": "bar", "values": {}})
        entry["values"][_nearest(categories, (x0 + x1) / 2)] = value


def _is_legend_patch(m: _Mark, legend: dict[tuple[float, ...], str], marks: list[_Mark]) -> bool:
    small = m.bbox[2] - m.bbox[0] < 30 and m.bbox[3] - m.bbox[1] < 12
    following = next((n for n in marks if n.index > m.index), None)
    return small and m.fill in legend and following is not None and following.kind == "char"


def _white(color: tuple[float, ...]) -> bool:
    return all(c > 0.97 for c in color) if len(color) != 4 else all(c < 0.03 for c in color)


def _lines(
    marks: list[_Mark],
    legend: dict[tuple[float, ...], str],
    categories: list[tuple[str, float]],
    axes: list[_Axis],
    plot: tuple[float, float],
    series: dict[str, dict[str, Any]],
) -> None:
    for m in marks:
        if (
            m.kind not in ("curve", "line")
            or m.stroke is None
            or m.fill is not None
            or len(m.pts) < 2
        ):
            continue
        xs = [p[0] for p in m.pts]
        if max(xs) - min(xs) < 0.3 * (plot[1] - plot[0]) or _is_hline(m):
            continue  # a tick, a legend sample, a gridline or the zero line
        name = legend.get(m.stroke, f"series {len(series) + 1}")
        axis = _axis_of(m.index, name, axes)
        values = {}
        for label, x in categories:
            y = _interpolate(m.pts, x)
            if y is not None:
                values[label] = axis.value(y)
        if len(values) >= 2:
            series[name] = {"axis": axis.side, "kind": "line", "values": values}


def _interpolate(pts: list[tuple[float, float]], x: float) -> float | None:
    for (xa, ya), (xb, yb) in itertools.pairwise(pts):
        lo, hi = min(xa, xb), max(xa, xb)
        if lo - 0.01 <= x <= hi + 0.01:
            return ya if hi - lo < 1e-9 else ya + (yb - ya) * (x - xa) / (xb - xa)
    return None


def read_chart_pdf(path: str, page: int) -> dict[str, Any]:
    """`read_charts` of one page of the PDF at `path` (1-based): the worker's entry point."""
    import playa
    import playa.miner

    from rewardsmith.verifiers.finance.pdf import PdfProblem

    try:
        pdf = playa.open(path, space="page", password="")
    except playa.PDFPasswordIncorrect:
        raise PdfProblem("PDF is encrypted: it cannot be read without its password") from None
    with pdf:
        if not 1 <= page <= len(pdf.pages):
            raise PdfProblem(f"page {page} does not exist: the PDF has {len(pdf.pages)} pages")
        return read_charts(playa.miner.extract_page(pdf.pages[page - 1], None))
