"""``rewardsmith report``: one self-contained HTML page about a scored run.

The scored file is streamed, never held: one pass adds every row to a `Stats` (the one
definition of pass rate, mean reward and counts, as ``score`` and ``diff`` use), keeps
the worst samples of each failure kind (bounded heaps) and counts each distinct reward
and component value (while there are at most 4,096 of them). Only if a series has more
distinct values than that does a second pass fill fixed-bin histograms over the ranges
the first found. Memory does not grow with the number of rows.

The page: a summary, charts (reward and component histograms, verdicts by failure kind;
PNGs, embedded, and written beside the page), the verifiers (pass rate, statuses,
failures, timings), the tasks, the worst samples of each failure kind with their
verdicts and evidence and the conversation turn by turn, for a dump of environment
episodes (`rewardsmith env run`) every episode turn by turn, passing ones included (the
first `MAX_EPISODES`), with how it ended and each turn's reward, and the rows that could
not be read. Nothing a model wrote can run (see `rewardsmith.cli.page`).
"""

from __future__ import annotations

import base64
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import typer

from rewardsmith.cli.charts import Distribution, Histogram, bars_png, histograms_png
from rewardsmith.cli.page import Html, conversation, escape, join, page, plain_json, table, tag
from rewardsmith.cli.runs import RunReader, RunRow
from rewardsmith.cli.summary import failure_label, fmt, milliseconds
from rewardsmith.cli.worst import WorstSamples
from rewardsmith.datasets.dumps import DumpError
from rewardsmith.graders.stats import OTHER_TASKS, Stats

__all__ = ["build_report", "report"]

WORST_PER_KIND = 5
MAX_RUNS_NAMED = 10
MAX_EPISODES = 200
"""Episodes shown turn by turn (the first ones of the file); the rest are counted."""
MAX_CHARTS = 24
"""Components drawn (the first seen): more would not be read, and each costs memory."""


def report(
    scored: Annotated[Path, typer.Argument(help="A file written by `rewardsmith score`.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="The HTML page to write.")] = Path(
        "report.html"
    ),
    worst: Annotated[
        int, typer.Option(help="Worst samples shown per failure kind.")
    ] = WORST_PER_KIND,
) -> None:
    """Write an HTML report: statistics, timings, tasks, the worst samples of each kind."""
    try:
        built = build_report(scored, title=scored.name, png_dir=_png_dir(output), worst=worst)
    except DumpError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from exc
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(built.html, encoding="utf-8")
    if built.bad_rows:
        typer.echo(f"{built.bad_rows} rows could not be read (listed on the page)", err=True)
    typer.echo(f"wrote {output} and its charts in {_png_dir(output)}")


def _png_dir(output: Path) -> Path:
    return output.with_name(output.stem + "_files")


@dataclass
class BuiltReport:
    html: str
    stats: Stats
    bad_rows: int
    histograms: dict[str, Histogram] = field(default_factory=dict)
    """The reward's (``reward``) and each component's, as drawn."""


@dataclass
class _Episodes:
    """Every episode row (one that records `turn_rewards`), rendered, up to `MAX_EPISODES`."""

    render: Any
    shown: list[str] = field(default_factory=list)
    seen: int = 0

    def offer(self, row: RunRow) -> None:
        if "turn_rewards" not in row.record:
            return
        self.seen += 1
        if len(self.shown) < MAX_EPISODES:
            self.shown.append(self.render(row))


@dataclass
class _FirstPass:
    stats: Stats
    worst: WorstSamples
    episodes: _Episodes
    runs: Counter[str] = field(default_factory=Counter)
    rewards: Distribution = field(default_factory=Distribution)
    components: dict[str, Distribution] = field(default_factory=dict)

    def add(self, row: RunRow) -> None:
        self.stats.add(row.reward, row.task)
        self.worst.offer(row)
        self.episodes.offer(row)
        if row.run is not None and (row.run in self.runs or len(self.runs) < MAX_RUNS_NAMED):
            self.runs[row.run] += 1
        if row.reward.outcome == "rewarded":
            self.rewards.add(row.reward.value)
        for name, component in row.reward.components.items():
            counts = self.components.get(name)
            if counts is None and len(self.components) < MAX_CHARTS:
                counts = self.components[name] = Distribution()
            if counts is not None:
                counts.add(component.raw)


def build_report(
    path: str | Path, title: str, png_dir: Path | None = None, worst: int = WORST_PER_KIND
) -> BuiltReport:
    """The page for the scored file at ``path``; charts also go to ``png_dir``."""
    reader = RunReader(path)
    first = _FirstPass(
        Stats(),
        WorstSamples(lambda row: _sample(reader, row), worst),
        _Episodes(lambda row: _episode(reader, row)),
    )
    for row in reader:
        first.add(row)
    charts, histograms = _charts(reader, first)
    if png_dir is not None:
        png_dir.mkdir(parents=True, exist_ok=True)
        for name, png in charts.items():
            (png_dir / f"{name}.png").write_bytes(png)
    sections = [
        _summary(first, reader),
        join(_image(png, name) for name, png in charts.items()),
        _verifiers(first.stats),
        _tasks(first.stats),
        _worst(first.worst, worst),
        _episode_list(first.episodes),
        _bad_rows(reader),
    ]
    html = page(f"rewardsmith report: {title}", sections)
    return BuiltReport(html, first.stats, reader.bad_rows, histograms)


_REWARD = ("reward", "")


def _charts(reader: RunReader, first: _FirstPass) -> tuple[dict[str, bytes], dict[str, Histogram]]:
    """Histograms over the ranges the first pass saw: from its exact counts, or from a
    second pass for a series with too many distinct values; and their PNGs."""
    stats = first.stats
    series = {_REWARD: (stats.reward, first.rewards)}
    for name, counts in first.components.items():
        series[("component", name)] = (stats.components[name].raw, counts)
    histograms = {
        key: counts.histogram(m.low, m.high)
        for key, (m, counts) in series.items()
        if m.count and not counts.overflowed
    }
    again = {
        key: Histogram(m.low, m.high)
        for key, (m, counts) in series.items()
        if m.count and counts.overflowed
    }
    if again:
        _fill(reader, again)
        histograms.update(again)
    failures: Counter[str] = Counter()
    for verifier in stats.verifiers.values():
        for kind, n in verifier.failures.items():
            failures[failure_label(kind)] += n
    reward = {"reward": histograms[_REWARD]} if _REWARD in histograms else {}
    parts = {name: h for (what, name), h in histograms.items() if what == "component"}
    charts = {
        "reward": histograms_png(reward, "reward"),
        "components": histograms_png(parts, "raw value"),
        "failures": bars_png(dict(failures), "verdicts by failure kind"),
    }
    return {name: png for name, png in charts.items() if png}, {**reward, **parts}


def _fill(reader: RunReader, histograms: dict[tuple[str, str], Histogram]) -> None:
    """The second pass: fill these histograms from the rows."""
    reward = histograms.get(_REWARD)
    for row in reader:
        if reward is not None and row.reward.outcome == "rewarded":
            reward.add(row.reward.value)
        for name, component in row.reward.components.items():
            histogram = histograms.get(("component", name))
            if histogram is not None:
                histogram.add(component.raw)


# ---------------------------------------------------------------------- sections


def _image(png: bytes, name: str) -> Html:
    data = base64.b64encode(png).decode("ascii")
    return Html(f'<img alt="{escape(name)}" src="data:image/png;base64,{data}">')


def _summary(first: _FirstPass, reader: RunReader) -> Html:
    stats = first.stats
    reward = stats.reward
    outcomes = ", ".join(f"{k} {v}" for k, v in sorted(stats.outcomes.items())) or "none"
    lines: list[Any] = [
        tag(
            "p",
            tag("b", stats.samples),
            f" samples; mean reward {fmt(reward.mean, 4)} (std {fmt(reward.std, 4)}) over the "
            f"{reward.count} rewarded; outcomes: {outcomes}.",
        ),
        tag(
            "p",
            f"{stats.infra_failures} samples decided by infrastructure failures, "
            f"{stats.outcomes['data_error']} by data errors; {reader.bad_rows} rows could "
            "not be read. Pass rates count only decided verdicts: skips, infrastructure and "
            "data failures are not failures of the model.",
            cls="small",
        ),
    ]
    if reward.nonfinite:
        lines.append(tag("p", f"{reward.nonfinite} rewards are not finite numbers.", cls="bad"))
    if len(first.runs) > 1:
        named = ", ".join(f"{run} ({n} rows)" for run, n in first.runs.most_common())
        lines.append(tag("p", f"Rows from {len(first.runs)} different runs: {named}.", cls="bad"))
    return join(lines)


def _verifiers(stats: Stats) -> Html:
    headers = ["verifier", "statuses", "failures", "pass rate", "decided"]
    headers += ["mean ms", "p50 ms", "p95 ms", "max ms", "total s"]
    rows = []
    for key, v in sorted(stats.verifiers.items(), key=lambda kv: -kv[1].timing.total_s):
        timing = v.timing
        rows.append(
            [
                key,
                ", ".join(f"{k} {n}" for k, n in sorted(v.statuses.items())),
                ", ".join(f"{failure_label(k)} {n}" for k, n in v.failures.most_common()) or "–",
                fmt(v.pass_rate),
                v.decided,
                milliseconds(timing.mean_s),
                milliseconds(timing.quantile(0.5)),
                milliseconds(timing.quantile(0.95)),
                milliseconds(timing.max_s if timing.count else None),
                f"{timing.total_s:.2f}",
            ]
        )
    note = tag("p", "Slowest in total first; p50 and p95 within 12%.", cls="small")
    return join([tag("h2", "Verifiers"), note, table(headers, rows, numeric=3)])


def _tasks(stats: Stats) -> Html:
    rows = sorted(stats.tasks.items(), key=lambda kv: -kv[1].samples)
    if stats.other_tasks.samples:
        rows.append((OTHER_TASKS, stats.other_tasks))
    body = [
        [
            name,
            ", ".join(f"{k} {n}" for k, n in sorted(t.outcomes.items())),
            t.samples,
            fmt(t.reward.mean),
            fmt(t.pass_rate),
        ]
        for name, t in rows
    ]
    headers = ["task", "outcomes", "samples", "mean reward", "pass rate"]
    return join([tag("h2", "Tasks"), table(headers, body, numeric=2)])


def _worst(worst: WorstSamples, per_kind: int) -> Html:
    kinds = worst.kinds()
    parts: list[Any] = [
        tag("h2", "Worst samples by failure kind"),
        tag(
            "p",
            f"Up to {per_kind} per kind, lowest reward first; a sample whose verdicts all "
            "pass (or all skip) is never here.",
            cls="small",
        ),
    ]
    if not kinds:
        parts.append(tag("p", "No verdict failed."))
    for kind, seen, rendered in kinds:
        parts.append(tag("h3", f"{failure_label(kind)}: samples {seen}"))
        # The worst of each kind is shown open; the others fold.
        parts += [
            Html(r.replace(_FOLDED, _OPEN, 1) if i == 0 else r) for i, r in enumerate(rendered)
        ]
    return join(parts)


def _sample(reader: RunReader, row: RunRow) -> str:
    reward = row.reward
    head = (
        f"{row.id} · task {row.task or '(none)'} · reward {fmt(reward.value, 4)} · "
        f"{reward.outcome}" + (f" · {reward.reason}" if reward.reason else "")
    )
    verdicts = [
        [
            key,
            v.status.value,
            failure_label(v.failure.value) if v.failure else "–",
            v.feedback[:500] or "–",
            fmt(v.score),
            milliseconds(v.elapsed_s),
        ]
        for key, v in reward.verdicts.items()
    ]
    evidence = {key: dict(v.evidence) for key, v in reward.verdicts.items() if v.evidence}
    folded = Html(f"<details><summary>evidence</summary>{plain_json(evidence)}</details>")
    body = [
        table(["verifier", "status", "failure", "feedback", "score", "ms"], verdicts, numeric=4),
        folded if evidence else "",
        conversation(reader.sample(row), row.record),
    ]
    return str(tag("details", tag("summary", head), *body, cls="sample"))


def _episode_list(episodes: _Episodes) -> Html:
    if not episodes.seen:
        return Html("")
    more = "" if episodes.seen <= MAX_EPISODES else f" (the first {MAX_EPISODES} shown)"
    head = tag("h2", f"Episodes: {episodes.seen}{more}")
    note = tag("p", "Every episode, passing ones included, turn by turn.", cls="small")
    return join([head, note, *(Html(r) for r in episodes.shown)])


def _episode(reader: RunReader, row: RunRow) -> str:
    """An episode: how it ended, each turn's reward, then the sample as `_sample` shows it."""
    record = row.record
    rewards = record.get("turn_rewards") or []
    facts = [
        ["turns", record.get("turns", len(rewards))],
        ["end", record.get("end", "–")],
        ["reason", record.get("reason", "–")],
        ["final reward", fmt(record.get("final_reward"), 4)],
        ["turn rewards", ", ".join(fmt(r, 3) for r in rewards) or "–"],
        ["truncated", record.get("truncated", "–")],
    ]
    sample = _sample(reader, row)
    return sample.replace("</summary>", "</summary>" + str(table(["", ""], facts)), 1)


_FOLDED, _OPEN = '<details class="sample">', '<details class="sample" open>'


def _bad_rows(reader: RunReader) -> Html:
    if not reader.bad_rows:
        return Html("")
    shown = reader.errors
    items = join(tag("li", e) for e in shown)
    more = f" (the first {len(shown)} listed)" if reader.bad_rows > len(shown) else ""
    return join([tag("h2", f"{reader.bad_rows} rows not read{more}"), tag("ul", items)])
