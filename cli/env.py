"""``rewardsmith env``: roll an on-disk model through an environment and write the episodes.

    rewardsmith env tiny-model PATH        # a random char-level GPT-2 to try things with
    rewardsmith env run ENV --tasks FILE --model PATH -o OUT.jsonl [--engine vllm]
    rewardsmith env spec ENV -o SPEC.yaml  # the environment's final reward, as a spec
    rewardsmith score OUT.jsonl --spec SPEC.yaml --map completion=steps -o SCORED.jsonl

The rows are `rewardsmith.environments.episodes.episode_row`'s (see there); the score of their
``steps`` with the printed spec is the environment's own final reward.
"""

from __future__ import annotations

import json
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

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
    engine: Annotated[
        Literal["hf", "vllm"],
        typer.Option(
            help="Rollout engine: hf (transformers, in this process, on --device) or vllm "
            "(the trainer's vLLM server, its own process and venv: `make vllm`)."
        ),
    ] = "hf",
    kv_cache_gb: Annotated[
        float, typer.Option(help="GB vLLM reserves for its KV cache (--engine vllm).")
    ] = 1.0,
) -> None:
    """Roll MODEL through ENVIRONMENT on every task and write one row per episode."""
    if kv_cache_gb <= 0:
        raise typer.BadParameter("more than 0", param_hint="--kv-cache-gb")
    if max_turns is not None and max_turns < 1:
        raise typer.BadParameter("at least 1", param_hint="--max-turns")
    if not model.is_dir():
        raise typer.BadParameter(f"{model}: not a model folder", param_hint="--model")
    if limit is not None and limit < 1:
        raise typer.BadParameter("at least 1", param_hint="--limit")
    if turn_tokens < 1 or max_new_tokens < 1:
        raise typer.BadParameter("at least 1", param_hint="--turn-tokens/--max-new-tokens")
    from rewardsmith.trainer.engine import EngineError
    from rewardsmith.trainer.env_rollout import RolloutSettings

    settings = RolloutSettings(
        seed, turn_tokens, max_new_tokens, temperature, chat_template=chat_template
    )
    try:
        env = make_environment(environment, max_turns)
        task_list = list(islice(read_tasks(tasks), limit))
    except (ValueError, OSError) as exc:
        raise typer.BadParameter(str(exc)) from exc
    output.parent.mkdir(parents=True, exist_ok=True)
    try:
        choice = EngineChoice(engine, device, kv_cache_gb, output.with_suffix(".vllm.log"))
        rows = _run_model(env, environment, task_list, model, choice, settings)
    except (ValueError, OSError, EngineError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from exc
    finally:
        env.close()
    with open(output, "w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, default=str) + "\n")
    rewards = [r["final_reward"] for r in rows if r["final_reward"] is not None]
    mean = sum(rewards) / len(rewards) if rewards else float("nan")
    typer.echo(f"wrote {len(rows)} episodes to {output}; mean final reward {mean:.3f}")


@dataclass(frozen=True)
class EngineChoice:
    """Which engine `env run` opens, and its settings."""

    kind: Literal["hf", "vllm"]
    device: str
    """torch device (hf)."""
    kv_cache_gb: float
    """KV cache (vllm)."""
    log_path: Path
    """The vLLM server's log (vllm)."""


def _run_model(
    env: ToolEnvironment,
    name: str,
    tasks: Sequence[Mapping[str, Any]],
    model: Path,
    choice: EngineChoice,
    settings: RolloutSettings,
) -> list[dict[str, Any]]:
    """The episodes' rows; the tasks are reset and the rows sized (`plan_rollout`) before
    the model's weights are loaded, so a bad task costs no engine start."""
    from transformers import AutoConfig, AutoTokenizer

    from rewardsmith.trainer.env_rollout import open_engine, plan_rollout, roll_out

    tokenizer = AutoTokenizer.from_pretrained(model)
    positions = getattr(AutoConfig.from_pretrained(model), "max_position_embeddings", None)
    settings = replace(settings, positions=positions)
    plan = plan_rollout(env, tasks, tokenizer, settings)
    engine = open_engine(
        choice.kind,
        model,
        plan,
        seed=settings.seed,
        device=choice.device,
        kv_cache_gb=choice.kv_cache_gb,
        log_path=choice.log_path,
    )
    try:
        return roll_out(env, name, tasks, engine, tokenizer, settings, plan)
    finally:
        engine.close()


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
