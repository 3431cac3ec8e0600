"""The "wrong, try again" arithmetic environment: the demo's two-turn task.

The model answers a sum ("3+4=" -> "7"); a wrong answer is told so and gets another
turn, up to `max_turns`. Every answer is scored by the environment's `Scorer` (the
`math` verifier on the integer and a format check, the single-turn demo's reward), and
the final reward is the last answer's. A wrong answer that gets another turn earns
nothing yet (its `Transition.reward` is None): the episode's return is its final reward,
whatever path led there. Paying each wrong turn its own score (0.2 for a formatted wrong
number) made a wrong answer first worth more than the right one (0.2 + 1.0 against 1.0,
red team of issue 24), which per-turn credit would have taught. An answer that leaves the
sum to the checker (``\\boxed{3+4}``, 0.8 before) is refused (`value_answer`).

    >>> env = RetryArithmetic()
    >>> state, prompt = env.reset({"id": "a", "prompt": "3+4=", "reference": "7"})
    >>> first = env.step(state, "8")
    >>> first.observation, first.done, first.reward
    ('wrong, try again', False, None)
    >>> env.step(first.state, "7").reward.value
    1.0
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, ClassVar

from rewardsmith.environments.base import ToolEnvironment
from rewardsmith.environments.episode_exploits import EpisodeExploit
from rewardsmith.environments.protocol import EpisodeLimits, EpisodeState, Transition
from rewardsmith.environments.value_answer import refuse_computation
from rewardsmith.verifiers.types import Status

__all__ = ["RETRY_REWARD", "RetryArithmetic"]

RETRY_REWARD: dict[str, dict[str, Any]] = {
    "math": {"weight": 0.8},
    "format": {"weight": 0.2, "patterns": [r"^\d{1,2}$"]},
}


class RetryArithmetic(ToolEnvironment):
    """Sums with a second chance. No tools: every action is an answer."""

    name: ClassVar[str] = "retry_arithmetic"

    def __init__(
        self,
        retry_text: str = "wrong, try again",
        limits: EpisodeLimits | None = None,
        scorer: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(RETRY_REWARD, limits or EpisodeLimits(max_turns=2, max_tokens=64), scorer)
        self.retry_text = retry_text

    def answer(self, state: EpisodeState, action: str) -> Transition:
        refused = refuse_computation(state, action)
        if refused is not None:
            return refused
        state = state.with_attempt(action, None, kind="answer")
        reward = self.score(self.final_reward, state)
        verdict = reward.verdicts.get("math")
        if (verdict is not None and verdict.status is Status.PASS) or (
            self.limits.exhausted(state)
        ):
            return Transition(state.ended("answered"), None, reward, True)
        said = self.feedback(state, action)
        attempts = (*state.attempts[:-1], {**state.attempts[-1], "observation": said})
        state = EpisodeState.from_dict({**state.to_dict(), "attempts": attempts})
        state = state.with_messages({"role": "user", "content": said})
        return Transition(state, said, None, False)  # paid by the final answer

    def feedback(self, state: EpisodeState, action: str) -> str:
        """What a wrong answer is told: `retry_text` (a subclass may say more, e.g. which
        way it is off; never the answer)."""
        return self.retry_text

    def exploits(self, tasks: Sequence[Mapping[str, Any]]) -> Iterator[EpisodeExploit]:
        from rewardsmith.environments.answer_exploits import retry_exploits

        return retry_exploits(tasks)
