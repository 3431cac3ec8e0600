"""Generate the bundled charts: vector charts drawn by matplotlib with known values.

Run from the repository root:  .venv/bin/python datasets/finance/charts/make_charts.py [--out DIR]

Writes one PDF per chart and ``truth.json``: for each chart its series, each series' value
per category exactly as plotted, which y axis it is drawn against, and the axes' tick
steps. The values are chosen off the ticks (132.5 on an axis ticked every 20) so a reader
has to measure, not round. ``raster.pdf`` holds a picture of a chart (no vector data): a
reader must say it cannot read it. The output is byte-for-byte reproducible (fixed
metadata, no creation date).
"""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("pdf")
import matplotlib.pyplot as plt

HERE = Path(__file__).resolve().parent
YEARS = ["2019", "2020", "2021", "2022", "2023"]
METADATA = {"CreationDate": None, "Creator": "rewardsmith charts", "Producer": None}

CHARTS: dict[str, dict[str, Any]] = {
    "grouped_bars": {
        "title": "Revenue and operating costs ($ millions)",
        "series": {
            "Revenue": [118.5, 132.5, 151.0, 143.5, 162.0],
            "Operating costs": [91.0, 97.5, 104.0, 109.5, 113.0],
        },
        "kind": "bar",
    },
    "stacked_bars": {
        "title": "Revenue by segment ($ millions)",
        "series": {
            "Retail": [42.0, 47.5, 53.0, 51.5, 58.0],
            "Wholesale": [31.5, 33.0, 36.5, 35.0, 39.5],
            "Online": [12.5, 18.0, 26.5, 31.0, 38.5],
        },
        "kind": "stacked",
    },
    "lines_markers": {
        "title": "Free cash flow and capital expenditure ($ millions)",
        "series": {
            "Free cash flow": [21.5, 17.0, 26.5, 33.0, 29.5],
            "Capital expenditure": [12.0, 14.5, 13.0, 18.5, 22.0],
        },
        "kind": "line",
    },
    "secondary_axis": {
        "title": "Revenue ($ millions) and operating margin (%)",
        "series": {
            "Revenue": [118.5, 132.5, 151.0, 143.5, 162.0],
            "Operating margin (%)": [11.2, 12.6, 14.1, 10.8, 15.3],
        },
        "kind": "bar+line",
    },
    "negative_values": {
        "title": "Net income (loss) ($ millions)",
        "series": {"Net income": [-12.5, -4.0, 6.5, 15.0, 9.5]},
        "kind": "bar",
    },
}


def _grouped(ax: Any, spec: dict[str, Any]) -> dict[str, str]:
    names = list(spec["series"])
    width = 0.8 / len(names)
    for i, name in enumerate(names):
        offsets = [x - 0.4 + width * (i + 0.5) for x in range(len(YEARS))]
        ax.bar(offsets, spec["series"][name], width, label=name)
    return {name: "left" for name in names}


def _stacked(ax: Any, spec: dict[str, Any]) -> dict[str, str]:
    bottom = [0.0] * len(YEARS)
    for name, values in spec["series"].items():
        ax.bar(range(len(YEARS)), values, 0.6, bottom=bottom, label=name)
        bottom = [b + v for b, v in zip(bottom, values, strict=True)]
    return {name: "left" for name in spec["series"]}


def _lines(ax: Any, spec: dict[str, Any]) -> dict[str, str]:
    for name, values in spec["series"].items():
        ax.plot(range(len(YEARS)), values, marker="o", label=name)
    return {name: "left" for name in spec["series"]}


def _secondary(ax: Any, spec: dict[str, Any]) -> dict[str, str]:
    revenue, margin = spec["series"].items()
    ax.bar(range(len(YEARS)), revenue[1], 0.6, label=revenue[0], color="tab:blue")
    twin = ax.twinx()
    twin.plot(range(len(YEARS)), margin[1], marker="s", color="tab:red", label=margin[0])
    twin.set_ylim(0, 20)
    return {revenue[0]: "left", margin[0]: "right"}


DRAW = {"bar": _grouped, "stacked": _stacked, "line": _lines, "bar+line": _secondary}


def draw(name: str, spec: dict[str, Any], out: Path) -> dict[str, Any]:
    fig, ax = plt.subplots(figsize=(6, 4))
    axes = DRAW[spec["kind"]](ax, spec)
    ax.set_xticks(range(len(YEARS)), YEARS)
    ax.set_title(spec["title"])
    if spec["kind"] == "bar" and min(min(v) for v in spec["series"].values()) < 0:
        ax.axhline(0, color="black", linewidth=0.8)
    fig.legend(loc="upper left", bbox_to_anchor=(0.12, 0.88))
    fig.savefig(out / f"{name}.pdf", metadata=METADATA)
    steps = {"left": _step(ax)}
    if len(fig.axes) > 1:
        steps["right"] = _step(fig.axes[1])
    plt.close(fig)
    series = {s: dict(zip(YEARS, v, strict=True)) for s, v in spec["series"].items()}
    return {"title": spec["title"], "series": series, "axis": axes, "tick_step": steps}


def _step(ax: Any) -> float:
    ticks = ax.get_yticks()
    return float(ticks[1] - ticks[0])


def raster(out: Path) -> None:
    """A chart saved as a picture and placed in a PDF: pixels only, no vector data."""
    from fpdf import FPDF

    fig, ax = plt.subplots(figsize=(6, 4))
    ax.bar(YEARS, CHARTS["grouped_bars"]["series"]["Revenue"])
    ax.set_title("Revenue ($ millions)")
    image = io.BytesIO()
    fig.savefig(image, format="png", dpi=80, metadata={"Software": None})
    plt.close(fig)
    pdf = FPDF()
    pdf.set_creation_date(_fixed_date())
    pdf.add_page()
    pdf.image(image, x=10, y=20, w=180)
    pdf.output(str(out / "raster.pdf"))


def _fixed_date() -> Any:
    from datetime import UTC, datetime

    return datetime(2025, 1, 1, tzinfo=UTC)


def main(out: Path = HERE) -> None:
    plt.rcParams["svg.hashsalt"] = "rewardsmith"
    truth = {name: draw(name, spec, out) for name, spec in CHARTS.items()}
    raster(out)
    truth["raster"] = {"title": "Revenue ($ millions)", "raster": True}
    (out / "truth.json").write_text(json.dumps(truth, indent=1) + "\n")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Generate the bundled charts.")
    parser.add_argument("--out", type=Path, default=HERE, help="folder to write (default: here)")
    main(parser.parse_args().out)
