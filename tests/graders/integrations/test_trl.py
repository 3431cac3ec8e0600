"""The TRL adapter inside a real GRPOTrainer run (a tiny GPT-2 on the CPU, two steps)."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from rewardsmith.graders import Grader, weighted
from rewardsmith.graders.integrations import TRLReward
from rewardsmith.trainer.tiny import build_tiny_model
from rewardsmith.verifiers import create

GRADER = Grader(weighted({"correct": create("exact_match")}))


def test_called_like_trl_calls_it() -> None:
    reward = TRLReward(GRADER, backend="inline")
    logged: dict[str, float] = {}
    values = reward(
        prompts=["1+1=", "2+2="],
        completions=["2", "5"],
        completion_ids=[[4], [7]],
        answer=["2", "4"],
        trainer_state=None,
        log_metric=logged.__setitem__,
        log_extra=lambda column, values: None,
    )
    assert values == [1.0, 0.0]
    assert logged["rewardsmith/correct"] == 0.5 and logged["rewardsmith/infra_failures"] == 0.0


def test_pickles_without_its_executor() -> None:
    reward = TRLReward(GRADER, backend="inline")
    reward(prompts=["p"], completions=["x"], answer=["x"])  # starts the executor
    clone = pickle.loads(pickle.dumps(reward))
    assert clone.scorer._lanes is None  # started again where it lands, on first use
    assert clone(prompts=["p"], completions=["x"], answer=["x"]) == [1.0]


@pytest.mark.slow
def test_inside_a_real_grpo_trainer(tmp_path: Path) -> None:
    import datasets
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    model_path = build_tiny_model(tmp_path / "model")
    rows = [{"prompt": f"{a}+{b}=", "answer": str(a + b)} for a in range(4) for b in range(4)]
    reward = TRLReward(GRADER, backend="pool", workers=1)
    config = GRPOConfig(
        output_dir=str(tmp_path / "out"),
        max_steps=2,
        per_device_train_batch_size=4,
        num_generations=4,
        max_completion_length=3,
        learning_rate=1e-3,
        logging_steps=1,
        report_to=[],
        use_cpu=True,
        save_strategy="no",
        seed=0,
    )
    trainer = GRPOTrainer(
        model=AutoModelForCausalLM.from_pretrained(model_path),
        processing_class=AutoTokenizer.from_pretrained(model_path),
        reward_funcs=[reward],
        args=config,
        train_dataset=datasets.Dataset.from_list(rows),
    )
    trainer.train()
    logs = [entry for entry in trainer.state.log_history if "rewards/rewardsmith/mean" in entry]
    assert len(logs) == 2
    assert all("rewardsmith/correct" in entry for entry in logs)
    assert all(entry["rewardsmith/infra_failures"] == 0.0 for entry in logs)
