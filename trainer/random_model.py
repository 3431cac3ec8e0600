"""Real-size models without a hub: a real architecture, random weights, a tokenizer of its size.

Benchmarks need a model whose cost is a real one's (24 layers, a 151,936-token vocabulary)
but no hub is reachable. `build_random_model` writes a `from_pretrained` folder: the
architecture from published numbers (`QWEN2_5_0_5B`, Qwen2.5-0.5B's config.json), weights
initialised from a seed, and a byte-level BPE tokenizer with exactly `vocab_size` entries
(merges generated, not learned: it tokenises any text, just not the way Qwen's does).
Generation costs, memory and the vLLM path are those of the real model; what it says is
noise.

    >>> import tempfile
    >>> path = build_random_model(tempfile.mkdtemp(), num_hidden_layers=1, hidden_size=64,
    ...                           intermediate_size=128, num_attention_heads=2,
    ...                           num_key_value_heads=1, vocab_size=600)
    >>> from transformers import AutoTokenizer
    >>> len(AutoTokenizer.from_pretrained(path))
    600
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM

__all__ = ["QWEN2_5_0_5B", "build_bpe_tokenizer", "build_random_model", "qwen2_config"]

# Qwen2.5-0.5B as published (config.json of Qwen/Qwen2.5-0.5B): 494M parameters, 24 layers,
# hidden 896, 14 query heads and 2 key/value heads of 64, tied embeddings.
QWEN2_5_0_5B: dict[str, Any] = {
    "vocab_size": 151_936,
    "hidden_size": 896,
    "intermediate_size": 4_864,
    "num_hidden_layers": 24,
    "num_attention_heads": 14,
    "num_key_value_heads": 2,
    "hidden_act": "silu",
    "max_position_embeddings": 32_768,
    "rms_norm_eps": 1e-6,
    "rope_theta": 1_000_000.0,
    "tie_word_embeddings": True,
    "use_sliding_window": False,
    "attention_dropout": 0.0,
    "initializer_range": 0.02,
}
# Qwen's special tokens sit after its 151,643 regular ones; the rest, to 151,936, are padding.
SPECIAL = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")


def qwen2_config(**overrides: Any) -> Qwen2Config:
    """Qwen2.5-0.5B's architecture, with any field overridden (smaller variants for tests)."""
    settings = {**QWEN2_5_0_5B, **overrides}
    eos = settings["vocab_size"] - _special_count(settings["vocab_size"])
    return Qwen2Config(
        **settings, bos_token_id=eos, eos_token_id=eos, pad_token_id=eos, max_window_layers=0
    )


def build_random_model(
    path: str | Path, seed: int = 0, dtype: str = "float32", **overrides: Any
) -> str:
    """Initialise Qwen2.5-0.5B's architecture (or a variant, see `qwen2_config`) from `seed`
    and save it, with a tokenizer of its vocabulary size, to `path`. Returns the path."""
    config = qwen2_config(**overrides)
    torch.manual_seed(seed)
    model = Qwen2ForCausalLM(config).to(getattr(torch, dtype))
    model.save_pretrained(path)
    del model
    build_bpe_tokenizer(config.vocab_size).save_pretrained(path)
    return str(path)


def build_bpe_tokenizer(vocab_size: int) -> PreTrainedTokenizerFast:
    """A byte-level BPE with exactly `vocab_size` entries: 256 byte symbols, generated merges
    (every pair of bytes, then byte pairs extended by one byte), Qwen's special tokens, and
    reserved special tokens up to the size. Ids: regular tokens first, then the specials."""
    n_regular = vocab_size - _special_count(vocab_size)
    if n_regular < 256:
        raise ValueError(f"vocab_size={vocab_size} leaves no room for the 256 byte symbols")
    symbols = list(pre_tokenizers.ByteLevel.alphabet())
    symbols.sort()
    vocab = {s: i for i, s in enumerate(symbols)}
    merges = []
    for left, right in _merge_pairs(symbols):
        if len(vocab) == n_regular:
            break
        merges.append((left, right))
        vocab[left + right] = len(vocab)
    core = Tokenizer(models.BPE(vocab=vocab, merges=merges))
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    specials = [*SPECIAL, *(f"<|reserved_{i}|>" for i in range(vocab_size - n_regular - 3))]
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=core, padding_side="left")
    tokenizer.add_special_tokens(
        {"eos_token": SPECIAL[0], "pad_token": SPECIAL[0], "additional_special_tokens": specials}
    )
    assert len(tokenizer) == vocab_size, (len(tokenizer), vocab_size)
    return tokenizer


def _special_count(vocab_size: int) -> int:
    """Tokens after the regular ones: Qwen's 293 (151,936 - 151,643), or 3 when smaller."""
    return QWEN2_5_0_5B["vocab_size"] - 151_643 if vocab_size >= 100_000 else len(SPECIAL)


def _merge_pairs(symbols: list[str]) -> Any:
    """Byte pairs in order, then each pair followed by one more byte."""
    for a in symbols:
        for b in symbols:
            yield a, b
    for a in symbols:
        for b in symbols:
            for c in symbols:
                yield a + b, c
