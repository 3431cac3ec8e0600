"""The Hugging Face rollout engine: transformers in the trainer's process, with a KV cache.

Each row draws its randomness from its own generator, seeded by the row's seed: one
uniform number per new token, turned into a token by inverting the tempered softmax's
CDF. So row i's tokens depend only on its seed and its context, whatever else is in the
batch and whichever rank generates it (a 2-process run equals a 1-process run; a resumed
run repeats the same samples), and the sampler holds O(B x vocab) numbers per step, never
a B x T x vocab noise tensor.

    token = min { v : sum_{w <= v} p_w > u * sum_w p_w },  u ~ U(0, 1),  p = softmax(logits / T)

is a sample from p (inverse transform sampling). The prompt is run once (prefill, keeping
only the last position's logits), then one token per step against the cache.

    >>> import tempfile
    >>> from rewardsmith.trainer.tiny import build_tiny_model
    >>> engine = HFEngine.from_pretrained(build_tiny_model(tempfile.mkdtemp()))
    >>> out = engine.generate([[3, 4, 12], [5]], SamplingParams(max_new_tokens=3, seeds=(7, 8)))
    >>> [len(t) for t in out.token_ids], len(out.logprobs[0])
    ([3, 3], 3)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import torch
from torch import Tensor, nn

from rewardsmith.trainer.engine import Generation, SamplingParams
from rewardsmith.trainer.rollout import positions

__all__ = ["HFEngine", "left_pad", "row_uniforms", "sample_from_logits"]


class HFEngine:
    """Samples with a transformers causal LM. `forward` defaults to calling `lm`; the
    trainer passes its policy's `lm_forward` so FSDP gathers the shards for generation."""

    def __init__(
        self,
        lm: nn.Module,
        pad_token_id: int,
        forward: Callable[..., Any] | None = None,
    ) -> None:
        self.lm = lm
        self.pad_token_id = pad_token_id
        self._forward = forward or lm

    @classmethod
    def from_pretrained(
        cls, path: str | Path, dtype: str = "float32", device: str = "cpu"
    ) -> HFEngine:
        """An engine with its own copy of the model in `path` (benchmarks, tools)."""
        from transformers import AutoModelForCausalLM, AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(path)
        lm: nn.Module = AutoModelForCausalLM.from_pretrained(path, dtype=getattr(torch, dtype))
        lm = lm.to(device)
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
        return cls(lm.eval(), int(pad))

    @torch.no_grad()
    def generate(self, prompts: Sequence[Sequence[int]], sampling: SamplingParams) -> Generation:
        device = next(self.lm.parameters()).device
        ids, attn = left_pad(prompts, self.pad_token_id, device)
        steps = sampling.max_new_tokens
        uniforms = row_uniforms(sampling.seeds, len(prompts), steps)
        stops = torch.tensor(sampling.stop_token_ids or (-1,), device=device)
        tokens = torch.full((len(prompts), steps), self.pad_token_id, dtype=torch.long)
        logprobs = torch.zeros((len(prompts), steps), dtype=torch.float32)
        lengths = torch.zeros(len(prompts), dtype=torch.long)
        done = torch.zeros(len(prompts), dtype=torch.bool, device=device)
        pos = positions(attn)
        out = self._forward(
            input_ids=ids, attention_mask=attn, position_ids=pos, use_cache=True, logits_to_keep=1
        )
        next_pos = pos[:, -1:] + 1
        for t in range(steps):
            logits = out.logits[:, -1] / sampling.temperature
            choice, logp = sample_from_logits(logits, uniforms[:, t])
            live = ~done
            tokens[live.cpu(), t] = choice[live].cpu()
            logprobs[live.cpu(), t] = logp[live].cpu()
            lengths += live.cpu().long()
            done = done | torch.isin(choice, stops)
            if bool(done.all()) or t == steps - 1:
                break
            attn = torch.cat([attn, (~done).long().unsqueeze(-1)], dim=-1)
            out = self._forward(
                input_ids=torch.where(done, self.pad_token_id, choice).unsqueeze(-1),
                attention_mask=attn,
                position_ids=next_pos,
                use_cache=True,
                **_cache_argument(out),
            )
            next_pos = next_pos + 1
        stopped = done.cpu().tolist()
        return Generation(
            [tokens[i, :n].tolist() for i, n in enumerate(lengths.tolist())],
            [logprobs[i, :n].tolist() for i, n in enumerate(lengths.tolist())],
            [bool(s) for s in stopped],
        )

    def update_weights(self, state: Mapping[str, Tensor]) -> None:
        """Load `state` (the LM's own parameter names) into this engine's model."""
        self.lm.load_state_dict(dict(state))

    def close(self) -> None:
        """Nothing to release: the model is an ordinary module."""


def _cache_argument(out: Any) -> dict[str, Any]:
    """The KV cache of a forward's output, as the keyword that feeds it to the next forward:
    `cache` from transformers 5.2x on, `past_key_values` before (5.17 on the GPU machine)."""
    if hasattr(out, "cache"):
        return {"cache": out.cache}
    return {"past_key_values": out.past_key_values}


def left_pad(
    prompts: Sequence[Sequence[int]], pad_token_id: int, device: torch.device | str = "cpu"
) -> tuple[Tensor, Tensor]:
    """Token-id lists as one left-padded batch. Shapes: -> ids (B, P), attention mask (B, P)."""
    if not prompts or any(len(p) == 0 for p in prompts):
        raise ValueError("every context needs at least one token")
    width = max(len(p) for p in prompts)
    ids = torch.full((len(prompts), width), pad_token_id, dtype=torch.long)
    mask = torch.zeros((len(prompts), width), dtype=torch.long)
    for row, prompt in enumerate(prompts):
        ids[row, width - len(prompt) :] = torch.tensor(list(prompt), dtype=torch.long)
        mask[row, width - len(prompt) :] = 1
    return ids.to(device), mask.to(device)


def row_uniforms(seeds: Sequence[int] | None, rows: int, steps: int) -> Tensor:
    """U(0, 1) numbers, one per row and step; row i's come from its own seeded generator.

    Shape: (rows, steps), float64. Unseeded (`seeds` None): from torch's global generator.
    """
    if seeds is None:
        return torch.rand((rows, steps), dtype=torch.float64)
    if len(seeds) != rows:
        raise ValueError(f"{len(seeds)} seeds for {rows} contexts: give one seed per context")
    out = torch.empty((rows, steps), dtype=torch.float64)
    for row, seed in enumerate(seeds):
        gen = torch.Generator().manual_seed(seed % (2**63))
        out[row] = torch.rand(steps, generator=gen, dtype=torch.float64)
    return out


def sample_from_logits(logits: Tensor, uniforms: Tensor) -> tuple[Tensor, Tensor]:
    """One token per row from softmax(logits) by inverting its CDF at `uniforms`.

    Shapes: logits (B, V), uniforms (B,) in [0, 1) -> tokens (B,), their log-probs (B,).
    The CDF is summed in float64 so a 151k-token vocabulary loses no mass to rounding;
    `right=True` never picks a token of zero probability.
    """
    logp = torch.log_softmax(logits.float(), dim=-1)
    cdf = logp.double().exp().cumsum(-1)
    target = uniforms.to(cdf.device).unsqueeze(-1) * cdf[:, -1:]
    tokens = torch.searchsorted(cdf, target, right=True).squeeze(-1)
    tokens = tokens.clamp(max=logits.shape[-1] - 1)
    return tokens, logp.gather(-1, tokens.unsqueeze(-1)).squeeze(-1)
