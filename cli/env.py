"""``rewardsmith env``: roll an on-disk model through an environment and write the episodes.

    rewardsmith env tiny-model PATH        # a random char-level GPT-2 to try things with
    rewardsmith env run ENV --tasks FILE --model PATH -o OUT.jsonl
    rewardsmith env spec ENV -o SPEC.yaml  # the environment's final reward, as a spec
    rewardsmith score OUT.jsonl --spec SPEC.yaml --map completion=steps -o SCORED.jsonl

The rows are `rewardsmith.environments.episodes.episode_row`'s (see there); the score of their
``steps`` with the printed spec is the environment's own final reward.
"""

from __future__ import annotations

import json
import string
from collections.abc import Mapping, Sequence
from dataclasses import replace
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from rewardsmith.environments.base import ToolEnvironment
from rewardsmith.environments.episodes import (
    ENVIRONMENTS,
    make_environment,
    read_tasks,
    spec_document,
)

if TYPE_CHECKING:  # the trainer (torch) is imported only when a model is rolled out
    from rewardsmith.trainer.env_rollout import RolloutSettings

__all__ = ["TINY_MODEL", "env_app"]

env_app = typer.Typer(help="Roll a model through a multi-turn environment.", no_args_is_help=True)


@env_app.command("run")
def run_command(
    environment: Annotated[
        str, typer.Argument(help=f"One of: {', '.join(ENVIRONMENTS)}, or an installed plugin's.")
    ],
    tasks: Annotated[Path, typer.Option(help="JSONL tasks (the environment's task format).")],
    model: Annotated[Path, typer.Option(help="A causal LM and its tokenizer, on disk.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="The JSONL dump to write.")] = Path(
        "episodes.jsonl"
    ),
    max_turns: Annotated[
        int | None, typer.Option(help="Model turns per episode (default: the environment's).")
    ] = None,
    seed: Annotated[int, typer.Option(help="Sampling seed (each episode has its own).")] = 0,
    turn_tokens: Annotated[int, typer.Option(help="New tokens per model turn at most.")] = 256,
    max_new_tokens: Annotated[
        int, typer.Option(help="Tokens of all turns and observations of an episode at most.")
    ] = 2048,
    temperature: Annotated[float, typer.Option(help="Sampling temperature.")] = 1.0,
    device: Annotated[str, typer.Option(help="torch device for the model.")] = "cpu",
    limit: Annotated[int | None, typer.Option(help="Run the first N tasks only.")] = None,
    chat_template: Annotated[
        bool,
        typer.Option(
            help="Render the prompt, observations and tools with the tokenizer's chat "
            "template, as a chat model sees them in production."
        ),
    ] = False,
) -> None:
    """Roll MODEL through ENVIRONMENT on every task and write one row per episode."""
    if max_turns is not None and max_turns < 1:
        raise typer.BadParameter("at least 1", param_hint="--max-turns")
    if not model.is_dir():
        raise typer.BadParameter(f"{model}: not a model folder", param_hint="--model")
    if limit is not None and limit < 1:
        raise typer.BadParameter("at least 1", param_hint="--limit")
    if turn_tokens < 1 or max_new_tokens < 1:
        raise typer.BadParameter("at least 1", param_hint="--turn-tokens/--max-new-tokens")
    from rewardsmith.trainer.env_rollout import RolloutSettings

    settings = RolloutSettings(
        seed, turn_tokens, max_new_tokens, temperature, chat_template=chat_template
    )
    try:
        env = make_environment(environment, max_turns)
        task_list = list(islice(read_tasks(tasks), limit))
    except (ValueError, OSError) as exc:
        raise typer.BadParameter(str(exc)) from exc
    try:
        rows = _run_model(env, environment, task_list, model, device, settings)
    except (ValueError, OSError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from exc
    finally:
        env.close()
    output.parent.mkdir(parents=True, exist_ok=True)
    with open(output, "w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, default=str) + "\n")
    rewards = [r["final_reward"] for r in rows if r["final_reward"] is not None]
    mean = sum(rewards) / len(rewards) if rewards else float("nan")
    typer.echo(f"wrote {len(rows)} episodes to {output}; mean final reward {mean:.3f}")


def _run_model(
    env: ToolEnvironment,
    name: str,
    tasks: Sequence[Mapping[str, Any]],
    model: Path,
    device: str,
    settings: RolloutSettings,
) -> list[dict[str, Any]]:
    from transformers import AutoTokenizer

    from rewardsmith.trainer.env_rollout import roll_out
    from rewardsmith.trainer.hf_engine import HFEngine

    tokenizer = AutoTokenizer.from_pretrained(model)
    engine = HFEngine.from_pretrained(model, device=device)
    positions = getattr(engine.lm.config, "max_position_embeddings", None)
    settings = replace(settings, positions=positions)
    return roll_out(env, name, tasks, engine, tokenizer, settings)


@env_app.command("spec")
def spec_command(
    environment: Annotated[
        str, typer.Argument(help=f"One of: {', '.join(ENVIRONMENTS)}, or an installed plugin's.")
    ],
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write it here (default: print it).")
    ] = None,
) -> None:
    """ENVIRONMENT's final-reward spec (YAML), for `rewardsmith score --spec`."""
    import yaml

    try:
        env = make_environment(environment)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from exc
    text = yaml.safe_dump(spec_document(env.final_reward), sort_keys=False)
    if output is None:
        typer.echo(text, nl=False)
        return
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(text, encoding="utf-8")
    typer.echo(f"wrote {output}")


@env_app.command("tiny-model")
def tiny_model_command(
    path: Annotated[Path, typer.Argument(help="The folder to write the model to.")],
    seed: Annotated[int, typer.Option(help="Initialisation seed.")] = 0,
) -> None:
    """Write a random tiny model to PATH, to try `env run` with (it solves nothing).

    A 1-layer GPT-2 over printable ASCII with 1,024 positions, as the tests build it, with
    a small chat template for `env run --chat-template`.
    """
    from rewardsmith.trainer.tiny import CHAT_TEMPLATE, build_tiny_model

    build_tiny_model(path, **TINY_MODEL, seed=seed, chat_template=CHAT_TEMPLATE)
    typer.echo(f"wrote {path}")


TINY_MODEL: dict[str, Any] = {
    "alphabet": string.printable,
    "n_layer": 1,
    "n_embd": 32,
    "n_head": 4,
    "n_positions": 1024,
}
"""The shape of `env tiny-model`'s model (the tests build the same)."""
