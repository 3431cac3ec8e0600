"""Multi-turn episodes on the vLLM engine (its own process and venv, `make vllm`): each live
episode continues from its token ids; near-greedy sampling gives the HF engine's episodes
token for token, in the trainer and through `rewardsmith env run --engine vllm`; a
training run pushes its weights and samples from them.

Skipped, with the reason, where the vLLM venv has not been built (`make test` builds it)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from rewardsmith.cli.main import app
from rewardsmith.environments import RetryArithmetic
from rewardsmith.trainer.config import TrainConfig
from rewardsmith.trainer.distributed import init_distributed
from rewardsmith.trainer.hf_engine import HFEngine
from rewardsmith.trainer.metrics import read_metrics
from rewardsmith.trainer.models import load_models
from rewardsmith.trainer.multiturn import TurnSettings, run_episodes, train_multiturn
from rewardsmith.trainer.random_model import build_random_model
from rewardsmith.trainer.vllm_engine import VLLMEngine
from tests.trainer.conftest import TINY_QWEN, vllm_marks

pytestmark = vllm_marks()
REPO = Path(__file__).resolve().parents[2]
SUMS = [json.loads(r) for r in (REPO / "datasets/arithmetic/tasks.jsonl").read_text().splitlines()]
SETTINGS = TurnSettings(turn_tokens=4)
WIDTH = 48


@pytest.fixture(scope="module")
def qwen(tmp_path_factory: pytest.TempPathFactory) -> str:
    return build_random_model(tmp_path_factory.mktemp("qwen") / "model", **TINY_QWEN)


def config(model: str, out: Path, **overrides: object) -> TrainConfig:
    settings: dict[str, object] = {
        "model": model,
        "prompts": "unused",
        "output_dir": str(out),
        "algorithm": "grpo",
        "steps": 2,
        "prompts_per_step": 2,
        "group_size": 4,
        "minibatch_size": 8,
        "max_prompt_tokens": 16,
        "max_new_tokens": WIDTH,
        "kl_coef": 0.0,
        "tensorboard": False,
        "vllm_kv_cache_gb": 0.05,
    }
    settings.update(overrides)
    return TrainConfig(**settings)  # type: ignore[arg-type]


def test_near_greedy_episodes_are_the_hf_engines_token_for_token(qwen: str, tmp_path: Path) -> None:
    cfg = config(qwen, tmp_path)
    models = load_models(cfg, init_distributed("cpu"))
    tokenizer = models.tokenizer
    hf = HFEngine(models.policy_module.lm, int(tokenizer.pad_token_id))
    tasks, seeds = SUMS[:6], list(range(6))
    env = RetryArithmetic()
    try:
        ours = run_episodes(hf, env, tasks, tokenizer, seeds, WIDTH, SETTINGS, temperature=1e-3)
        with VLLMEngine(
            qwen, max_model_len=64, kv_cache_gb=0.05, log_path=tmp_path / "v.log"
        ) as vllm:
            theirs = run_episodes(
                vllm, env, tasks, tokenizer, seeds, WIDTH, SETTINGS, temperature=1e-3
            )
    finally:
        env.close()
    assert any(len(e.turn_ends) == 2 for e in ours), "no episode took a second turn"
    for a, b in zip(ours, theirs, strict=True):
        assert a.response_ids == b.response_ids and a.action_mask == b.action_mask
        assert a.turn_rewards == b.turn_rewards and a.final_value == b.final_value


def test_training_multiturn_on_the_vllm_engine_samples_from_the_pushed_weights(
    qwen: str, tmp_path: Path
) -> None:
    env = RetryArithmetic()
    try:
        train_multiturn(config(qwen, tmp_path, engine="vllm", lr=1e-2), env, SUMS, SETTINGS)
    finally:
        env.close()
    rows = read_metrics(tmp_path)
    assert [r["step"] for r in rows] == [0, 1]
    # the second step's tokens came from weights pushed after the first update
    assert all(r["rollout/engine_logprob_gap"] < 1e-3 for r in rows), rows
    assert all(r["time/weight_sync_s"] > 0 and math.isfinite(r["loss/policy"]) for r in rows)
    assert rows[0]["response/observation_tokens"] > 0
    assert torch.isfinite(torch.tensor([r["reward/final"] for r in rows])).all()


def test_env_run_on_the_vllm_engine_writes_the_hf_engines_episodes(
    qwen: str, tmp_path: Path
) -> None:
    task_file = tmp_path / "tasks.jsonl"
    task_file.write_text("".join(json.dumps(t) + "\n" for t in SUMS[:6]))
    args = ["env", "run", "retry_arithmetic", "--tasks", str(task_file), "--model", qwen]
    near_greedy = ["--temperature", "1e-3", "--turn-tokens", "4", "--max-new-tokens", str(WIDTH)]
    rows = {}
    for engine in ("hf", "vllm"):
        out = tmp_path / f"{engine}.jsonl"
        flags = ["--engine", engine, "--kv-cache-gb", "0.05", "-o", str(out)]
        result = CliRunner().invoke(app, [*args, *near_greedy, *flags])
        assert result.exit_code == 0, result.output
        rows[engine] = [json.loads(line) for line in out.read_text().splitlines()]
    assert any(r["turns"] == 2 for r in rows["hf"]), "no episode took a second turn"
    assert rows["vllm"] == rows["hf"]
    assert (tmp_path / "vllm.vllm.log").exists()  # the server's log, beside the dump
