"""veRL's and OpenRLHF's own reward code calling ours on a mixed-task spec.

The clients are the real packages (``make`` installs verl 0.9.1 and openrlhf 0.11.2 without
their GPU dependencies): veRL's batch reward manager and its reward loop's naive manager
(which calls ``compute_score`` from a thread pool, one sample per call), and OpenRLHF's
single-turn agent executor (``reward_func`` from ``asyncio.to_thread``, and its HTTP
client against a real ``rewardsmith serve``).
"""

from __future__ import annotations

import asyncio
import json
import signal
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

import rewardsmith.graders.integrations as integrations
from rewardsmith.graders.integrations import _env
from rewardsmith.trainer.tiny import build_tokenizer

pytest.importorskip("verl", reason="make installs verl 0.9.1 (.venv/.installed-clients)")
pytest.importorskip("openrlhf", reason="make installs openrlhf 0.11.2")

MIXED = """
grader:
  weighted:
    components:
      trivia: {verify: exact_match, tasks: [trivia]}
      tagged: {verify: format, tasks: [tagged], patterns: ["^A:"]}
      maths: {verify: math, tasks: [math]}
"""
ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 :?{}\\"
TOKENIZER = build_tokenizer(ALPHABET)
# (task, response, ground truth, reward): one of three leaves applies, rescaled to 3
ROWS = [
    ("trivia", "Paris", "paris", 3.0),
    ("trivia", "Lyon", "paris", 0.0),
    ("tagged", "A: yes", None, 3.0),
    ("tagged", "yes", None, 0.0),
    ("math", "so \\boxed{4}", "4", 3.0),
    ("math", "so \\boxed{5}", "4", 0.0),
]


@pytest.fixture
def mixed_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    spec = tmp_path / "mixed.yaml"
    spec.write_text(MIXED)
    monkeypatch.setenv("REWARDSMITH_SPEC", str(spec))
    monkeypatch.setenv("REWARDSMITH_BACKEND", "pool")
    monkeypatch.setenv("REWARDSMITH_WORKERS", "1")
    yield spec
    for scorer in _env._shared.values():
        scorer.close()
    _env._shared.clear()


def _ids(text: str) -> list[int]:
    return TOKENIZER(text, add_special_tokens=False)["input_ids"]


def _data_proto(rows: list[tuple[str, str, Any, float]]) -> Any:
    """A veRL batch as its rollout leaves it: left-padded prompts, right-padded responses."""
    from verl import DataProto

    prompts = [_ids("Q?") for _ in rows]
    responses = [_ids(r) for _, r, _, _ in rows]
    p_len, r_len = max(map(len, prompts)), max(map(len, responses))
    prompt_t = torch.zeros(len(rows), p_len, dtype=torch.long)
    response_t = torch.zeros(len(rows), r_len, dtype=torch.long)
    mask = torch.zeros(len(rows), p_len + r_len, dtype=torch.long)
    for i, (p, r) in enumerate(zip(prompts, responses, strict=True)):
        prompt_t[i, p_len - len(p) :] = torch.tensor(p)
        response_t[i, : len(r)] = torch.tensor(r)
        mask[i, p_len - len(p) : p_len + len(r)] = 1
    return DataProto.from_dict(
        tensors={"prompts": prompt_t, "responses": response_t, "attention_mask": mask},
        non_tensors={
            "data_source": np.array([t for t, _, _, _ in rows], dtype=object),
            "reward_model": np.array([{"ground_truth": g} for _, _, g, _ in rows], dtype=object),
            "extra_info": np.array([{"index": i} for i in range(len(rows))], dtype=object),
        },
    )


def _verl_module() -> Any:
    """veRL's own loader of ``custom_reward_function`` (by path, as its config says)."""
    from omegaconf import OmegaConf
    from verl.trainer.ppo.reward import get_custom_reward_fn

    path = str(Path(integrations.__file__).with_name("verl.py"))
    config = {"reward": {"custom_reward_function": {"path": path, "name": "compute_score"}}}
    return get_custom_reward_fn(OmegaConf.create(config))


def test_verl_batch_reward_manager_scores_a_mixed_batch(mixed_env: Path) -> None:
    from verl.workers.reward_manager.batch import BatchRewardManager

    compute_score = _verl_module()
    manager = BatchRewardManager(TOKENIZER, num_examine=0, compute_score=compute_score)
    out = manager(_data_proto(ROWS), return_dict=True)
    rewards = out["reward_tensor"].sum(dim=-1).tolist()
    assert rewards == [reward for *_, reward in ROWS]
    info = out["reward_extra_info"]
    assert set(info) == {"score", "trivia", "tagged", "maths"}
    assert {len(v) for v in info.values()} == {len(ROWS)}  # every key for every sample
    assert np.isnan(info["maths"][0]) and info["maths"][4] == 1.0  # n/a where not routed


def test_verl_reward_loop_calls_from_a_thread_pool_on_one_scorer(mixed_env: Path) -> None:
    from verl.experimental.reward_loop.reward_manager.naive import NaiveRewardManager

    compute_score = _verl_module()
    rows = ROWS * 11  # 66 single-sample calls at once

    async def run() -> list[dict[str, Any]]:
        manager = NaiveRewardManager(None, TOKENIZER, compute_score)
        data = _data_proto(rows)
        return await asyncio.gather(
            *(manager.run_single(data[i : i + 1]) for i in range(len(rows)))
        )

    results = asyncio.run(run())
    assert [r["reward_score"] for r in results] == [reward for *_, reward in rows]
    assert {tuple(sorted(r["reward_extra_info"])) for r in results} == {
        ("maths", "score", "tagged", "trivia")
    }  # the same keys for every sample, as veRL's reward loop asserts
    (scorer,) = _env._shared.values()
    assert scorer._lanes is not None and len(scorer._lanes.executors) == 1  # one executor


def test_verl_json_text_ground_truth_is_decoded_for_structured_verifiers() -> None:
    from rewardsmith.graders.integrations import VerlScore

    spec = "grader:\n  weighted:\n    components:\n      table: table_match\n"
    grid = [["name", "value"], ["a", "1"]]
    score = VerlScore(spec, backend="inline")
    table_text = "| name | value |\n|---|---|\n| a | 1 |"
    as_list = score(data_source="t", solution_str=table_text, ground_truth=grid)
    as_json = score(data_source="t", solution_str=table_text, ground_truth=json.dumps(grid))
    assert as_json == as_list and as_list["score"] == 1.0


def _openrlhf_labels() -> list[str]:
    return [json.dumps({"task": t, "reference": g}) for t, _, g, _ in ROWS]


def test_openrlhf_agent_executor_calls_the_reward_file_from_threads(mixed_env: Path) -> None:
    from openrlhf.utils.agent import SingleTurnAgentExecutor

    path = str(Path(integrations.__file__).with_name("openrlhf.py"))
    executor = SingleTurnAgentExecutor(remote_rm_url=path)
    labels = _openrlhf_labels() * 11
    responses = [r for _, r, _, _ in ROWS] * 11

    async def run() -> list[Any]:
        calls = [
            executor._fetch_rewards_via_func([f"Q? {r}"], ["Q? "], [label])
            for r, label in zip(responses, labels, strict=True)
        ]
        return [infos[0] for infos in await asyncio.gather(*calls)]

    infos = asyncio.run(run())
    assert [float(i["rewards"][0]) for i in infos] == [reward for *_, reward in ROWS] * 11
    assert {tuple(sorted(i["extra_logs"])) for i in infos} == {
        ("infra_failure", "maths", "tagged", "trivia")
    }
    (scorer,) = _env._shared.values()
    assert len(scorer._lanes.executors) == 1 if scorer._lanes else False


@pytest.mark.slow
def test_openrlhf_http_client_against_rewardsmith_serve(tmp_path: Path) -> None:
    from openrlhf.utils.agent import SingleTurnAgentExecutor

    from tests.cli.test_server_shutdown import start_server

    spec = tmp_path / "mixed.yaml"
    spec.write_text(MIXED)
    process, url = start_server(tmp_path, spec, "--lanes", "2", "--task", "trivia")
    try:
        executor = SingleTurnAgentExecutor(remote_rm_url=f"{url}/get_reward")
        queries = [f"Q? {r}" for _, r, _, _ in ROWS] + ["Q? Paris"]
        labels = [*_openrlhf_labels(), "paris"]  # the last names no task: --task trivia
        [reply] = asyncio.run(
            executor._fetch_rewards_via_http(queries, ["Q? "] * len(queries), labels)
        )
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)
    assert reply["rewards"] == [reward for *_, reward in ROWS] + [3.0]
    assert reply["extra_logs"]["trivia"][-1] == 1.0
