"""Per-turn credit against episode-level credit where credit assignment matters.

The task has two turns and only the first action matters: the model answers a sum, is
told "noted, go on", takes a second turn whose action changes nothing, and the episode's
final reward is the first answer's (`math` 0.8 + format 0.2). The first turn's reward is
also that step's `Transition.reward`. With `turn_credit: final` (PPO, GAE, lambda 0.95)
the signal reaches the first turn's tokens only through the second turn's tokens, its
critic estimates and the lambda decay; with `per_turn` it is placed on the first turn's
last token as well. Same model, seed, batch and steps; seeded and deterministic on CPU.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any, ClassVar

import pytest

from rewardsmith.environments.arithmetic import RETRY_REWARD
from rewardsmith.environments.base import ToolEnvironment
from rewardsmith.environments.protocol import EpisodeLimits, EpisodeState, Transition
from rewardsmith.trainer.config import TrainConfig
from rewardsmith.trainer.multiturn import TurnSettings, train_multiturn
from rewardsmith.trainer.tiny import ARITHMETIC_ALPHABET, build_tiny_model

REPO = Path(__file__).resolve().parents[2]
SUMS = [json.loads(r) for r in (REPO / "datasets/arithmetic/tasks.jsonl").read_text().splitlines()]
GO_ON = "noted, go on"
TURN_TOKENS = 3
STEPS = 16
SEED = 0
"""The run's seed (sampling; the model is built with seed 0), the one this test was written
with. Margins per_turn - final (the mean final reward over 16 steps), seeds 0-4, measured
2026-12-05: with e167fc9's math reader 0.0086, 0.0078, 0.0172, 0.0143, 0.0316; with
letters glued to a bare number read with it ("9t" is no longer 9: it earns 0 where it
earned 0.8) -0.0205, 0.0029, 0.0172, 0.0184, -0.0014, mean +0.0033 (over 32 steps, seeds
0-3: -0.0093, 0.0092, 0.0239, 0.0077). Under the corrected reward the advantage of
per-turn credit on this toy is within the seeds' spread, so this test no longer claims it
(choosing the seed where it shows would be choosing the data)."""


class FirstTurnMatters(ToolEnvironment):
    """Two turns; the final reward is the first answer's, the second action is ignored."""

    name: ClassVar[str] = "first_turn_matters"

    def __init__(self) -> None:
        super().__init__(RETRY_REWARD, EpisodeLimits(max_turns=2, max_tokens=64))

    def answer(self, state: EpisodeState, action: str) -> Transition:
        state = state.with_attempt(action, None, kind="answer")
        if state.turn == 1:
            reward = self.score(self.final_reward, state)
            return Transition(
                state.with_messages({"role": "user", "content": GO_ON}), GO_ON, reward, False
            )
        final = self.score(self.final_reward, state, attempts=1)
        return Transition(state.ended("answered"), None, final, True)


def test_the_second_action_changes_nothing() -> None:
    env = FirstTurnMatters()
    try:
        state, _ = env.reset(SUMS[0])
        first = env.step(state, str(SUMS[0]["reference"]))
        assert first.observation == GO_ON and first.reward is not None
        ends = [env.step(first.state, second) for second in ("", "7", "wrong")]
        assert {t.reward.value for t in ends if t.reward} == {first.reward.value} == {1.0}
    finally:
        env.close()


def _curve(model: str, out: Path, credit: str) -> list[float]:
    cfg = TrainConfig(
        model=model,
        prompts="unused",
        output_dir=str(out),
        algorithm="ppo",
        turn_credit=credit,
        steps=STEPS,
        prompts_per_step=8,
        group_size=8,
        minibatch_size=32,
        max_prompt_tokens=4,
        max_new_tokens=2 * TURN_TOKENS + len(GO_ON) + 2,
        lr=3e-3,
        kl_coef=0.0,
        tensorboard=False,
        reward_overlap="off",  # on-policy, as measured below (overlap: test_multiturn_runs.py)
        seed=SEED,
    )
    env = FirstTurnMatters()
    try:
        train_multiturn(cfg, env, SUMS, TurnSettings(turn_tokens=TURN_TOKENS))
    finally:
        env.close()
    rows: list[dict[str, Any]] = [
        json.loads(r) for r in (out / "metrics.jsonl").read_text().splitlines()
    ]
    return [float(r["reward/final"]) for r in rows]


@pytest.mark.slow
def test_per_turn_credit_changes_the_update_and_still_learns(tmp_path: Path) -> None:
    alphabet = ARITHMETIC_ALPHABET + "".join(sorted(set(GO_ON)))
    model = build_tiny_model(tmp_path / "model", alphabet=alphabet)
    per_turn = _curve(model, tmp_path / "per_turn", "per_turn")
    final = _curve(model, tmp_path / "final", "final")
    assert per_turn[0] == final[0]  # the same first batch: only the credit differs
    assert per_turn != final  # the per-turn term reaches the update (else one run twice)
    # Whether it learns faster is not asserted: see SEED for the margins on five seeds.
    assert statistics.mean(per_turn[-4:]) > statistics.mean(per_turn[:4]) + 0.05
    assert statistics.mean(final[-4:]) > statistics.mean(final[:4]) + 0.05
