"""``rewardsmith rm ...``: typed functions typer turns into commands (the main CLI mounts
them; ``python -m rewardsmith.reward_models.cli`` runs them alone, and under ``torchrun``
for data-parallel training).

    python -m rewardsmith.reward_models.cli train BACKBONE_DIR arithmetic runs/rm --split train
    python -m rewardsmith.reward_models.cli evaluate runs/rm/checkpoint-0000240 arithmetic \\
        --split test --exploits
    python -m rewardsmith.reward_models.cli evaluate-steps runs/prm/checkpoint-0000240 \\
        arithmetic_chains --split test
    python -m rewardsmith.reward_models.cli average runs/warm runs/s0/... runs/s1/...
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from rewardsmith.reward_models import _cli_show as show

__all__ = [
    "app",
    "average_command",
    "evaluate_command",
    "evaluate_steps_command",
    "stats_command",
    "train_command",
]

DataArg = Annotated[
    str,
    typer.Argument(
        help="A bundled set's name (e.g. 'arithmetic', 'arithmetic_chains'), a JSONL or "
        "Parquet file, or a dataset directory saved with save_to_disk."
    ),
]
SplitOpt = Annotated[str | None, typer.Option(help="Keep only rows whose 'split' is this.")]
ColumnOpt = Annotated[
    list[str] | None,
    typer.Option("--column", help="Map a column: NAME=YOURS, e.g. chosen=response_a."),
]
OutputOpt = Annotated[Path | None, typer.Option("-o", help="Write the full report as JSON.")]


def _rows(data: str, split: str | None, steps: bool = False) -> list[dict[str, Any]]:
    from rewardsmith.reward_models.data import bundled_preferences, bundled_steps, read_rows

    if not Path(data).exists():
        try:
            return (bundled_steps if steps else bundled_preferences)(data, split)
        except FileNotFoundError as exc:
            raise typer.BadParameter(f"{data!r} is neither a file nor {exc}") from None
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


def _load(
    data: str, split: str | None, column: list[str] | None, console: Console, steps: bool = False
) -> list[Any]:
    from rewardsmith.reward_models.data import (
        MissingColumnError,
        preference_pairs,
        step_examples,
    )

    loader = step_examples if steps else preference_pairs
    try:
        loaded = loader(_rows(data, split, steps), _columns(column))
    except MissingColumnError as exc:
        raise typer.BadParameter(f"{exc} (on the command line: --column NAME=YOURS)") from exc
    if loaded.skipped:
        reasons: dict[str, int] = {}
        for s in loaded.skipped:
            reasons[s.reason] = reasons.get(s.reason, 0) + 1
        console.print(f"[yellow]skipped {len(loaded.skipped)} rows:[/] {reasons}")
    if not loaded.rows:
        kind = "step-labelled chains" if steps else "preference pairs"
        raise typer.BadParameter(f"no usable {kind} in {data!r}")
    return loaded.rows


def _check_output(output: Path | None) -> None:
    """Fail before any work when the report could not be written."""
    if output is not None and not output.parent.is_dir():
        raise typer.BadParameter(
            f"the folder {str(output.parent)!r} does not exist: create it first "
            f"(mkdir -p {output.parent})",
            param_hint="-o",
        )


def _write(output: Path | None, report: dict[str, Any]) -> None:
    if output is not None:
        output.write_text(json.dumps(report, indent=2))


def _target(
    model: Path, members: list[Path] | None, reduce: str, std_coef: float, normalize: bool
) -> Any:
    """The grader a target names: a YAML spec, one model, or an ensemble of models."""
    from rewardsmith.graders import Grader, load_spec, verify
    from rewardsmith.reward_models.ensemble import EnsembleVerifier
    from rewardsmith.reward_models.verifier import RewardModelVerifier

    if model.suffix in (".yaml", ".yml"):
        if members:
            raise typer.BadParameter("--member makes an ensemble of models, not of a spec")
        return load_spec(model)
    if not members:
        return Grader(verify(RewardModelVerifier(model_path=str(model)), key="rm"))
    paths = (str(model), *(str(m) for m in members))
    ensemble = EnsembleVerifier(paths, reduce, std_coef, normalize)
    return Grader(verify(ensemble, key="rm"))


def evaluate_command(
    model: Annotated[
        Path, typer.Argument(help="A saved reward model directory, or a YAML reward spec.")
    ],
    data: DataArg,
    split: SplitOpt = None,
    column: ColumnOpt = None,
    batch_size: Annotated[int, typer.Option(min=1)] = 32,
    max_length: Annotated[int | None, typer.Option(help="Token limit (left-truncated).")] = None,
    exploits: Annotated[
        bool,
        typer.Option(
            "--exploits", help="Also: per exploit class, how often a dressed-up worse answer wins."
        ),
    ] = False,
    member: Annotated[
        list[Path] | None, typer.Option("--member", help="More models: score as an ensemble.")
    ] = None,
    reduce: Annotated[str, typer.Option(help="Ensemble: mean, min or mean_minus_std.")] = "mean",
    std_coef: Annotated[float, typer.Option(help="Ensemble: λ of mean_minus_std.")] = 1.0,
    normalize: Annotated[
        bool, typer.Option(help="Ensemble: members on the scale of their training scores.")
    ] = True,
    words_from: Annotated[
        str | None,
        typer.Option(help="Split whose answers give the frequent words (default: train)."),
    ] = "train",
    output: OutputOpt = None,
) -> None:
    """Pairwise accuracy (overall and per subset), calibration and score distributions; with
    --exploits, how often each exploit class of a worse answer beats the better one."""
    from rewardsmith.graders import Scorer
    from rewardsmith.reward_models.evaluate import evaluate_pairs
    from rewardsmith.reward_models.exploits import frequent_words
    from rewardsmith.reward_models.model import RewardModel
    from rewardsmith.reward_models.robustness import evaluate_exploits, scorer_values

    _check_output(output)
    console = Console()
    pairs = _load(data, split, column, console)
    single = model.suffix not in (".yaml", ".yml") and not member
    full: dict[str, Any] = {}
    if single:
        report = evaluate_pairs(RewardModel.load(model, max_length=max_length), pairs, batch_size)
        show.accuracy(console, report, f"{model} on {data}" + (f" ({split})" if split else ""))
        full = report.to_dict()
    if exploits or not single:
        grader = _target(model, member, reduce, std_coef, normalize)
        words = frequent_words(*_answers(_words_source(data, words_from, column) or pairs))
        with Scorer(grader, backend="inline", cache=False) as scorer:
            robust = evaluate_exploits(
                scorer_values(scorer),
                pairs,
                words=words,
                classes=None if exploits else [],
                target=str(model),
            )
        show.robustness(console, robust, exploits)
        full["exploits" if exploits else "values"] = robust.to_dict()
    _write(output, full)


def _words_source(data: str, split: str | None, column: list[str] | None) -> list[Any]:
    """The pairs the frequent words come from (none if that split has no usable rows)."""
    if split is None:
        return []
    try:
        return _load(data, split, column, Console(quiet=True))
    except typer.BadParameter:
        return []


def _answers(pairs: list[Any]) -> tuple[list[str], list[str]]:
    return [p.chosen for p in pairs], [p.rejected for p in pairs]


def evaluate_steps_command(
    model: Annotated[Path, typer.Argument(help="A saved process reward model directory.")],
    data: DataArg,
    split: SplitOpt = None,
    prior_split: Annotated[
        str, typer.Option(help="Split the position prior is fitted on.")
    ] = "train",
    column: ColumnOpt = None,
    batch_size: Annotated[int, typer.Option(min=1)] = 32,
    output: OutputOpt = None,
) -> None:
    """A process reward model against chance and the position prior: per-step accuracy,
    ranking of right chains above wrong ones under min / last / mean / product."""
    from rewardsmith.reward_models.model import RewardModel
    from rewardsmith.reward_models.process import evaluate_steps

    _check_output(output)
    console = Console()
    rows = _load(data, split, column, console, steps=True)
    prior = _load(data, prior_split, column, Console(quiet=True), steps=True)
    report = evaluate_steps(RewardModel.load(model), rows, prior_rows=prior, batch_size=batch_size)
    show.steps(console, report, f"{model} on {data}" + (f" ({split})" if split else ""))
    _write(output, report.to_dict())
    if report.collapsed:
        raise typer.Exit(1)


def train_command(
    backbone: Annotated[Path, typer.Argument(help="A transformers model dir, or a saved RM.")],
    data: DataArg,
    output_dir: Annotated[Path, typer.Argument(help="Checkpoints go here; reruns resume.")],
    split: SplitOpt = None,
    column: ColumnOpt = None,
    objective: Annotated[
        str, typer.Option(help="pairwise (preference pairs) or step (a process reward model).")
    ] = "pairwise",
    kind: Annotated[str, typer.Option(help="value_head or sequence_classification")] = (
        "value_head"
    ),
    batch_size: Annotated[int, typer.Option(min=1, help="Global rows per step.")] = 16,
    grad_accum: Annotated[int, typer.Option(min=1)] = 1,
    learning_rate: float = 2e-5,
    warmup_steps: Annotated[int, typer.Option(min=0)] = 0,
    epochs: Annotated[int, typer.Option(min=1)] = 1,
    max_steps: int | None = None,
    save_every: int = 0,
    max_length: int | None = None,
    center_rewards: Annotated[
        float, typer.Option(help="Weight of the reward-centring term (TRL suggests 0.01).")
    ] = 0.0,
    length_head: Annotated[
        bool, typer.Option("--length-head", help="Add a length head (ODIN); value_head only.")
    ] = False,
    step_separator: Annotated[
        str | None, typer.Option(help="Step objective: the one-token step separator.")
    ] = None,
    seed: int = 0,
    augment: Annotated[
        str | None,
        typer.Option(
            help="Add exploit-augmented pairs of these classes (comma-separated, or 'all'; "
            "see reward_models.augment): one per pair, the originals kept."
        ),
    ] = None,
) -> None:
    """Train on preference pairs (Bradley-Terry) or step-labelled chains (a process reward
    model); run under torchrun for data parallel. Exits 1 if training diverged."""
    from rewardsmith.reward_models.model import RewardModel
    from rewardsmith.reward_models.training import TrainConfig, init_distributed, train

    rank, _ = init_distributed()
    console = Console(quiet=rank != 0)
    rows = _load(data, split, column, console, steps=objective == "step")
    if augment is not None:
        rows = _augmented(rows, augment, seed, console)
    rm = RewardModel.load(
        backbone,
        kind=kind,
        max_length=max_length,
        step_separator=step_separator,
        length_head=length_head or None,
        seed=seed,
    )
    config = TrainConfig(
        objective=objective,
        batch_size=batch_size,
        grad_accum=grad_accum,
        learning_rate=learning_rate,
        warmup_steps=warmup_steps,
        epochs=epochs,
        max_steps=max_steps,
        save_every=save_every,
        center_rewards_coef=center_rewards,
        seed=seed,
    )
    result = train(rm, rows, config, output_dir, on_step=show.step_logger(console))
    if result.diverged is not None:
        console.print(f"[bold red]training diverged:[/] {result.diverged}")
        raise typer.Exit(1)
    console.print(f"done: {result.steps} steps; final model in {result.checkpoint}")


def _augmented(rows: list[Any], classes: str, seed: int, console: Console) -> list[Any]:
    from rewardsmith.reward_models.augment import augment_pairs, parse_classes
    from rewardsmith.reward_models.data import PreferencePair
    from rewardsmith.reward_models.exploits import frequent_words

    if not rows or not isinstance(rows[0], PreferencePair):
        raise typer.BadParameter("--augment needs preference pairs (the pairwise objective)")
    try:
        chosen = parse_classes(classes)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    words = frequent_words([p.chosen for p in rows], [p.rejected for p in rows])
    extra = augment_pairs(rows, chosen, seed=seed, words=words)
    console.print(f"augmented: {len(extra)} pairs of {len(chosen)} classes added to {len(rows)}")
    return rows + extra


def average_command(
    output: Annotated[Path, typer.Argument(help="Where the averaged model is written.")],
    models: Annotated[list[Path], typer.Argument(help="Two or more fine-tuned reward models.")],
    data: Annotated[
        str | None, typer.Option(help="Training rows to measure the average's score statistics.")
    ] = "arithmetic",
    split: SplitOpt = "train",
) -> None:
    """Average the weights of reward models fine-tuned from one backbone (WARM)."""
    from rewardsmith.reward_models.warm import average_weights

    console = Console()
    rows = _load(data, split, None, console) if data else None
    try:
        averaged = average_weights([str(m) for m in models], output, rows=rows)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    console.print(f"averaged {len(models)} models into {output} ({_stats(averaged)})")


def stats_command(
    model: Annotated[Path, typer.Argument(help="A saved reward model; its spec is updated.")],
    data: DataArg,
    split: SplitOpt = "train",
    column: ColumnOpt = None,
    objective: Annotated[str, typer.Option(help="pairwise or step")] = "pairwise",
) -> None:
    """Measure a model's score statistics on its training rows (for ensembles of models
    trained elsewhere; rewardsmith's own checkpoints record them already)."""
    from rewardsmith.reward_models.model import RewardModel
    from rewardsmith.reward_models.statistics import record_statistics

    console = Console()
    rows = _load(data, split, column, console, steps=objective == "step")
    rm = record_statistics(RewardModel.load(model), rows, objective)
    rm.save(model)
    console.print(f"{model}: {_stats(rm)}")


def _stats(model: Any) -> str:
    spec = model.spec
    if spec.score_mean is None:
        return "no score statistics"
    return f"score mean {spec.score_mean:.4f}, std {spec.score_std:.4f} over {spec.score_count}"


app = typer.Typer(help="Reward models: train, evaluate, average.", no_args_is_help=True)
app.command("evaluate")(evaluate_command)
app.command("evaluate-steps")(evaluate_steps_command)
app.command("train")(train_command)
app.command("average")(average_command)
app.command("stats")(stats_command)

if __name__ == "__main__":
    app()
