"""The HF engine: layout-independent seeded sampling, exact about stop tokens, a true softmax
sample, cached decoding that agrees with a full forward pass, and bad input refused."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from rewardsmith.trainer.engine import EngineError, Generation, RolloutEngine, SamplingParams
from rewardsmith.trainer.hf_engine import HFEngine, left_pad, row_uniforms, sample_from_logits
from rewardsmith.trainer.rollout import PolicyWithValue, pack_sequences, score_tokens

PROMPTS = ["1+2=", "9+9=", "0+0=", "5+4=", "7+1=", "33+3="]


@pytest.fixture(scope="module")
def engine(tiny_model: str) -> HFEngine:
    tok = AutoTokenizer.from_pretrained(tiny_model)
    lm = AutoModelForCausalLM.from_pretrained(tiny_model).eval()
    return HFEngine(lm, tok.pad_token_id)


@pytest.fixture(scope="module")
def contexts(tiny_model: str) -> list[list[int]]:
    tok = AutoTokenizer.from_pretrained(tiny_model)
    return [tok(p)["input_ids"] for p in PROMPTS]


def params(
    n: int, steps: int = 6, stops: tuple[int, ...] = (), first_seed: int = 100
) -> SamplingParams:
    return SamplingParams(steps, 1.0, tuple(range(first_seed, first_seed + n)), stops)


def test_it_is_a_rollout_engine(engine: HFEngine) -> None:
    assert isinstance(engine, RolloutEngine)


def test_a_sample_does_not_depend_on_its_batch(engine: HFEngine, contexts: list) -> None:
    together = engine.generate(contexts, params(6))
    apart = [
        engine.generate(contexts[i : i + 2], SamplingParams(6, 1.0, (100 + i, 101 + i)))
        for i in range(0, 6, 2)
    ]
    assert together.token_ids == [t for g in apart for t in g.token_ids]
    assert (
        engine.generate(contexts[::-1], SamplingParams(6, 1.0, tuple(range(105, 99, -1)))).token_ids
        == together.token_ids[::-1]
    )


def test_seeds_matter(engine: HFEngine, contexts: list) -> None:
    a = engine.generate(contexts, params(6)).token_ids
    b = engine.generate(contexts, params(6, first_seed=500)).token_ids
    assert a != b


def test_a_stop_token_ends_its_row_and_is_kept(engine: HFEngine, contexts: list) -> None:
    free = engine.generate(contexts, params(6))
    assert free.stopped == [False] * 6 and all(len(t) == 6 for t in free.token_ids)
    stop = free.token_ids[0][2]  # row 0's third token: make it a stop token
    cut = engine.generate(contexts, params(6, stops=(stop,)))
    for row, (whole, part) in enumerate(zip(free.token_ids, cut.token_ids, strict=True)):
        end = whole.index(stop) + 1 if stop in whole else len(whole)
        assert part == whole[:end], row  # the same tokens up to and including the stop
        assert cut.stopped[row] == (stop in whole)
        assert cut.logprobs[row] == pytest.approx(free.logprobs[row][:end], abs=1e-5)
    assert cut.token_ids[0][-1] == stop and len(cut.token_ids[0]) <= 3


def test_every_token_a_stop_token_gives_one_token_rows(engine: HFEngine, contexts: list) -> None:
    out = engine.generate(contexts, params(6, stops=tuple(range(engine.lm.config.vocab_size))))
    assert [len(t) for t in out.token_ids] == [1] * 6 and all(out.stopped)


def test_engine_logprobs_equal_a_full_forward_pass(engine: HFEngine, contexts: list) -> None:
    """The KV-cache path and the trainer's recomputation give the same log-probs."""
    out = engine.generate(contexts, SamplingParams(6, 0.7, tuple(range(6))))
    width = max(len(c) for c in contexts)
    ids, attn, actions = pack_sequences(
        contexts, out.token_ids, None, width, 6, engine.pad_token_id
    )
    recomputed, _ = score_tokens(PolicyWithValue(engine.lm, with_value=False), ids, attn, 6, 0.7)
    mine = torch.zeros_like(recomputed)
    for row, logprobs in enumerate(out.logprobs):
        mine[row, : len(logprobs)] = torch.tensor(logprobs)
    assert torch.allclose(mine * actions, recomputed * actions, atol=1e-5)


def test_inverse_cdf_samples_the_softmax() -> None:
    logits = torch.tensor([[0.0, 1.0, 2.0, -1.0]]).expand(20_000, 4)
    u = row_uniforms(list(range(20_000)), 20_000, 1)[:, 0]
    tokens, logp = sample_from_logits(logits, u)
    freq = torch.bincount(tokens, minlength=4).float() / 20_000
    assert torch.allclose(freq, torch.softmax(logits[0], -1), atol=0.01)
    assert torch.allclose(logp, torch.log_softmax(logits[0], -1)[tokens])


def test_zero_probability_tokens_are_never_drawn() -> None:
    logits = torch.tensor([[-float("inf"), 0.0, -float("inf"), 0.0]]).expand(1000, 4)
    tokens, _ = sample_from_logits(logits, torch.linspace(0, 1 - 1e-12, 1000, dtype=torch.float64))
    assert set(tokens.tolist()) == {1, 3}


def test_a_big_vocabulary_loses_no_mass() -> None:
    """151,936 logits: float64 cumulative sums pick the last token when u is near 1."""
    logits = torch.zeros(1, 151_936)
    tokens, _ = sample_from_logits(logits, torch.tensor([1 - 1e-9], dtype=torch.float64))
    assert int(tokens) == 151_935


def test_row_uniforms_follow_each_rows_seed() -> None:
    both = row_uniforms([3, 4], 2, 5)
    assert torch.equal(both[1], row_uniforms([4], 1, 5)[0])
    with pytest.raises(ValueError, match="one seed per context"):
        row_uniforms([1], 2, 5)


@pytest.mark.parametrize("bad", [[], [[]], [[1, 2], []]])
def test_empty_contexts_are_refused(engine: HFEngine, bad: list) -> None:
    with pytest.raises(ValueError, match="at least one token"):
        engine.generate(bad, SamplingParams(2))


def test_left_pad() -> None:
    ids, mask = left_pad([[5, 6, 7], [8]], pad_token_id=0)
    assert ids.tolist() == [[5, 6, 7], [0, 0, 8]] and mask.tolist() == [[1, 1, 1], [0, 0, 1]]


@pytest.mark.parametrize(
    ("change", "message"),
    [({"max_new_tokens": 0}, "max_new_tokens"), ({"temperature": 0.0}, "temperature")],
)
def test_bad_sampling_params(change: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        SamplingParams(**{"max_new_tokens": 4, **change})


def test_a_generation_must_be_consistent() -> None:
    with pytest.raises(EngineError, match="row 0"):
        Generation([[1, 2]], [[-0.1]], [False])


def test_update_weights_changes_what_is_sampled(tiny_model: str, contexts: list) -> None:
    tok = AutoTokenizer.from_pretrained(tiny_model)
    own = HFEngine(AutoModelForCausalLM.from_pretrained(tiny_model).eval(), tok.pad_token_id)
    before = own.generate(contexts, params(6))
    state = {k: v * 3 for k, v in own.lm.state_dict().items()}
    own.update_weights(state)
    after = own.generate(contexts, params(6))
    assert after.logprobs != before.logprobs


def test_it_decodes_alike_under_the_older_cache_keyword(engine: HFEngine, contexts: list) -> None:
    """transformers before 5.2x (5.17 on the GPU machine) names the KV cache
    `past_key_values`, in the output and in the call; the engine must feed it back under the
    name the output carries, or decoding stops at the second token (it did, on the GPU)."""
    seen: list[str] = []

    def older_forward(**kwargs: Any) -> SimpleNamespace:
        assert "cache" not in kwargs, "the older convention has no `cache` keyword"
        if "past_key_values" in kwargs:
            kwargs["cache"] = kwargs.pop("past_key_values")
            seen.append("past_key_values")
        out = engine.lm(**kwargs)
        return SimpleNamespace(logits=out.logits, past_key_values=out.cache)

    older = HFEngine(engine.lm, engine.pad_token_id, forward=older_forward)
    assert older.generate(contexts, params(len(contexts))) == engine.generate(
        contexts, params(len(contexts))
    )
    assert seen  # the cache went back under the older name
