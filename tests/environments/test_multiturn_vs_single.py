"""The multi-turn against single-turn comparison (`benchmarks/multiturn_vs_single.py`) is a
fair one: both arms see the same first context and earn the same reward for the same
answer, the hint arm's feedback narrows the answer without saying it, and a small seeded
version of the run gives the same figures twice.

The ordering itself (multi-turn above single-turn) is not asserted: it did not hold in the
measured runs (docs/benchmarks.md, "Multi-turn against single-turn")."""

from __future__ import annotations

from pathlib import Path

import pytest
from transformers import AutoTokenizer

from benchmarks.multiturn_vs_single import (
    HINTS,
    RETRY_TEXT,
    Budget,
    HigherLower,
    base_model,
    chat_prompt_tasks,
    compare,
    environment,
    sums,
)
from rewardsmith.environments.arithmetic import RETRY_REWARD
from rewardsmith.trainer.chat import ChatRenderer
from rewardsmith.trainer.data import encode_prompts, load_tasks
from rewardsmith.trainer.rewards import build_reward_source
from rewardsmith.verifiers.types import Sample


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> str:
    return base_model(tmp_path_factory.mktemp("mt-vs-st") / "base", seed=0)


def test_the_single_turn_prompts_are_the_multi_turn_first_contexts(
    model: str, tmp_path: Path
) -> None:
    tokenizer = AutoTokenizer.from_pretrained(model)
    tasks = load_tasks(chat_prompt_tasks(model, sums(), tmp_path / "tasks.jsonl"))
    single = encode_prompts(tasks, tokenizer, max_tokens=12).ids
    env = environment("multi_turn")
    try:
        chat = ChatRenderer.for_environment(env, tokenizer)
        multi = [chat.prompt_ids(env.reset(task)[0].messages) for task in sums()]
    finally:
        env.close()
    assert single == multi
    assert tokenizer.decode(single[34]) == "U:3+4=\nA:"


@pytest.mark.parametrize("answer", ["7", "8", "17", "07", "7+", "", "+", "77"])
def test_an_answer_earns_the_same_in_both_arms(answer: str) -> None:
    task = next(t for t in sums() if t["prompt"] == "3+4=")
    single = build_reward_source(RETRY_REWARD, None, "inline")
    env = environment("multi_turn", tries=1)
    try:
        sample = Sample(id="a", prompt=task["prompt"], completion=answer, reference="7")
        paid = single.score([sample]).values[0]
        state, _ = env.reset(task)
        reward = env.step(state, answer).reward
    finally:
        env.close()
        single.close()
    assert reward is not None and reward.value == pytest.approx(paid)


@pytest.mark.parametrize(
    ("answer", "said"),
    [("9", HINTS[0]), ("18", HINTS[0]), ("3", HINTS[1]), ("0", HINTS[1]), ("x", RETRY_TEXT)],
)
def test_the_hint_says_which_way_and_never_the_answer(answer: str, said: str) -> None:
    env = HigherLower(RETRY_TEXT)
    try:
        state, _ = env.reset({"id": "s", "prompt": "3+4=", "reference": "7"})
        step = env.step(state, answer)
        assert not step.done and step.observation == said and "7" not in step.observation
        assert env.step(step.state, "7").reward.value == 1.0  # type: ignore[union-attr]
    finally:
        env.close()


@pytest.mark.slow  # about 25 CPU-seconds: two small training runs per arm, twice
def test_a_small_seeded_comparison_gives_the_same_figures_twice(tmp_path: Path) -> None:
    budget = Budget(steps=2, prompts_per_step=2, group_size=4, window=2, eval_samples=1)
    arms = ("multi_turn", "single_turn")
    first, second = (
        compare(budget, [3], tmp_path / run, arms, lr0=False)["runs"] for run in ("a", "b")
    )
    assert [r["arm"] for r in first] == list(arms)
    for a, b in zip(first, second, strict=True):
        for key in ("final", "one_try", "two_tries", "train_reward"):
            assert 0.0 <= a[key] <= 1.0 and a[key] == b[key], (key, a, b)
    multi, single = first
    assert multi["final"] == multi["two_tries"] and single["final"] == single["one_try"]
