"""Tiny reward-model backbones built from a config and saved to a temp dir, so every test
runs the real ``from_pretrained(path)`` code with no model hub."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

WORDS = (  # noqa: SIM905
    "what is the answer so good bad fine poor right wrong yes no maybe step "
    "then add sum total plus minus times equals a an of to and it we"
).split()
GOOD = ["right", "good", "yes", "fine"]
BAD = ["wrong", "bad", "no", "poor"]
SPECIAL_BERT = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "[STEP]"]
PUNCT = list("+-*/=?.,:()")


def build_tiny_bert(path: Path, layers: int = 2, max_positions: int = 64) -> Path:
    """A 2-layer BERT (hidden 32) with a WordPiece vocabulary of ~100 entries (';' last, the
    documented step separator, so the ids of the rest stay as they were)."""
    from transformers import BertConfig, BertModel, BertTokenizerFast

    digits = [str(d) for d in range(10)]
    vocab = SPECIAL_BERT + PUNCT + digits + [f"##{d}" for d in digits] + WORDS + [";"]
    path.mkdir(parents=True, exist_ok=True)
    tokenizer = BertTokenizerFast(
        vocab={t: i for i, t in enumerate(vocab)}, additional_special_tokens=["[STEP]"]
    )
    tokenizer.model_max_length = max_positions
    config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=32,
        num_hidden_layers=layers,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=max_positions,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )
    torch.manual_seed(0)  # the same tiny model in every run
    BertModel(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def build_tiny_gpt2(path: Path, max_positions: int = 64) -> Path:
    """A 2-layer GPT-2 (hidden 32) with a word-level tokenizer, digits split one by one."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import GPT2Config, GPT2Model, PreTrainedTokenizerFast

    tokens = ["<unk>", "<eos>", "[STEP]", *PUNCT, *[str(d) for d in range(10)], *WORDS]
    core = Tokenizer(models.WordLevel({t: i for i, t in enumerate(tokens)}, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Whitespace(), pre_tokenizers.Digits(individual_digits=True)]
    )
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=core,
        unk_token="<unk>",
        eos_token="<eos>",
        pad_token="<eos>",
        additional_special_tokens=["[STEP]"],
        model_max_length=max_positions,
    )
    config = GPT2Config(
        vocab_size=len(tokens),
        n_embd=32,
        n_layer=2,
        n_head=2,
        n_positions=max_positions,
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
        eos_token_id=1,
        bos_token_id=1,
        pad_token_id=1,
    )
    path.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    GPT2Model(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


@pytest.fixture(autouse=True)
def one_torch_thread() -> Iterator[None]:
    """Run torch on one thread: on a loaded 2-core machine two spinning OpenMP threads made
    a tiny training step 25× slower (measured: 8 steps in 25 s against 0.9 s)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="session")
def tiny_bert(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_bert(tmp_path_factory.mktemp("tiny_bert"))


@pytest.fixture(scope="session")
def tiny_gpt2(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_gpt2(tmp_path_factory.mktemp("tiny_gpt2"))


def toy_pairs(n: int, seed: int = 0) -> list[dict[str, str]]:
    """A separable preference set: the chosen answer ends in a word from GOOD, the rejected
    in one from BAD, after the same random filler, so only that word tells them apart (and
    an untrained model, with no reason to rank the four GOOD words above the four BAD ones,
    is near chance)."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        filler = " ".join(rng.choice(WORDS[:12]) for _ in range(rng.randint(1, 6)))
        rows.append(
            {
                "prompt": f"what is {i % 10} plus {i % 7} ?",
                "chosen": f"{filler} the answer is {rng.choice(GOOD)}",
                "rejected": f"{filler} the answer is {rng.choice(BAD)}",
                "subset": "even" if i % 2 == 0 else "odd",
            }
        )
    return rows


@pytest.fixture(scope="session")
def trained_rm(tmp_path_factory: pytest.TempPathFactory, tiny_gpt2: Path) -> Path:
    """A tiny GPT-2 outcome reward model trained to prefer GOOD words; saved to a temp dir."""
    from rewardsmith.reward_models import RewardModel, TrainConfig, preference_pairs, train

    torch.set_num_threads(1)
    rm = RewardModel.load(tiny_gpt2, seed=2, step_separator="[STEP]")
    config = TrainConfig(max_steps=24, learning_rate=3e-3, batch_size=8)
    train(rm, preference_pairs(toy_pairs(64, seed=1)).rows, config)
    path = tmp_path_factory.mktemp("trained_rm")
    rm.save(path)
    return path
