"""veRL's own agent-loop machinery (``AgentLoopBase``, its continuous-token builder) drives a
rewardsmith environment: the episodes it records are token for token those of our own
rollout with the chat template, and the reward it records is the environment's.

The LLM server veRL would talk to (vLLM or SGLang on GPUs) is stood in for by our HF
engine behind veRL's `generate` interface, seeded per turn as our rollout seeds it.
Skipped, with the reason, where veRL is not installed (`make test` installs it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

verl_loop = pytest.importorskip(
    "rewardsmith.environments.integrations.verl_agent_loop",
    reason="needs veRL (the Makefile's clients install)",
)

from omegaconf import OmegaConf  # noqa: E402  (veRL's dependency, present when it is)
from verl.experimental.agent_loop.agent_loop import DictConfigWrap  # noqa: E402
from verl.workers.rollout.replica import TokenOutput  # noqa: E402

from rewardsmith.environments import RetryArithmetic  # noqa: E402
from rewardsmith.trainer.engine import SamplingParams  # noqa: E402
from rewardsmith.trainer.hf_engine import HFEngine  # noqa: E402
from rewardsmith.trainer.multiturn import TurnSettings, run_episodes  # noqa: E402
from rewardsmith.trainer.tiny import (  # noqa: E402
    ARITHMETIC_ALPHABET,
    CHAT_ALPHABET,
    CHAT_TEMPLATE,
    build_tiny_model,
)

REPO = Path(__file__).resolve().parents[2]
SUMS = [json.loads(r) for r in (REPO / "datasets/arithmetic/tasks.jsonl").read_text().splitlines()]
RETRY = "wrong, try again"
ALPHABET = ARITHMETIC_ALPHABET + CHAT_ALPHABET + "".join(sorted(set(RETRY)))
TURN_TOKENS = 3
WIDTH = 40
SETTINGS = TurnSettings(turn_tokens=TURN_TOKENS, chat_template=True)


class EngineServer:
    """veRL's LLM server client (`generate` from token ids) over our HF engine; turn t of the
    episode samples with the seed our own rollout gives it."""

    def __init__(self, engine: HFEngine, eos: int, episode_seed: int) -> None:
        self.engine, self.eos, self.seed, self.turn = engine, eos, episode_seed, 0

    async def generate(
        self, request_id: str, prompt_ids: list[int], sampling_params: dict[str, Any], **_: Any
    ) -> TokenOutput:
        seed = SETTINGS.seed_for(self.seed, self.turn)
        self.turn += 1
        sampling = SamplingParams(
            sampling_params["max_tokens"], sampling_params["temperature"], (seed,), (self.eos,)
        )
        out = self.engine.generate([prompt_ids], sampling)
        return TokenOutput(token_ids=out.token_ids[0], log_probs=out.logprobs[0])


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from transformers import AutoTokenizer

    path = build_tiny_model(
        tmp_path_factory.mktemp("verl") / "model", alphabet=ALPHABET, chat_template=CHAT_TEMPLATE
    )
    engine = HFEngine.from_pretrained(path)
    return engine, AutoTokenizer.from_pretrained(path)


def _agent(engine: HFEngine, tokenizer: Any, seed: int) -> Any:
    config = OmegaConf.create(
        {"actor_rollout_ref": {"rollout": {"prompt_length": 16, "response_length": WIDTH}}}
    )
    server = EngineServer(engine, int(tokenizer.eos_token_id), seed)
    return verl_loop.EnvironmentAgentLoop(
        trainer_config=DictConfigWrap(config),
        server_manager=server,
        tokenizer=tokenizer,
        processor=None,
        dataset_cls=None,
        data_config=DictConfigWrap(OmegaConf.create({})),
    )


def test_rows_carry_the_task_outside_the_prompt() -> None:
    rows = verl_loop.verl_rows("retry_arithmetic", SUMS[:3])
    for row, task in zip(rows, SUMS[:3], strict=True):
        assert row["agent_name"] == "rewardsmith_env"
        assert row["prompt"] == [{"role": "user", "content": task["prompt"]}]
        assert row["extra_info"]["task"]["reference"] == task["reference"]
        assert set(row) == {"prompt", "agent_name", "data_source", "extra_info"}


def _actions(output: Any, tokenizer: Any) -> list[str]:
    """The model's turns in a veRL output: the runs of mask-1 tokens, decoded."""
    runs, current = [], []  # type: ignore[var-annotated]
    for token, sampled in zip(output.response_ids, output.response_mask, strict=True):
        if sampled:
            current.append(token)
        elif current:
            runs.append(current)
            current = []
    runs += [current] if current else []
    return [tokenizer.decode(run, skip_special_tokens=True) for run in runs]


def test_verls_agent_loop_records_our_environments_reward_and_tokens(model: Any) -> None:
    engine, tokenizer = model
    count = 16
    rows = verl_loop.verl_rows("retry_arithmetic", SUMS[:count])
    sampling = {"temperature": 1.0, "max_tokens": TURN_TOKENS}
    theirs = []
    for seed, row in enumerate(rows):
        agent = _agent(engine, tokenizer, seed)
        theirs.append(agent.loop.run_until_complete(agent.run(sampling, **row)))
    env = RetryArithmetic()
    try:
        ours = run_episodes(
            engine, env, SUMS[:count], tokenizer, list(range(count)), WIDTH, SETTINGS
        )
        # The reward veRL records is the environment's reward for the actions veRL recorded.
        for task, output in zip(SUMS[:count], theirs, strict=True):
            state, _ = env.reset(task)
            rewards = []
            for action in _actions(output, tokenizer):
                step = env.step(state, action)
                rewards.append(None if step.reward is None else step.reward.value)
                state = step.state
            assert state.done or output.extra_fields["end"] == "token_budget"
            assert output.extra_fields["turn_scores"][: len(rewards)] == rewards
            if state.done:
                assert output.reward_score == step.reward.value
    finally:
        env.close()
    assert any(len(e.turn_ends) == 2 for e in ours), "no episode took a second turn"
    # Where no turn was cut before its end-of-turn token, veRL's tokens are ours exactly.
    # (A cut turn differs: our rollout closes it with the template's EOS as context, veRL's
    # default builder does not, so the next turn is sampled after another context.)
    eos = int(tokenizer.eos_token_id)
    closed = [
        (a, b)
        for a, b in zip(ours, theirs, strict=True)
        if all(a.response_ids[end] == eos for end in a.turn_ends[:-1])
    ]
    assert closed, "no episode whose turns all ended on their own"
    for a, b in closed:
        assert b.prompt_ids == a.prompt_ids
        assert b.response_ids == a.response_ids and b.response_mask == a.action_mask
        assert b.reward_score == a.final_value
        assert b.extra_fields["turn_scores"] == a.turn_rewards
        assert b.response_logprobs == pytest.approx(a.engine_logprobs, abs=1e-6)
