"""``rewardsmith report``: one self-contained HTML page about a scored run.

Charts are drawn with matplotlib, written as PNG files beside the page and embedded in it
(base64), so the page can be mailed on its own. Everything a model wrote is escaped.
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
from collections import Counter, defaultdict
from pathlib import Path
from typing import Annotated, Any

import typer

from rewardsmith.cli.scored import ScoredRow, read_scored

__all__ = ["build_report", "report"]

WORST = 20


def report(
    scored: Annotated[Path, typer.Argument(help="A file written by `rewardsmith score`.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="The HTML page to write.")] = Path(
        "report.html"
    ),
) -> None:
    """Write an HTML report: reward distributions, failures, the worst samples."""
    page = build_report(list(read_scored(scored)), title=scored.name, png_dir=_png_dir(output))
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(page, encoding="utf-8")
    typer.echo(f"wrote {output} and its charts in {_png_dir(output)}")


def _png_dir(output: Path) -> Path:
    return output.with_name(output.stem + "_files")


def build_report(rows: list[ScoredRow], title: str, png_dir: Path | None = None) -> str:
    """The HTML page for these rows; charts also go to `png_dir` when given."""
    charts = {
        "reward": _histogram({"reward": [r.value for r in rows]}, "reward"),
        "components": _histogram(_component_values(rows), "raw value"),
        "tasks": _bars(_mean_by_task(rows), "mean reward by task"),
        "failures": _bars(_failure_counts(rows), "verdicts by failure kind", integer=True),
    }
    if png_dir is not None:
        png_dir.mkdir(parents=True, exist_ok=True)
        for name, png in charts.items():
            if png:
                (png_dir / f"{name}.png").write_bytes(png)
    sections = [
        _summary_section(rows),
        "".join(_image(png, name) for name, png in charts.items() if png),
        _verifier_table(rows),
        _worst_section(rows),
    ]
    return _PAGE.format(title=html.escape(title), body="\n".join(sections))


# ---------------------------------------------------------------------- numbers


def _values(values: list[float | None]) -> list[float]:
    return [v for v in values if v is not None and math.isfinite(v)]


def _component_values(rows: list[ScoredRow]) -> dict[str, list[float | None]]:
    out: dict[str, list[float | None]] = defaultdict(list)
    for row in rows:
        for name, component in row.reward.get("components", {}).items():
            out[name].append(component.get("raw"))
    return dict(out)


def _mean_by_task(rows: list[ScoredRow]) -> dict[str, float]:
    by_task: dict[str, list[float | None]] = defaultdict(list)
    for row in rows:
        by_task[row.task].append(row.value)
    return {t: sum(v) / len(v) for t, vs in sorted(by_task.items()) if (v := _values(vs))}


def _failure_counts(rows: list[ScoredRow]) -> dict[str, float]:
    counts: Counter[str] = Counter()
    for row in rows:
        for verdict in row.verdicts.values():
            if verdict.get("failure"):
                counts[f"{verdict['failure']} ({verdict.get('fault')})"] += 1
    return dict(counts.most_common())


# ---------------------------------------------------------------------- charts


def _figure_png(fig: Any) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=90, bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(fig)
    return buffer.getvalue()


def _histogram(series: dict[str, list[float | None]], xlabel: str) -> bytes | None:
    finite = {k: _values(v) for k, v in series.items() if _values(v)}
    if not finite:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    columns = min(len(finite), 4)
    rows = math.ceil(len(finite) / columns)
    fig, axes = plt.subplots(rows, columns, figsize=(3.2 * columns, 2.4 * rows), squeeze=False)
    for ax, (name, values) in zip(axes.flat, finite.items(), strict=False):
        ax.hist(values, bins=20, color="#4477aa")
        ax.set_title(name, fontsize=9)
        ax.set_xlabel(xlabel, fontsize=8)
    for ax in list(axes.flat)[len(finite) :]:
        ax.axis("off")
    return _figure_png(fig)


def _bars(counts: dict[str, float], title: str, integer: bool = False) -> bytes | None:
    if not counts:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = list(counts)[:25]
    fig, ax = plt.subplots(figsize=(6.4, 0.3 * len(labels) + 1.0))
    ax.barh(labels[::-1], [counts[k] for k in labels][::-1], color="#cc6677")
    ax.set_title(title, fontsize=10)
    ax.tick_params(labelsize=8)
    if integer:
        from matplotlib.ticker import MaxNLocator

        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    return _figure_png(fig)


# ---------------------------------------------------------------------- html


def _image(png: bytes, name: str) -> str:
    data = base64.b64encode(png).decode("ascii")
    return f'<img alt="{name}" src="data:image/png;base64,{data}">'


def _summary_section(rows: list[ScoredRow]) -> str:
    values = _values([r.value for r in rows])
    infra = sum(1 for r in rows if r.reward.get("infra_failure"))
    mean = f"{sum(values) / len(values):.4f}" if values else "–"
    return (
        f"<p><b>{len(rows)}</b> samples; mean reward <b>{mean}</b> over {len(values)} with a "
        f"value; <b>{infra}</b> kept out of the reward by infrastructure failures.</p>"
    )


def _verifier_table(rows: list[ScoredRow]) -> str:
    stats: dict[str, Counter[str]] = defaultdict(Counter)
    for row in rows:
        for key, verdict in row.verdicts.items():
            stats[key][verdict.get("status", "?")] += 1
    header = "<tr><th>verifier</th><th>statuses</th><th>pass rate</th></tr>"
    body = "".join(
        f"<tr><td>{html.escape(k)}</td><td>{html.escape(_counts(c))}</td>"
        f"<td>{c['pass'] / sum(c.values()):.3f}</td></tr>"
        for k, c in sorted(stats.items())
    )
    return f"<h2>Verifiers</h2><table>{header}{body}</table>"


def _counts(counter: Counter[str]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(counter.items()))


def _worst_section(rows: list[ScoredRow]) -> str:
    def badness(row: ScoredRow) -> tuple[int, float]:
        return (
            0 if row.reward.get("infra_failure") else 1,
            row.value if row.value is not None else -1,
        )

    worst = sorted(rows, key=badness)[:WORST]
    items = "".join(_sample_html(r) for r in worst)
    return f"<h2>The {len(worst)} worst samples</h2>{items}"


def _sample_html(row: ScoredRow) -> str:
    completion = row.record.get("completion", row.record.get("response", ""))
    text = completion if isinstance(completion, str) else json.dumps(completion)
    verdicts = json.dumps(row.verdicts, indent=1, default=str)
    return (
        f"<details><summary>{html.escape(row.id)} — task {html.escape(row.task)} — reward "
        f"{html.escape(str(row.value))} {html.escape(row.reward.get('reason', ''))}</summary>"
        f"<h4>completion</h4><pre>{html.escape(text[:4000])}</pre>"
        f"<h4>verdicts</h4><pre>{html.escape(verdicts[:8000])}</pre></details>"
    )


_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>rewardsmith report: {title}</title>
<style>
body {{ font-family: system-ui, sans-serif; max-width: 1100px; margin: 2em auto; }}
img {{ max-width: 100%; margin: 0.5em 0; display: block; }}
table {{ border-collapse: collapse; }} td, th {{ border: 1px solid #ccc; padding: 0.3em 0.6em; }}
pre {{ background: #f6f6f6; padding: 0.5em; white-space: pre-wrap; word-break: break-all; }}
details {{ margin: 0.3em 0; }}
</style></head>
<body><h1>rewardsmith report: {title}</h1>
{body}
</body></html>
"""
