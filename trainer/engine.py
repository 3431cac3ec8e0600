"""The rollout engine interface: token ids in, sampled token ids and their log-probs out.

The trainer never asks how tokens are produced. An engine takes a batch of contexts as
token ids (no padding; each may have a different length), samples a continuation of
each, and returns the new token ids with the log-probability of each under the
temperature-scaled softmax it sampled from. `update_weights` gives it the policy's new
parameters after each optimiser step. Two engines implement it: `HFEngine`
(transformers, in the trainer's process: tiny models and tests) and `VLLMEngine`
(vLLM in its own process and venv; weights pushed after each update).

Continuing from token ids is what a multi-turn driver needs: generate for every
episode, append each episode's observation tokens (a tool result) to its context, and
call `generate` again on the longer contexts. The trainer recomputes old log-probs
itself; an engine's log-probs are a check, not an input to the loss.

    >>> params = SamplingParams(max_new_tokens=4, seeds=(1, 2), stop_token_ids=(0,))
    >>> params.seed_for(1)
    2
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from torch import Tensor

__all__ = ["EngineError", "Generation", "RolloutEngine", "SamplingParams"]


class EngineError(RuntimeError):
    """An engine could not start, died, or answered something other than a generation."""


@dataclass(frozen=True)
class SamplingParams:
    """How to sample one batch. Sampling is from the full softmax at `temperature` (no
    top-k or top-p), so the log-probs are those the PPO ratio and the KL assume."""

    max_new_tokens: int
    """At most this many new tokens per context; a row that reaches it is truncated."""
    temperature: float = 1.0
    """Softmax temperature; log-probs are of the tempered distribution."""
    seeds: tuple[int, ...] | None = None
    """One seed per context: the same seed and context give the same tokens, whatever
    else is in the batch (the HF engine; vLLM seeds each request too, but its numerics
    depend on the batch). None: unseeded."""
    stop_token_ids: tuple[int, ...] = field(default_factory=tuple)
    """A row stops after emitting one of these (it is kept as the row's last token)."""

    def __post_init__(self) -> None:
        if self.max_new_tokens < 1:
            raise ValueError(f"max_new_tokens must be >= 1, got {self.max_new_tokens}")
        if not 0 < self.temperature <= 10:
            raise ValueError(f"temperature must be in (0, 10], got {self.temperature}")

    def seed_for(self, row: int) -> int | None:
        return None if self.seeds is None else self.seeds[row]


@dataclass(frozen=True)
class Generation:
    """What an engine sampled for each context, in the order of the contexts."""

    token_ids: list[list[int]]
    """The new tokens of each row (a stop token, when one ended the row, is the last)."""
    logprobs: list[list[float]]
    """log pi(token | context) of each new token under the tempered softmax."""
    stopped: list[bool]
    """True where a stop token ended the row; False where max_new_tokens cut it off."""

    def __post_init__(self) -> None:
        if not len(self.token_ids) == len(self.logprobs) == len(self.stopped):
            raise EngineError("a generation needs one token list, log-prob list and flag per row")
        for row, (tokens, logprobs) in enumerate(zip(self.token_ids, self.logprobs, strict=True)):
            if len(tokens) != len(logprobs):
                raise EngineError(f"row {row}: {len(tokens)} tokens but {len(logprobs)} log-probs")


@runtime_checkable
class RolloutEngine(Protocol):
    """Samples continuations of token-id contexts with the policy's current weights."""

    def generate(self, prompts: Sequence[Sequence[int]], sampling: SamplingParams) -> Generation:
        """Continue each context; `sampling.seeds`, when given, has one seed per context."""
        ...

    def update_weights(self, state: Mapping[str, Tensor]) -> None:
        """Use these parameters (the LM's state dict, Hugging Face names) from now on."""
        ...

    def close(self) -> None:
        """Release what the engine holds (a process, a model copy)."""
        ...
