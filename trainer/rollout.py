"""Rollout batches: token ids packed into tensors, then scored by policy, reference and value.

A rollout row is a left-padded prompt of width P followed by a right-padded response of
width T. The response holds what the policy sampled and, in a multi-turn episode, the
observation tokens the environment appended between turns. Two masks say which is which:

    attention_mask (B, P + T)   1 on every real token (prompt, actions, observations)
    action_mask    (B, T)       1 only on tokens the policy sampled: the loss mask

Observation tokens are context (attended to, never trained on): every loss and the KL take
`action_mask`, so they carry no gradient.

    >>> ids, attn, actions = pack_sequences([[5, 6], [7]], [[1, 2, 3], [4]], [[1, 0, 1], [1]],
    ...                                    prompt_width=2, response_width=3, pad_token_id=0)
    >>> ids.tolist(), actions.tolist()
    ([[5, 6, 1, 2, 3], [0, 7, 4, 0, 0]], [[1.0, 0.0, 1.0], [1.0, 0.0, 0.0]])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from typing import Any

import torch
from torch import Tensor, nn
from transformers import PreTrainedModel

from rewardsmith.trainer.losses import logprobs_from_logits

__all__ = ["PolicyWithValue", "Rollout", "pack_sequences", "positions", "score_tokens"]

ScoreFn = Callable[[Tensor, Tensor, int, float], tuple[Tensor, Tensor | None]]


class PolicyWithValue(nn.Module):
    """A causal LM and, for PPO, a scalar value head on its last hidden state."""

    def __init__(self, lm: PreTrainedModel, with_value: bool) -> None:
        super().__init__()
        self.lm = lm
        hidden = int(lm.config.hidden_size)
        self.value_head = nn.Linear(hidden, 1) if with_value else None
        if self.value_head is not None:
            nn.init.zeros_(self.value_head.weight)  # start from V = 0: no false confidence
            nn.init.zeros_(self.value_head.bias)

    def forward(
        self, input_ids: Tensor, attention_mask: Tensor, n_response: int, temperature: float
    ) -> tuple[Tensor, Tensor | None]:
        """Logits for the last `n_response` tokens and the values of the states before them.

        Shapes: input_ids, attention_mask (B, L) -> logits (B, T, V), values (B, T) | None.
        Only the T + 1 last positions go through the LM head (no P x vocab logits).
        """
        out = self.lm(
            input_ids=input_ids,
            attention_mask=attention_mask,
            position_ids=positions(attention_mask),
            output_hidden_states=self.value_head is not None,
            logits_to_keep=n_response + 1,
        )
        logits = out.logits[:, :-1].float() / temperature  # the state before each token
        values = None
        if self.value_head is not None:
            span = slice(-n_response - 1, -1)
            values = self.value_head(out.hidden_states[-1][:, span]).squeeze(-1).float()
        return logits, values

    def lm_forward(self, **kwargs: Any) -> Any:
        """The LM alone (generation). A method, so FSDP can gather the root's parameters."""
        return self.lm(**kwargs)


def positions(attention_mask: Tensor) -> Tensor:
    """Position ids that skip left padding. Shapes: (B, L) -> (B, L)."""
    return (attention_mask.long().cumsum(-1) - 1).clamp(min=0)


def pack_sequences(
    prompts: Sequence[Sequence[int]],
    responses: Sequence[Sequence[int]],
    action_masks: Sequence[Sequence[int]] | None,
    prompt_width: int,
    response_width: int,
    pad_token_id: int,
) -> tuple[Tensor, Tensor, Tensor]:
    """Prompts left-padded to `prompt_width`, responses right-padded to `response_width`.

    `action_masks[i][j]` is 1 where response token j of row i was sampled by the policy and
    0 where it is an observation (None: every response token was sampled, single-turn).
    Shapes: -> input_ids (B, P + T), attention_mask (B, P + T), action_mask (B, T) float.
    """
    rows = len(prompts)
    ids = torch.full((rows, prompt_width + response_width), pad_token_id, dtype=torch.long)
    attention = torch.zeros_like(ids)
    actions = torch.zeros((rows, response_width), dtype=torch.float32)
    for i, (prompt, response) in enumerate(zip(prompts, responses, strict=True)):
        if len(prompt) > prompt_width or len(response) > response_width:
            raise ValueError(
                f"row {i}: {len(prompt)} prompt and {len(response)} response tokens do not fit "
                f"widths {prompt_width} and {response_width}"
            )
        start = prompt_width - len(prompt)
        ids[i, start:prompt_width] = torch.tensor(list(prompt), dtype=torch.long)
        ids[i, prompt_width : prompt_width + len(response)] = torch.tensor(list(response))
        attention[i, start : prompt_width + len(response)] = 1
        mask = [1] * len(response) if action_masks is None else list(action_masks[i])
        if len(mask) != len(response):
            raise ValueError(f"row {i}: action mask of {len(mask)} for {len(response)} tokens")
        actions[i, : len(response)] = torch.tensor(mask, dtype=torch.float32)
    return ids, attention, actions


@torch.no_grad()
def score_tokens(
    model: ScoreFn | nn.Module,
    input_ids: Tensor,
    attention_mask: Tensor,
    n_response: int,
    temperature: float,
    rows_per_pass: int | None = None,
) -> tuple[Tensor, Tensor | None]:
    """log pi(response tokens) and values for full sequences, `rows_per_pass` rows at a time
    (so memory holds rows_per_pass x T x vocab logits, not B x T x vocab).

    Shapes: (B, L) -> logprobs (B, T), values (B, T) | None.
    """
    step = rows_per_pass or input_ids.shape[0]
    logprobs, values = [], []
    for start in range(0, input_ids.shape[0], step):
        rows = slice(start, start + step)
        logits, value = model(input_ids[rows], attention_mask[rows], n_response, temperature)
        logprobs.append(logprobs_from_logits(logits, input_ids[rows, -n_response:]))
        if value is not None:
            values.append(value)
        del logits
    return torch.cat(logprobs), torch.cat(values) if values else None


@dataclass
class Rollout:
    """One rank's (or, after gathering, the whole) batch of sampled sequences.

    Shapes: B sequences, L = P + T tokens (prompt left-padded, response right-padded).
    """

    input_ids: Tensor
    """(B, L) prompt and response token ids."""
    attention_mask: Tensor
    """(B, L) 1 on real tokens (observations included)."""
    action_mask: Tensor
    """(B, T) 1.0 on tokens the policy sampled (EOS included), 0 on padding and observations."""
    truncated: Tensor
    """(B,) 1.0 where the episode was cut off (max_new_tokens without EOS) rather than ended."""
    old_logprobs: Tensor
    """(B, T) log-probabilities under the policy that sampled."""
    ref_logprobs: Tensor
    """(B, T) log-probabilities under the frozen reference (zeros when KL is off)."""
    values: Tensor
    """(B, T) value estimates (zeros without a value head)."""
    engine_logprobs: Tensor
    """(B, T) the engine's own log-probs of its tokens: a check on `old_logprobs`, unused by
    the loss (`rollout/engine_logprob_gap` logs their mean absolute difference)."""

    def map(self, fn: object) -> Rollout:
        """Apply `fn` to every tensor field (gather, slice, move)."""
        return Rollout(**{f.name: fn(getattr(self, f.name)) for f in fields(self)})  # type: ignore[operator]
