"""The prompt schedule and rank split are pure functions of (seed, step)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rewardsmith.trainer.data import load_tasks, prompt_indices, rank_slice, sample_seed

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
