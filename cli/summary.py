"""The end-of-run tables of ``rewardsmith score``, drawn from a `Stats`.

Every number comes from `rewardsmith.graders.stats` (one definition of pass rate, mean
reward and the counts); this module only lays them out with rich.
"""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from rewardsmith.graders.stats import OTHER_TASKS, Stats
from rewardsmith.verifiers.types import Failure

__all__ = ["component_table", "fmt", "outcome_line", "task_table", "verifier_table"]


def fmt(value: float | None, digits: int = 3) -> str:
    """A number for a table; a dash for none."""
    return "–" if value is None else f"{value:.{digits}f}"


def milliseconds(seconds: float | None) -> str:
    return "–" if seconds is None else f"{1000 * seconds:.2f}"


def failure_label(kind: str) -> str:
    """``wrong_answer (model)``: a failure kind and whose fault it is."""
    try:
        return f"{kind} ({Failure(kind).fault.value})"
    except ValueError:
        return kind


def outcome_line(stats: Stats) -> str:
    """``24 samples: rewarded 20, infra_failure 1, ...``."""
    parts = ", ".join(f"{k} {v}" for k, v in sorted(stats.outcomes.items()))
    return f"{stats.samples} samples: {parts or 'none'}"


def component_table(stats: Stats) -> Table:
    table = Table(title="reward and components")
    for column in ("component", "n", "mean", "std"):
        table.add_column(column, justify="left" if column == "component" else "right")
    reward = stats.reward
    table.add_row("reward", str(reward.count), fmt(reward.mean), fmt(reward.std))
    for name, component in sorted(stats.components.items()):
        raw = component.raw
        table.add_row(Text(name), str(raw.count), fmt(raw.mean), fmt(raw.std))
    return table


def verifier_table(stats: Stats) -> Table:
    table = Table(title="verifiers, slowest first")
    columns = ["verifier", "pass rate", "decided", "statuses", "failures"]
    columns += ["mean ms", "p95 ms", "max ms"]
    for column in columns:
        numeric = "ms" in column or column in ("pass rate", "decided")
        table.add_column(column, justify="right" if numeric else "left")
    by_time = sorted(stats.verifiers.items(), key=lambda kv: -(kv[1].timing.mean_s or 0.0))
    for key, verifier in by_time:
        timing = verifier.timing
        table.add_row(
            Text(key),
            fmt(verifier.pass_rate),
            str(verifier.decided),
            ", ".join(f"{k} {v}" for k, v in sorted(verifier.statuses.items())),
            ", ".join(f"{failure_label(k)} {v}" for k, v in verifier.failures.most_common()) or "–",
            milliseconds(timing.mean_s),
            milliseconds(timing.quantile(0.95)),
            milliseconds(timing.max_s if timing.count else None),
        )
    return table


def task_table(stats: Stats) -> Table:
    table = Table(title="tasks")
    for column in ("task", "samples", "mean reward", "pass rate", "outcomes"):
        table.add_column(column, justify="left" if column in ("task", "outcomes") else "right")
    rows = sorted(stats.tasks.items())
    if stats.other_tasks.samples:
        rows.append((OTHER_TASKS, stats.other_tasks))
    for name, task in rows:
        table.add_row(
            Text(name),  # task names come from the dump: never read as rich markup
            str(task.samples),
            fmt(task.reward.mean),
            fmt(task.pass_rate),
            ", ".join(f"{k} {v}" for k, v in sorted(task.outcomes.items())),
        )
    return table
