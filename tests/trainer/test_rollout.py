"""Sampling: layout-independent, exact about EOS and truncation, a true softmax sample."""

from __future__ import annotations

import pytest
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from rewardsmith.trainer.rollout import PolicyWithValue, gumbel_noise, sample_completions

PROMPTS = ["1+2=", "9+9=", "0+0=", "5+4=", "7+1=", "3+3="]


@pytest.fixture(scope="module")
def lm_and_tokenizer(tiny_model: str) -> tuple:
    tok = AutoTokenizer.from_pretrained(tiny_model)
    return AutoModelForCausalLM.from_pretrained(tiny_model).eval(), tok


def encode(tok, prompts: list[str], width: int = 6) -> tuple[torch.Tensor, torch.Tensor]:
    enc = tok(prompts, padding="max_length", max_length=width, return_tensors="pt")
    return enc["input_ids"], enc["attention_mask"]


def sample(lm, tok, prompts: list[str], seeds: list[int], steps: int = 5) -> tuple:
    ids, mask = encode(tok, prompts)
    noise = gumbel_noise(seeds, steps, lm.config.vocab_size)
    return sample_completions(lm, ids, mask, noise, 1.0, tok.eos_token_id, tok.pad_token_id)


def test_a_sample_does_not_depend_on_its_batch(lm_and_tokenizer: tuple) -> None:
    lm, tok = lm_and_tokenizer
    seeds = list(range(100, 106))
    together = sample(lm, tok, PROMPTS, seeds)[0]
    apart = torch.cat(
        [sample(lm, tok, PROMPTS[i : i + 2], seeds[i : i + 2])[0] for i in range(0, 6, 2)]
    )
    assert torch.equal(together, apart)


def test_eos_ends_a_row_and_counts_as_a_response_token(lm_and_tokenizer: tuple) -> None:
    lm, tok = lm_and_tokenizer
    ids, mask = encode(tok, PROMPTS[:2])
    noise = torch.zeros(2, 4, lm.config.vocab_size)
    eos = tok.eos_token_id
    noise[0, 0, eos], noise[0, 1, eos] = -1e9, 1e9  # row 0 must stop at its second token
    noise[1, :, eos] = -1e9  # row 1 may never emit EOS
    tokens, response_mask, truncated = sample_completions(
        lm, ids, mask, noise, 1.0, tok.eos_token_id, tok.pad_token_id
    )
    assert tokens[0, 1] == tok.eos_token_id
    assert tokens[0, 2:].tolist() == [tok.pad_token_id] * 2
    assert response_mask.tolist()[0] == [1.0, 1.0, 0.0, 0.0]
    assert truncated.tolist() == [False, True]  # row 1 never may emit EOS
    assert response_mask.tolist()[1] == [1.0] * 4


def test_cached_greedy_decoding_matches_full_forward(lm_and_tokenizer: tuple) -> None:
    lm, tok = lm_and_tokenizer
    ids, mask = encode(tok, PROMPTS)
    steps = 4
    noise = torch.zeros(len(PROMPTS), steps, lm.config.vocab_size)  # zero noise: greedy
    tokens, _, _ = sample_completions(lm, ids, mask, noise, 1.0, -1, tok.pad_token_id)
    seq, attn = ids, mask
    policy = PolicyWithValue(lm, with_value=False)
    for t in range(steps):
        logits, _ = policy(
            torch.cat([seq, seq[:, -1:]], -1), torch.cat([attn, attn[:, -1:]], -1), 1, 1.0
        )  # the logits that predict position L from the full prefix
        assert torch.equal(logits[:, 0].argmax(-1), tokens[:, t])
        seq = torch.cat([seq, tokens[:, t : t + 1]], -1)
        attn = torch.cat([attn, torch.ones_like(attn[:, :1])], -1)


def test_gumbel_max_samples_the_softmax() -> None:
    logits = torch.tensor([0.0, 1.0, 2.0, -1.0])
    noise = gumbel_noise(list(range(4000)), 1, 4)[:, 0]
    counts = torch.bincount(torch.argmax(logits + noise, -1), minlength=4).float() / 4000
    assert torch.allclose(counts, torch.softmax(logits, -1), atol=0.03)
