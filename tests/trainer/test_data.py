"""The prompt schedule and rank split are pure functions of (seed, step)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rewardsmith.trainer.data import (
    encode_prompts,
    load_tasks,
    prompt_indices,
    rank_slice,
    sample_seed,
)

from .conftest import ARITHMETIC


def test_each_epoch_visits_every_task_once() -> None:
    picks = [i for step in range(5) for i in prompt_indices(10, step, 4, seed=3)]
    assert sorted(picks[:10]) == list(range(10))  # epoch 0 (steps 0, 1 and half of 2)
    assert sorted(picks[10:20]) == list(range(10))
    assert picks[:10] != picks[10:20]  # a fresh order each epoch


def test_schedule_depends_on_the_seed_only() -> None:
    assert prompt_indices(100, 7, 8, seed=1) == prompt_indices(100, 7, 8, seed=1)
    assert prompt_indices(100, 7, 8, seed=1) != prompt_indices(100, 7, 8, seed=2)


def test_rank_slices_tile_the_batch() -> None:
    assert [list(rank_slice(8, r, 2)) for r in (0, 1)] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    with pytest.raises(ValueError, match="multiple of the process count"):
        rank_slice(6, 0, 4)


def test_sample_seeds_are_distinct() -> None:
    seeds = {sample_seed(s, step, i) for s in range(3) for step in range(50) for i in range(64)}
    assert len(seeds) == 3 * 50 * 64


def test_bundled_arithmetic_tasks() -> None:
    tasks = load_tasks(ARITHMETIC)
    assert len(tasks) == 100
    assert all(int(t.prompt[0]) + int(t.prompt[2]) == int(t.reference) for t in tasks)


@pytest.mark.parametrize("text", ["", "\n\n", "not json\n", '{"reference": 1}\n', "[1, 2]\n"])
def test_bad_task_files(tmp_path: Path, text: str) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(text)
    with pytest.raises(ValueError, match=r"t\.jsonl"):
        load_tasks(path)


def write(tmp_path: Path, prompts: list[str]) -> Path:
    path = tmp_path / "tasks.jsonl"
    path.write_text("".join(json.dumps({"prompt": p, "reference": "1"}) + "\n" for p in prompts))
    return path


@pytest.fixture(scope="module")
def tokenizer(tiny_model: str):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_model)


@pytest.mark.parametrize("empty", ["", "   ", "\n\t"])
def test_an_empty_prompt_names_its_row(tmp_path: Path, tokenizer, empty: str) -> None:
    tasks = load_tasks(write(tmp_path, ["1+1=", empty, "2+2="]))
    with pytest.raises(ValueError, match=r"tasks\.jsonl:2: the prompt is empty"):
        encode_prompts(tasks, tokenizer, 16)


def test_an_over_long_prompt_names_its_row_and_the_fix(tmp_path: Path, tokenizer) -> None:
    tasks = load_tasks(write(tmp_path, ["1+1=", "2+2=", "12+34+56="]))
    with pytest.raises(
        ValueError, match=r"tasks\.jsonl:3: the prompt is 9 tokens.*max_prompt_tokens=4.*left"
    ):
        encode_prompts(tasks, tokenizer, 4)


def test_left_truncation_keeps_the_end_counts_and_warns(
    tmp_path: Path, tokenizer, caplog: pytest.LogCaptureFixture
) -> None:
    tasks = load_tasks(write(tmp_path, ["1+1=", "12+34+56=", "7+8+9="]))
    with caplog.at_level("WARNING", logger="rewardsmith.trainer"):
        encoded = encode_prompts(tasks, tokenizer, 4, truncation="left")
    assert tokenizer.decode(encoded.ids[1]) == "+56="  # the end of the prompt survives
    assert encoded.truncated == [False, True, True]
    assert "2 of 3 prompts are longer than max_prompt_tokens=4" in caplog.text


def test_prompts_that_fit_are_untouched(tmp_path: Path, tokenizer) -> None:
    tasks = load_tasks(write(tmp_path, ["1+1=", "12+34+56="]))
    encoded = encode_prompts(tasks, tokenizer, 9)
    assert [tokenizer.decode(i) for i in encoded.ids] == ["1+1=", "12+34+56="]
    assert encoded.truncated == [False, False]
