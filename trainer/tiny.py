"""A tiny causal LM and a character tokenizer, built from a config and saved to a folder.

No hub is reachable in tests or CI, so the project builds its own: a GPT-2 of a few
thousand parameters over a character vocabulary, saved with `save_pretrained` so the
trainer exercises the real `from_pretrained(path)` code.

    >>> import tempfile
    >>> path = build_tiny_model(tempfile.mkdtemp(), alphabet="0123456789+=")
    >>> from transformers import AutoTokenizer
    >>> AutoTokenizer.from_pretrained(path)("12+3=")["input_ids"]
    [3, 4, 12, 5, 13]
"""

from __future__ import annotations

from pathlib import Path

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers
from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

__all__ = [
    "ARITHMETIC_ALPHABET",
    "CHAT_ALPHABET",
    "CHAT_TEMPLATE",
    "build_tiny_model",
    "build_tokenizer",
]

ARITHMETIC_ALPHABET = "0123456789+-*="
SPECIAL_TOKENS = ("<pad>", "<eos>")
CHAT_TEMPLATE = (
    "{% for m in messages %}"
    "{% if m['role'] == 'assistant' %}A:{{ m['content'] }}<eos>"
    "{% elif m['role'] == 'tool' %}T:{{ m['content'] }}\n"
    "{% else %}U:{{ m['content'] }}\n{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}A:{% endif %}"
)
"""A small chat template in the shape of real ones (a role marker per turn, the assistant's
turn closed by EOS, a generation prompt), so tests exercise the real
`apply_chat_template` path with a tiny model. Its characters are `CHAT_ALPHABET`."""
CHAT_ALPHABET = "AUT:\n"


def build_tokenizer(alphabet: str, chat_template: str | None = None) -> PreTrainedTokenizerFast:
    """One token per character of `alphabet`, after <pad> (id 0) and <eos> (id 1);
    `chat_template` (e.g. `CHAT_TEMPLATE`) is saved with it."""
    vocab = {tok: i for i, tok in enumerate(SPECIAL_TOKENS)}
    for char in alphabet:
        vocab.setdefault(char, len(vocab))
    core = Tokenizer(models.WordLevel(vocab, unk_token="<eos>"))
    # Split every character into its own token; the pattern is the empty-width split.
    core.pre_tokenizer = pre_tokenizers.Split(pattern="", behavior="isolated")
    core.decoder = decoders.Fuse()  # join characters back without spaces
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=core, pad_token="<pad>", eos_token="<eos>", padding_side="left"
    )
    tokenizer.chat_template = chat_template
    return tokenizer


def build_tiny_model(
    path: str | Path,
    alphabet: str = ARITHMETIC_ALPHABET,
    n_layer: int = 2,
    n_embd: int = 64,
    n_head: int = 4,
    n_positions: int = 64,
    seed: int = 0,
    chat_template: str | None = None,
) -> str:
    """Build, initialise with `seed` and save a GPT-2 and its tokenizer to `path` (with
    `chat_template`, whose characters must be in `alphabet`)."""
    tokenizer = build_tokenizer(alphabet, chat_template)
    config = GPT2Config(
        vocab_size=len(tokenizer),
        n_positions=n_positions,
        n_embd=n_embd,
        n_layer=n_layer,
        n_head=n_head,
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
        bos_token_id=tokenizer.eos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(seed)
    model = GPT2LMHeadModel(config)
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return str(path)
