"""The `Environment` protocol and its explicit episode state.

An episode's whole state is an `EpisodeState`: frozen, JSON-serialisable (`to_dict`,
`from_dict`), so an episode can be checkpointed, sent to another process, or resumed, and
an environment object holds no per-episode state at all (it is picklable and shared by
every episode). The model never sees the state: it sees observations.

    reset(task)                 -> (state, first observation: the prompt)
    step(state, action[, n])    -> Transition(state, observation, reward, done)
    truncate(state, reason)     -> Transition: the episode ends now (a driver's token
                                   budget ran out), scored as it stands

An environment whose episodes live partly outside their state (a live interpreter session
it keeps open) says so with ``resumable = False`` (`resumable(env)`): a saved state of one
cannot continue its episode after a restart, so the trainer will not carry one across a
checkpoint.

`Transition.reward` is a `rewardsmith.graders.Reward` from the environment's `Scorer`, or
None on a step that earns nothing yet: a per-step shaping reward where the environment
gives one, the final reward when `done`. The verdicts inside it say why.

    >>> limits = EpisodeLimits(max_turns=2, max_tokens=100)
    >>> state = EpisodeState(task={"id": "t"}).after_turn(action_tokens=3)
    >>> state.turn, state.tokens, limits.exhausted(state)
    (1, 3, '')
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from typing import Any, NamedTuple, Protocol, runtime_checkable

from rewardsmith.graders import Reward

__all__ = ["Environment", "EpisodeLimits", "EpisodeState", "Transition", "resumable"]


@dataclass(frozen=True)
class EpisodeLimits:
    """When an episode ends whatever the model does: an episode that never answers ends."""

    max_turns: int = 4
    """Model turns (actions) at most; the last turn's action is the final answer."""
    max_tokens: int = 4096
    """Action tokens (as the driver counts them) summed over the episode at most."""
    max_action_chars: int = 20_000
    """An action longer than this is not parsed (a clear observation says so)."""

    def __post_init__(self) -> None:
        if self.max_turns < 1 or self.max_tokens < 1 or self.max_action_chars < 1:
            raise ValueError("max_turns, max_tokens and max_action_chars must be at least 1")

    def exhausted(self, state: EpisodeState) -> str:
        """Why the episode must end after this state ('' when it may go on)."""
        if state.turn >= self.max_turns:
            return "turn_limit"
        if state.tokens >= self.max_tokens:
            return "token_budget"
        return ""


@dataclass(frozen=True)
class EpisodeState:
    """Everything about one episode. `task` holds the reference: it stays here, never in
    an observation. `messages` is the chat so far (transformers' message dicts, tool calls
    included); `attempts` the trajectory steps the rewards are computed from."""

    task: Mapping[str, Any]
    messages: tuple[Mapping[str, Any], ...] = ()
    attempts: tuple[Mapping[str, Any], ...] = ()
    """One ``{"action", "observation", "meta"}`` per turn: a `verifiers.types.Step`."""
    turn: int = 0
    tokens: int = 0
    done: bool = False
    end: str = ""
    """How it ended: 'answered', 'turn_limit', 'token_budget', or a driver's reason."""

    def after_turn(self, action_tokens: int) -> EpisodeState:
        return replace(self, turn=self.turn + 1, tokens=self.tokens + action_tokens)

    def with_messages(self, *messages: Mapping[str, Any]) -> EpisodeState:
        return replace(self, messages=(*self.messages, *messages))

    def with_attempt(self, action: str, observation: str | None, **meta: Any) -> EpisodeState:
        step = {"action": action, "observation": observation, "meta": meta}
        return replace(self, attempts=(*self.attempts, step))

    def ended(self, end: str) -> EpisodeState:
        return replace(self, done=True, end=end)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> EpisodeState:
        fields_ = dict(data)
        fields_["messages"] = tuple(fields_.get("messages", ()))
        fields_["attempts"] = tuple(fields_.get("attempts", ()))
        return cls(**fields_)


class Transition(NamedTuple):
    """What one step gives back. `observation` is None when the episode is done."""

    state: EpisodeState
    observation: str | None
    reward: Reward | None
    done: bool


@runtime_checkable
class Environment(Protocol):
    """A task environment; see the module doc."""

    name: str
    limits: EpisodeLimits

    def reset(self, task: Mapping[str, Any]) -> tuple[EpisodeState, str]: ...

    def step(
        self, state: EpisodeState, action: str, action_tokens: int | None = None
    ) -> Transition: ...

    def truncate(self, state: EpisodeState, reason: str) -> Transition: ...


def resumable(env: Environment) -> bool:
    """Whether a saved `EpisodeState` of `env` continues its episode after a restart (an
    environment says otherwise with ``resumable = False``; see the module doc)."""
    return bool(getattr(env, "resumable", True))
