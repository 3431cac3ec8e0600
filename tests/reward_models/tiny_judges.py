"""Tiny judge models built on disk and served by a real ``transformers serve``.

A judge here is a one-layer GPT-2 whose weights are set by hand so that greedy decoding
answers with a fixed function of the prompt's last word: the embedding is one-hot, the
attention and MLP blocks are zeroed (the residual stream carries the token through) and
the output head maps each word to its successor. Its chat template joins the messages'
texts, so the last word of the prompt is the last word of the answer the judge reads last:
``{"right": "[[8]]", "wrong": "[[2]]"}`` rates answers that end in "right" 8, and in a
pairwise prompt (answer B last) picks the one that ends in "right" in both orders.
Real weights, a real tokenizer, a real OpenAI-compatible server: only the "training" is
done by hand, so that what the judge says is known exactly.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

WORDS = ["right", "wrong", "[[A]]", "[[B]]", "[[C]]", "banana"] + [f"[[{n}]]" for n in range(1, 12)]


def build_judge(path: Path, successors: Mapping[str, str]) -> Path:
    """Save a judge that, after word ``w``, says ``successors[w]`` (``"*"``: any other
    word), then stops. A reply word that is itself in `successors` continues the reply."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    tokens = ["<unk>", "<eos>", *WORDS]
    vocab = {t: i for i, t in enumerate(tokens)}
    core = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=core, unk_token="<unk>", eos_token="<eos>", pad_token="<eos>"
    )
    tokenizer.chat_template = "{% for m in messages %}{{ m['content'] }} {% endfor %}"
    size = len(tokens)
    config = GPT2Config(
        vocab_size=size,
        n_embd=size,
        n_layer=1,
        n_head=1,
        n_positions=4096,
        tie_word_embeddings=False,
        eos_token_id=1,
        bos_token_id=1,
        pad_token_id=1,
    )
    model = GPT2LMHeadModel(config)
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.zero_()
        block = model.transformer.h[0]
        for norm in (block.ln_1, block.ln_2, model.transformer.ln_f):
            norm.weight.fill_(1.0)
        model.transformer.wte.weight.copy_(torch.eye(size))
        replies = set(successors.values())
        for word, i in vocab.items():
            default = "<eos>" if word in replies else successors.get("*", "<eos>")
            model.lm_head.weight[vocab[successors.get(word, default)], i] = 10.0
    model.generation_config.eos_token_id = 1
    model.generation_config.pad_token_id = 1
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def served(log: Path, start_timeout_s: float = 180.0) -> Iterator[str]:
    """A ``transformers serve`` on 127.0.0.1 (a free port); yields its API root."""
    import httpx

    port = free_port()
    command = [sys.executable, "-m", "transformers.cli.transformers", "serve"]
    command += ["--host", "127.0.0.1", "--port", str(port), "--device", "cpu"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    with log.open("w") as out:
        process = subprocess.Popen(
            command, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
    try:
        deadline = time.monotonic() + start_timeout_s
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"transformers serve exited: {log.read_text()[-2000:]}")
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"transformers serve did not start: {log.read_text()[-2000:]}")
            time.sleep(0.5)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@contextmanager
def silent_server() -> Iterator[str]:
    """A TCP server on 127.0.0.1 that accepts connections and never answers."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    port = listener.getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        listener.close()
