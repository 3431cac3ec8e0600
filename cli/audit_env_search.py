"""``rewardsmith audit --env NAME --search``: the metamorphic search over an environment's
episodes.

The search itself is `cli.audit_search`'s (UCB1 over relations, hill-climbing from what
moved the score, shrinking, witnesses); here its samples are episodes
(`environments.episode_relations`: a task and a scripted policy's actions), its right
answers the expert's and the lazy policy's episodes on the bundled tasks
(`environments.policies`), its relations the environment's
(`environments.bundled_relations`), and a sample's score is the episode's return played
through the environment (`environments.episode_exploits.played`). The budget counts
episodes played (each distinct one once); an environment that fails (its sandbox did not
start) stops the search with `EnvironmentFailure`, never a witness.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rewardsmith.cli.audit_search import (
    ScoreMany,
    SearchResult,
    Witness,
    _Scores,
    content_key,
    new_leaf,
    search_leaf,
)
from rewardsmith.cli.audit_search_io import print_search, recheck_with, replay_with, save_witnesses
from rewardsmith.environments.base import EnvironmentFailure, ToolEnvironment
from rewardsmith.environments.bundled_relations import relations_for_environment
from rewardsmith.environments.episode_exploits import played
from rewardsmith.environments.episode_relations import actions_of, episode_sample, task_of
from rewardsmith.environments.policies import POLICIES, Policies
from rewardsmith.verifiers.types import Sample

__all__ = [
    "env_search_command",
    "episode_scores",
    "recheck_episode",
    "replay_episode",
    "run_env_search",
    "starting_episodes",
]


def episode_scores(env: ToolEnvironment) -> ScoreMany:
    """Each episode's return, played through ``env`` one after another."""

    def score_many(samples: list[Sample]) -> list[float | None]:
        values: list[float | None] = []
        for sample in samples:
            value, end = played(env, task_of(sample), actions_of(sample))
            if end.startswith("environment_error"):
                raise EnvironmentFailure(f"{env.name}, episode {sample.id}: {end}")
            values.append(value)
        return values

    return score_many


def starting_episodes(
    env: str, tasks: Sequence[Mapping[str, Any]], policies: Policies | None = None
) -> list[Sample]:
    """The expert's and the lazy policy's episode on every task (where each has one)."""
    chosen = policies or POLICIES.get(env)
    if chosen is None:
        raise ValueError(f"no scripted policies for {env!r}; bundled: {', '.join(POLICIES)}")
    episodes = []
    for task in tasks:
        for policy, play in (("expert", chosen.expert), ("lazy", chosen.lazy)):
            actions = play(task)
            if actions:
                episodes.append(episode_sample(env, task, actions, policy))
    return episodes


def _keeps(sample: Sample, value: float | None) -> bool:
    """A root: an expert episode that earns reward; any lazy one (dressing must not lift
    what it earns, even 0)."""
    if value is None:
        return False
    return value > 0 or sample.meta.get("policy") != "expert"


def run_env_search(
    env: ToolEnvironment,
    tasks: Sequence[Mapping[str, Any]],
    *,
    policies: Policies | None = None,
    budget: int = 60,
    seconds: float = 600.0,
    seed: int = 0,
    depth: int = 3,
    batch: int = 4,
) -> SearchResult:
    """Search ``env``'s episode relations from its scripted policies on ``tasks``, playing
    at most ``budget`` new episodes (the starting episodes not counted) within about
    ``seconds`` (checked between batches of ``batch`` episodes)."""
    if budget < 1 or depth < 1 or batch < 1:
        raise ValueError(f"need budget, depth and batch >= 1, got {budget}, {depth}, {batch}")
    started = time.monotonic()
    scores = _Scores(episode_scores(env))
    episodes = starting_episodes(env.name, tasks, policies)
    result = SearchResult(len(episodes))
    relations = relations_for_environment(env)
    leaf = new_leaf(env.name, env.name, relations, episodes, scores, depth, seed, _keeps)
    if isinstance(leaf, str):
        result.skipped.append(leaf)
    else:
        search_leaf(leaf, budget, started + seconds, batch, result)
    for episode in episodes:
        value = scores.known.get(content_key(episode))
        if episode.meta.get("policy") == "expert" and not value:
            result.skipped.append(f"{episode.id}: the expert earns {value} (see audit --env)")
    result.scored, result.seconds = scores.scored, time.monotonic() - started
    return result


def replay_episode(witness: Witness, env: ToolEnvironment) -> Sample | None:
    """The witness's episode, made again from its starting episode and chain."""
    return replay_with(witness, relations_for_environment(env))


def recheck_episode(witness: Witness, env: ToolEnvironment) -> float:
    """How far the witness's chain, played again, now breaks its relation (0 once the
    environment is fixed)."""
    return recheck_with(witness, relations_for_environment(env), _Scores(episode_scores(env)))


def env_search_command(
    env: ToolEnvironment,
    tasks: Sequence[Mapping[str, Any]],
    settings: Mapping[str, Any],
    json_path: Path | None,
    witnesses: Path | None,
) -> bool:
    """Search, print the table, write what was asked for; True when nothing broke."""
    result = run_env_search(env, tasks, **settings)
    for witness in result.witnesses:
        witness.task_set = f"env:{env.name}"
    print_search(f"environment {env.name}", result)
    if witnesses is not None:
        save_witnesses(result.witnesses, witnesses, f"env-{env.name}")
    if json_path is not None:
        json_path.write_text(json.dumps({env.name: result.to_dict()}, indent=2))
    return result.ok
