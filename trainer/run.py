"""One entry for every run a config describes: single-turn training on a reward, or
multi-turn training on the environment the config names (`environment: NAME`). The
`rewardsmith train` command and ``python -m rewardsmith.trainer`` (under ``torchrun`` too)
both call `run`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from rewardsmith.trainer.config import TrainConfig
from rewardsmith.trainer.loop import TrainResult, train

__all__ = ["multiturn_setup", "run"]

StepCallback = Callable[[int, dict[str, float]], None]


def multiturn_setup(cfg: TrainConfig) -> tuple[Any, list[Mapping[str, Any]], Any]:
    """The environment, tasks and turn settings `cfg` names; ValueError or OSError naming
    what is wrong (an unknown environment, a bad task line) before any model loads."""
    from rewardsmith.environments.episodes import make_environment, read_tasks
    from rewardsmith.trainer.multiturn import TurnSettings

    if cfg.environment is None:
        raise ValueError("the config names no environment")
    tasks: list[Mapping[str, Any]] = list(read_tasks(Path(cfg.prompts)))
    env = make_environment(cfg.environment)
    return env, tasks, TurnSettings(cfg.turn_tokens, chat_template=cfg.chat_template)


def run(
    cfg: TrainConfig, on_step: StepCallback | None = None, setup: tuple[Any, ...] | None = None
) -> TrainResult:
    """Train as `cfg` says. `setup`: `multiturn_setup(cfg)`'s result, when already made."""
    if cfg.environment is None:
        return train(cfg, on_step=on_step)
    from rewardsmith.trainer.multiturn import train_multiturn

    env, tasks, settings = setup or multiturn_setup(cfg)
    try:
        return train_multiturn(cfg, env, tasks, settings, on_step)
    finally:
        env.close()
