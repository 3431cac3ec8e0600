"""Real-size models without a hub: Qwen2.5-0.5B's architecture and a tokenizer of its size."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, Qwen2ForCausalLM

from rewardsmith.trainer.hf_engine import HFEngine
from rewardsmith.trainer.random_model import (
    QWEN2_5_0_5B,
    build_bpe_tokenizer,
    build_random_model,
    qwen2_config,
)

from .conftest import TINY_QWEN


def test_the_architecture_is_qwen2_5_0_5b() -> None:
    config = qwen2_config()
    assert (config.num_hidden_layers, config.hidden_size, config.vocab_size) == (24, 896, 151_936)
    assert (config.num_attention_heads, config.num_key_value_heads) == (14, 2)
    assert config.tie_word_embeddings and config.eos_token_id == 151_643
    with torch.device("meta"):  # no memory: only the shapes
        model = Qwen2ForCausalLM(config)
    assert sum(p.numel() for p in model.parameters()) == 494_032_768  # "0.49B" as published


def test_the_tokenizer_has_the_vocabulary_size_and_round_trips() -> None:
    tok = build_bpe_tokenizer(QWEN2_5_0_5B["vocab_size"])
    assert len(tok) == 151_936
    assert tok.convert_ids_to_tokens([151_643, 151_645]) == ["<|endoftext|>", "<|im_end|>"]
    assert tok.eos_token_id == tok.pad_token_id == 151_643
    for text in ["12+34+56=", "Grüße, 世界! \n\t", "x" * 1000, ""]:
        assert tok.decode(tok(text)["input_ids"]) == text
    assert max(tok("some ordinary words")["input_ids"]) < 151_643  # merges produce real ids


def test_a_small_variant_saves_loads_and_generates(tiny_qwen: str) -> None:
    lm = AutoModelForCausalLM.from_pretrained(tiny_qwen)
    tok = AutoTokenizer.from_pretrained(tiny_qwen)
    assert lm.config.vocab_size == len(tok) == TINY_QWEN["vocab_size"]
    engine = HFEngine.from_pretrained(tiny_qwen)
    out = engine.generate([tok("1+1=")["input_ids"]], _params())
    assert len(out.token_ids[0]) >= 1


def test_the_seed_decides_the_weights(tmp_path: Path) -> None:
    small = {**TINY_QWEN, "num_hidden_layers": 1}
    a = AutoModelForCausalLM.from_pretrained(build_random_model(tmp_path / "a", seed=1, **small))
    b = AutoModelForCausalLM.from_pretrained(build_random_model(tmp_path / "b", seed=1, **small))
    c = AutoModelForCausalLM.from_pretrained(build_random_model(tmp_path / "c", seed=2, **small))
    wa, wb, wc = (m.model.embed_tokens.weight for m in (a, b, c))
    assert torch.equal(wa, wb) and not torch.equal(wa, wc)


def test_a_vocabulary_too_small_for_bytes_is_refused() -> None:
    with pytest.raises(ValueError, match="256 byte symbols"):
        build_bpe_tokenizer(100)


def _params():
    from rewardsmith.trainer.engine import SamplingParams

    return SamplingParams(4, 1.0, (0,))
