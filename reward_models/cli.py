"""``rewardsmith rm train`` and ``rewardsmith rm evaluate``: typed functions typer turns into
commands (the main CLI mounts them; ``python -m rewardsmith.reward_models.cli`` runs them
alone, and under ``torchrun`` for data-parallel training).

    python -m rewardsmith.reward_models.cli train BACKBONE_DIR arithmetic runs/rm --split train
    python -m rewardsmith.reward_models.cli evaluate runs/rm/checkpoint-0000240 arithmetic \\
        --split test
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

__all__ = ["app", "evaluate_command", "train_command"]

DataArg = Annotated[
    str,
    typer.Argument(
        help="A bundled set's name (e.g. 'arithmetic'), a JSONL or Parquet "
        "file, or a dataset directory saved with save_to_disk."
    ),
]
SplitOpt = Annotated[str | None, typer.Option(help="Keep only rows whose 'split' is this.")]
ColumnOpt = Annotated[
    list[str] | None,
    typer.Option("--column", help="Map a column: NAME=YOURS, e.g. chosen=response_a."),
]


def _rows(data: str, split: str | None) -> list[dict[str, Any]]:
    from rewardsmith.reward_models.data import bundled_preferences, read_rows

    if not Path(data).exists():
        return bundled_preferences(data, split)
    rows = list(read_rows(data))
    return [r for r in rows if split is None or r.get("split") == split]


def _columns(pairs: list[str] | None) -> dict[str, str]:
    out = {}
    for item in pairs or []:
        name, sep, theirs = item.partition("=")
        if not sep:
            raise typer.BadParameter(f"--column {item!r} is not NAME=YOURS")
        out[name] = theirs
    return out


def _load_pairs(data: str, split: str | None, column: list[str] | None, console: Console) -> Any:
    from rewardsmith.reward_models.data import MissingColumnError, preference_pairs

    try:
        loaded = preference_pairs(_rows(data, split), _columns(column))
    except MissingColumnError as exc:
        raise typer.BadParameter(f"{exc} (on the command line: --column NAME=YOURS)") from exc
    if loaded.skipped:
        reasons: dict[str, int] = {}
        for s in loaded.skipped:
            reasons[s.reason] = reasons.get(s.reason, 0) + 1
        console.print(f"[yellow]skipped {len(loaded.skipped)} rows:[/] {reasons}")
    if not loaded.rows:
        raise typer.BadParameter(f"no usable preference pairs in {data!r}")
    return loaded.rows


def evaluate_command(
    model: Annotated[Path, typer.Argument(help="A saved reward model directory.")],
    data: DataArg,
    split: SplitOpt = None,
    column: ColumnOpt = None,
    batch_size: Annotated[int, typer.Option(min=1)] = 32,
    max_length: Annotated[int | None, typer.Option(help="Token limit (left-truncated).")] = None,
    output: Annotated[Path | None, typer.Option("-o", help="Write the full report as JSON.")] = (
        None
    ),
) -> None:
    """Pairwise accuracy (overall and per subset), calibration and score distributions."""
    from rewardsmith.reward_models.evaluate import evaluate_pairs
    from rewardsmith.reward_models.model import RewardModel

    console = Console()
    pairs = _load_pairs(data, split, column, console)
    rm = RewardModel.load(model, max_length=max_length)
    report = evaluate_pairs(rm, pairs, batch_size=batch_size)
    table = Table(title=f"{model} on {data}" + (f" ({split})" if split else ""))
    for name in ("subset", "pairs", "accuracy"):
        table.add_column(name, justify="left" if name == "subset" else "right")
    for name, acc in report.by_subset.items():
        table.add_row(name, str(report.subset_sizes[name]), f"{acc:.3f}")
    table.add_row("[bold]all[/]", str(report.n_pairs), f"[bold]{report.accuracy:.3f}[/]")
    console.print(table)
    console.print(
        f"ECE {report.ece:.3f}  Brier {report.brier:.3f}  mean margin "
        f"{report.margin['mean']:.3f}  truncated texts {report.truncated}"
    )
    if output is not None:
        output.write_text(json.dumps(report.to_dict(), indent=2))


def train_command(
    backbone: Annotated[Path, typer.Argument(help="A transformers model dir, or a saved RM.")],
    data: DataArg,
    output_dir: Annotated[Path, typer.Argument(help="Checkpoints go here; reruns resume.")],
    split: SplitOpt = None,
    column: ColumnOpt = None,
    kind: Annotated[str, typer.Option(help="value_head or sequence_classification")] = (
        "value_head"
    ),
    batch_size: Annotated[int, typer.Option(min=1, help="Global pairs per step.")] = 16,
    grad_accum: Annotated[int, typer.Option(min=1)] = 1,
    learning_rate: float = 2e-5,
    epochs: Annotated[int, typer.Option(min=1)] = 1,
    max_steps: int | None = None,
    save_every: int = 0,
    max_length: int | None = None,
    seed: int = 0,
) -> None:
    """Bradley-Terry training on preference pairs; run under torchrun for data parallel."""
    from rewardsmith.reward_models.model import RewardModel
    from rewardsmith.reward_models.training import TrainConfig, init_distributed, train

    rank, _ = init_distributed()
    console = Console(quiet=rank != 0)
    pairs = _load_pairs(data, split, column, console)
    rm = RewardModel.load(backbone, kind=kind, max_length=max_length, seed=seed)
    config = TrainConfig(
        batch_size=batch_size,
        grad_accum=grad_accum,
        learning_rate=learning_rate,
        epochs=epochs,
        max_steps=max_steps,
        save_every=save_every,
        seed=seed,
    )

    def log(step: int, loss: float, metrics: dict[str, float]) -> None:
        if step == 1 or step % 10 == 0:
            console.print(f"step {step}  loss {loss:.4f}  batch accuracy {metrics['accuracy']:.3f}")

    result = train(rm, pairs, config, output_dir, on_step=log)
    console.print(f"done: {result.steps} steps; final model in {result.checkpoint}")


app = typer.Typer(help="Reward models: train and evaluate.", no_args_is_help=True)
app.command("evaluate")(evaluate_command)
app.command("train")(train_command)

if __name__ == "__main__":
    app()
