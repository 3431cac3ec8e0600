"""The `rewardsmith train` command (the lead mounts `train_command` in the main CLI).

rewardsmith train run.yaml --steps 50
torchrun --nproc-per-node 2 "$(which rewardsmith)" train run.yaml
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

__all__ = ["train_command"]

_SHOWN = (
    "reward/mean",
    "reward/final",
    "kl/seq",
    "response/length",
    "loss/policy",
    "time/generate_s",
    "time/reward_wait_s",
    "time/update_s",
)


def train_command(
    config: Annotated[
        Path, typer.Argument(help="YAML file of TrainConfig settings.", exists=True, dir_okay=False)
    ],
    steps: Annotated[int | None, typer.Option(help="Override `steps`.")] = None,
    output_dir: Annotated[str | None, typer.Option(help="Override `output_dir`.")] = None,
    seed: Annotated[int | None, typer.Option(help="Override `seed`.")] = None,
    resume: Annotated[bool, typer.Option(help="Continue from the latest checkpoint.")] = False,
) -> None:
    """Train a causal LM with PPO, GRPO, RLOO or REINFORCE++ on rewards from verifiers or a
    grader, or on a multi-turn environment (`environment: NAME`). Run under `torchrun` for
    several processes; rank 0 shows progress and writes metrics.jsonl, TensorBoard events,
    checkpoints and the trained model to the output directory."""
    from rewardsmith.trainer.config import load_config
    from rewardsmith.trainer.run import multiturn_setup, run

    try:
        cfg = load_config(
            config, steps=steps, output_dir=output_dir, seed=seed, resume=resume or None
        )
        setup = multiturn_setup(cfg) if cfg.environment is not None else None
    except (OSError, ValueError, TypeError) as exc:
        raise typer.BadParameter(str(exc), param_hint="CONFIG") from exc
    console = Console(stderr=True)
    main = os.environ.get("RANK", "0") == "0"
    progress = Progress(
        TextColumn("[bold]train"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[info]}"),
        TimeElapsedColumn(),
        console=console,
        disable=not main,
    )
    with progress:
        task = progress.add_task("train", total=cfg.steps, info="")

        def on_step(step: int, metrics: dict[str, float]) -> None:
            if "skipped" in metrics:
                info = f"skipped (rewards failed; {metrics['reward/skipped_batches']:.0f} so far)"
            elif "reward/final" in metrics:
                info = f"final reward {metrics['reward/final']:.3f}"
            else:
                info = f"reward {metrics['reward/mean']:.3f}  kl {metrics['kl/seq']:.3f}"
            progress.update(task, completed=step + 1, info=info)

        result = run(cfg, on_step, setup)
    if main:
        console.print(_summary(result.metrics, result.output_dir))


def _summary(metrics: dict[str, float], output_dir: str) -> Table:
    table = Table(title=f"last step ({output_dir})")
    table.add_column("metric")
    table.add_column("value", justify="right")
    for name in _SHOWN:
        if name in metrics:
            table.add_row(name, f"{metrics[name]:.4g}")
    for name, value in sorted(metrics.items()):
        if name.startswith("reward/") and name not in _SHOWN:
            table.add_row(name, f"{value:.4g}")
    return table
