"""Rollouts: sample completions, then score them with policy, reference and value head.

Sampling uses the Gumbel-max trick with noise drawn from a generator seeded by
(run seed, step, global sample index), so sample i of step s is the same token sequence
whichever rank generates it and however the batch is split: a 2-process run equals a
1-process run, and a resumed run continues the same trajectory.

    argmax_v (logit_v / T + g_v),  g_v = -log(-log u_v),  u_v ~ U(0, 1)
    is a sample from softmax(logit / T)   (Gumbel 1954; Maddison et al. 2014).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any

import torch
from torch import Tensor, nn
from transformers import PreTrainedModel

from rewardsmith.trainer.losses import logprobs_from_logits

__all__ = ["PolicyWithValue", "Rollout", "gumbel_noise", "sample_completions", "score_tokens"]


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
        """
        out = self.lm(
            input_ids=input_ids,
            attention_mask=attention_mask,
            position_ids=positions(attention_mask),
            output_hidden_states=self.value_head is not None,
        )
        span = slice(-n_response - 1, -1)  # the state before each response token
        logits = out.logits[:, span].float() / temperature
        values = None
        if self.value_head is not None:
            values = self.value_head(out.hidden_states[-1][:, span]).squeeze(-1).float()
        return logits, values

    def lm_forward(self, **kwargs: Any) -> Any:
        """The LM alone (generation). A method, so FSDP can gather the root's parameters."""
        return self.lm(**kwargs)


def positions(attention_mask: Tensor) -> Tensor:
    """Position ids that skip left padding. Shapes: (B, L) -> (B, L)."""
    return (attention_mask.long().cumsum(-1) - 1).clamp(min=0)


def gumbel_noise(seeds: list[int], steps: int, vocab: int) -> Tensor:
    """Gumbel(0, 1) noise, one (steps, vocab) block per seed. Shape: (B, steps, vocab)."""
    blocks = []
    for seed in seeds:
        gen = torch.Generator().manual_seed(seed % (2**63))
        u = torch.rand((steps, vocab), generator=gen).clamp(1e-20, 1.0 - 1e-7)
        blocks.append(-torch.log(-torch.log(u)))
    return torch.stack(blocks)


@torch.no_grad()
def sample_completions(
    lm: Callable[..., Any],
    prompt_ids: Tensor,
    prompt_mask: Tensor,
    noise: Tensor,
    temperature: float,
    eos_id: int,
    pad_id: int,
) -> tuple[Tensor, Tensor, Tensor]:
    """Sample up to T tokens per row with a KV cache; stop a row at EOS (EOS is kept).

    Shapes: prompt_ids, prompt_mask (B, P), noise (B, T, V) -> completion ids (B, T),
    response mask (B, T) (1.0 on sampled tokens, EOS included), truncated (B,) (no EOS).
    """
    batch, steps = prompt_ids.shape[0], noise.shape[1]
    tokens = torch.full((batch, steps), pad_id, dtype=torch.long, device=prompt_ids.device)
    mask = torch.zeros((batch, steps), device=prompt_ids.device)
    done = torch.zeros(batch, dtype=torch.bool, device=prompt_ids.device)
    attn = prompt_mask.long()
    pos = positions(attn)
    out = lm(input_ids=prompt_ids, attention_mask=attn, position_ids=pos, use_cache=True)
    next_pos = pos[:, -1:] + 1
    for t in range(steps):
        logits = out.logits[:, -1].float() / temperature
        choice = torch.argmax(logits + noise[:, t].to(logits.device), dim=-1)
        tokens[:, t] = torch.where(done, pad_id, choice)
        mask[:, t] = (~done).float()
        done = done | (choice == eos_id)
        if bool(done.all()) or t == steps - 1:
            break
        attn = torch.cat([attn, (~done).long().unsqueeze(-1)], dim=-1)
        out = lm(
            input_ids=tokens[:, t : t + 1],
            attention_mask=attn,
            position_ids=next_pos,
            cache=out.cache,  # transformers 5: `cache` replaces `past_key_values`
            use_cache=True,
        )
        next_pos = next_pos + 1
    return tokens, mask, ~done


@torch.no_grad()
def score_tokens(
    model: PolicyWithValue,
    input_ids: Tensor,
    attention_mask: Tensor,
    n_response: int,
    temperature: float,
) -> tuple[Tensor, Tensor | None]:
    """log pi(completion tokens) and values, for a batch of full sequences."""
    logits, values = model(input_ids, attention_mask, n_response, temperature)
    return logprobs_from_logits(logits, input_ids[:, -n_response:]), values


@dataclass
class Rollout:
    """One rank's (or, after gathering, the whole) batch of sampled sequences.

    Shapes: B sequences, L = P + T tokens (prompt left-padded, completion right-padded).
    """

    input_ids: Tensor
    """(B, L) prompt and completion token ids."""
    attention_mask: Tensor
    """(B, L) 1 on real tokens."""
    response_mask: Tensor
    """(B, T) 1.0 on sampled tokens (EOS included)."""
    truncated: Tensor
    """(B,) 1.0 where the completion hit max_new_tokens without EOS."""
    old_logprobs: Tensor
    """(B, T) log-probabilities under the policy that sampled."""
    ref_logprobs: Tensor
    """(B, T) log-probabilities under the frozen reference (zeros when KL is off)."""
    values: Tensor
    """(B, T) value estimates (zeros without a value head)."""

    def map(self, fn: object) -> Rollout:
        """Apply `fn` to every tensor field (gather, slice, move)."""
        return Rollout(**{f.name: fn(getattr(self, f.name)) for f in fields(self)})  # type: ignore[operator]
