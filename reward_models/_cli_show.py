"""How the ``rm`` commands show their results: rich tables, one function per report."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table

if TYPE_CHECKING:  # types only: importing them imports torch, which the CLI loads lazily
    from rewardsmith.reward_models.evaluate import EvalReport
    from rewardsmith.reward_models.process import StepReport
    from rewardsmith.reward_models.robustness import RobustnessReport


def _table(title: str, *columns: str) -> Table:
    table = Table(title=title)
    for i, name in enumerate(columns):
        table.add_column(name, justify="left" if i == 0 else "right")
    return table


def accuracy(console: Console, report: EvalReport, title: str) -> None:
    table = _table(title, "subset", "pairs", "accuracy")
    for name, acc in report.by_subset.items():
        table.add_row(name, str(report.subset_sizes[name]), f"{acc:.3f}")
    table.add_row("[bold]all[/]", str(report.n_pairs), f"[bold]{report.accuracy:.3f}[/]")
    console.print(table)
    console.print(
        f"ECE {report.ece:.3f}  Brier {report.brier:.3f}  mean margin "
        f"{report.margin['mean']:.3f}  truncated texts {report.truncated}"
    )


def robustness(console: Console, report: RobustnessReport, exploits: bool) -> None:
    title = f"{report.target}: a worse answer beats the better one ({report.pairs} pairs)"
    table = _table(title, "exploit class", "variants", "win rate", "per variant", "vs plain")
    table.add_row("plain worse answer (baseline)", "", f"{report.baseline:.3f}", "", "")
    below = report.below_baseline()
    for name, result in report.classes.items():
        verdict = "[green]below[/]" if below[name] else "[red]not below[/]"
        table.add_row(
            name,
            str(result.variants),
            f"{result.win_rate:.3f}",
            f"{result.variant_win_rate:.3f}",
            verdict,
        )
    console.print(table)
    if not exploits:
        console.print(f"pairwise accuracy through the reward: {1 - report.baseline:.3f}")
    if report.unscored:
        console.print(f"[yellow]{report.unscored} samples got no reward (left out)[/]")
    if exploits and report.words:
        console.print(f"frequent words used: {' '.join(report.words)}")


def steps(console: Console, report: StepReport, title: str) -> None:
    table = _table(title, "measure", "value")
    table.add_row("per-step accuracy", f"[bold]{report.step_accuracy:.3f}[/]")
    table.add_row("majority label (chance)", f"{report.majority_accuracy:.3f}")
    table.add_row("position prior", f"{report.position_prior_accuracy:.3f}")
    for name, acc in report.by_subset.items():
        table.add_row(f"  steps of {name} chains", f"{acc:.3f}")
    for name, rate in report.ranking.items():
        table.add_row(f"right chain ranked first, {name}", f"{rate:.3f}")
    table.add_row("first error found", f"{report.first_error_found:.3f}")
    table.add_row("score spread", f"{report.score_spread:.4f}")
    console.print(table)
    console.print(f"{report.chains} chains, {report.steps} steps, {report.ranked_pairs} pairs")
    if report.collapsed:
        console.print("[bold red]collapsed:[/] every step gets about the same score")


def step_logger(console: Console) -> Callable[[int, float, dict[str, float]], None]:
    def log(step: int, loss: float, metrics: dict[str, float]) -> None:
        if step == 1 or step % 10 == 0:
            shown = "  ".join(f"{k} {v:.3f}" for k, v in sorted(metrics.items()))
            console.print(f"step {step}  loss {loss:.4f}  {shown}")

    return log
