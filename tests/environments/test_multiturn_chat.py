"""Multi-turn rollouts with the tokenizer's chat template: the prompt and observations are
the template's own rendering, the actions are the engine's tokens as sampled, and the
whole row round-trips through decode and encode unchanged (no re-tokenization drift)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
import torch

from rewardsmith.environments import RetryArithmetic
from rewardsmith.trainer.chat import ChatRenderer, new_messages
from rewardsmith.trainer.config import TrainConfig
from rewardsmith.trainer.distributed import init_distributed
from rewardsmith.trainer.engine import Generation, SamplingParams
from rewardsmith.trainer.hf_engine import HFEngine
from rewardsmith.trainer.models import load_models
from rewardsmith.trainer.multiturn import TurnSettings, run_episodes, train_multiturn
from rewardsmith.trainer.tiny import (
    ARITHMETIC_ALPHABET,
    CHAT_ALPHABET,
    CHAT_TEMPLATE,
    build_tiny_model,
    build_tokenizer,
)

REPO = Path(__file__).resolve().parents[2]
SUMS = [json.loads(r) for r in (REPO / "datasets/arithmetic/tasks.jsonl").read_text().splitlines()]
RETRY = "wrong, try again"
ALPHABET = ARITHMETIC_ALPHABET + CHAT_ALPHABET + "".join(sorted(set(RETRY)))
CHAT = TurnSettings(turn_tokens=3, chat_template=True)
WIDTH = 3 + 1 + len(f"U:{RETRY}\nA:") + 3


class RecordingEngine:
    """The real HF engine, keeping what it sampled, to compare with the rows."""

    def __init__(self, engine: HFEngine) -> None:
        self.engine = engine
        self.sampled: dict[tuple[tuple[int, ...], int], list[int]] = {}
        """(context, seed) the engine was given -> the tokens it sampled after it."""

    def generate(self, prompts: list[list[int]], sampling: SamplingParams) -> Generation:
        generation = self.engine.generate(prompts, sampling)
        rows = zip(prompts, sampling.seeds, generation.token_ids, strict=True)
        for prompt, seed, tokens in rows:
            self.sampled[(tuple(prompt), seed)] = tokens
        return generation


@pytest.fixture(scope="module")
def chat_model(tmp_path_factory: pytest.TempPathFactory) -> str:
    folder = tmp_path_factory.mktemp("chat") / "model"
    return build_tiny_model(folder, alphabet=ALPHABET, chat_template=CHAT_TEMPLATE)


def config(model: str, out: Path, **overrides: Any) -> TrainConfig:
    settings: dict[str, Any] = {
        "model": model,
        "prompts": "unused",
        "output_dir": str(out),
        "algorithm": "grpo",
        "steps": 2,
        "prompts_per_step": 4,
        "group_size": 4,
        "minibatch_size": 16,
        "max_prompt_tokens": 12,
        "max_new_tokens": WIDTH,
        "lr": 3e-3,
        "kl_coef": 0.0,
        "tensorboard": False,
    }
    settings.update(overrides)
    return TrainConfig(**settings)


def test_the_renderer_is_the_templates_own_rendering() -> None:
    tokenizer = build_tokenizer(ALPHABET, CHAT_TEMPLATE)
    chat = ChatRenderer(tokenizer)
    user = [{"role": "user", "content": "3+4="}]
    assert tokenizer.decode(chat.prompt_ids(user)) == "U:3+4=\nA:"
    said = [{"role": "user", "content": RETRY}]
    assert tokenizer.decode(chat.observation_ids(said, ended=True)) == f"U:{RETRY}\nA:"
    assert tokenizer.decode(chat.observation_ids(said, ended=False)) == f"<eos>U:{RETRY}\nA:"
    tool = [{"role": "tool", "content": "7"}]
    assert tokenizer.decode(chat.observation_ids(tool, ended=True)) == "T:7\nA:"
    # prompt + action + observation is the template's rendering of the whole chat
    action = tokenizer("8", add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
    row = chat.prompt_ids(user) + action + chat.observation_ids(said, ended=True)
    whole = [*user, {"role": "assistant", "content": "8"}, *said]
    expected = tokenizer.apply_chat_template(
        whole, add_generation_prompt=True, tokenize=True, return_dict=False
    )
    assert row == list(expected)


def test_a_tokenizer_without_a_usable_template_is_refused() -> None:
    with pytest.raises(ValueError, match="no chat template"):
        ChatRenderer(build_tokenizer(ALPHABET))
    # the generation prompt says "A:" but an assistant turn is rendered under "T:"
    mismatched = CHAT_TEMPLATE.replace("A:{{ m['content'] }}", "T:{{ m['content'] }}")
    with pytest.raises(ValueError, match="does not render an assistant turn"):
        ChatRenderer(build_tokenizer(ALPHABET, mismatched))


def test_new_messages_are_those_after_the_last_assistant_turn() -> None:
    before = [{"role": "user", "content": "q"}]
    after = [*before, {"role": "assistant", "content": "a"}, {"role": "tool", "content": "r"}]
    assert new_messages(before, after) == [{"role": "tool", "content": "r"}]
    assert new_messages(before, [*before, {"role": "assistant", "content": "a"}]) == []


@pytest.mark.parametrize(
    "action",
    ["5", "3+4", "x" * (RetryArithmetic().limits.max_action_chars + 1)],
    ids=["wrong", "refused_expression", "too_long"],
)
def test_every_observation_is_in_the_conversation(action: str) -> None:
    """A driver that renders only the environment's messages (veRL's agent loop) shows the
    model what the environment told it: a retry note, and also a refusal, which once went
    into the attempt but not the conversation (the model's next turn followed its last one
    with nothing between them)."""
    env = RetryArithmetic()
    try:
        state, _ = env.reset({"id": "s", "prompt": "3+4=", "reference": "7"})
        step = env.step(state, action, action_tokens=1)  # the token budget is not the point
    finally:
        env.close()
    assert not step.done and step.observation
    assert new_messages(state.messages, step.state.messages)[-1] == {
        "role": "user",
        "content": step.observation,
    }


def test_chat_rows_keep_the_sampled_tokens_and_round_trip_without_drift(
    chat_model: str, tmp_path: Path
) -> None:
    cfg = config(chat_model, tmp_path)
    models = load_models(cfg, init_distributed("cpu"))
    tokenizer = models.tokenizer
    engine = RecordingEngine(HFEngine(models.policy_module.lm, int(tokenizer.pad_token_id)))
    env = RetryArithmetic()
    try:
        episodes = run_episodes(
            engine, env, [SUMS[i // 4] for i in range(16)], tokenizer, list(range(16)), WIDTH, CHAT
        )
    finally:
        env.close()
    assert any(len(e.turn_ends) == 2 for e in episodes), "no episode took a second turn"
    for episode in episodes:  # each turn's tokens are what the engine sampled, as sampled
        start = 0
        for turn, end in enumerate(episode.turn_ends):
            start = episode.action_mask.index(1, start)
            context = tuple(episode.prompt_ids + episode.response_ids[:start])
            sampled = engine.sampled[(context, CHAT.seed_for(episode.seed, turn))]
            assert episode.response_ids[start : end + 1] == sampled
            start = end + 1
    for episode in episodes:
        row = episode.prompt_ids + episode.response_ids
        text = tokenizer.decode(row, skip_special_tokens=False)
        assert tokenizer(text, add_special_tokens=False)["input_ids"] == row
        assert text.startswith(f"U:{episode.state.task['prompt']}\nA:")
        if len(episode.turn_ends) == 2:
            assert f"U:{RETRY}\nA:" in text


def test_a_chat_template_run_trains_and_logs(chat_model: str, tmp_path: Path) -> None:
    env = RetryArithmetic()
    try:
        settings = TurnSettings(turn_tokens=3, chat_template=True)
        result = train_multiturn(config(chat_model, tmp_path), env, SUMS, settings)
    finally:
        env.close()
    assert result.steps == 2 and math.isfinite(result.metrics["loss/policy"])
    assert result.metrics["response/observation_tokens"] > 0


@pytest.mark.slow
def test_the_tiny_model_learns_the_two_turn_task_with_the_chat_template(tmp_path: Path) -> None:
    model = build_tiny_model(tmp_path / "model", alphabet=ALPHABET, chat_template=CHAT_TEMPLATE)
    env = RetryArithmetic()
    finals = {}
    try:
        for lr in (3e-3, 0.0):
            out = tmp_path / f"lr{lr}"
            cfg = config(
                model, out, steps=24, prompts_per_step=8, group_size=8, minibatch_size=32, lr=lr
            )
            train_multiturn(cfg, env, SUMS, CHAT)
            rows = [json.loads(r) for r in (out / "metrics.jsonl").read_text().splitlines()]
            finals[lr] = sum(r["reward/final"] for r in rows[-4:]) / 4
    finally:
        env.close()
    assert finals[3e-3] > finals[0.0] + 0.08, finals
    assert torch.isfinite(torch.tensor(list(finals.values()))).all()
