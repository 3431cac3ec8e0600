"""OpenRLHF's own multi-turn executor (`MultiTurnAgentExecutor.execute`, 0.11.x) drives a
rewardsmith environment through our agent file: the reward and score it records equal the
environment's reward for the same episode (right first, right on retry, wrong twice, cut by
OpenRLHF's ``max_length``, and a sandboxed tool episode).

Only vLLM is stood in for: a scripted engine answers each `generate` with the next scripted
action in vLLM's ``RequestOutput`` shape (token ids, text, finish reason), cut at the
sampling budget OpenRLHF gives it. The tokenizer is the tiny one (offline). Skipped, with the
reason, where OpenRLHF is not installed (`make test` installs it)."""

from __future__ import annotations

import ast
import asyncio
import importlib.util
import json
import string
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

orlhf = pytest.importorskip(
    "rewardsmith.environments.integrations.openrlhf_agent",
    reason="needs OpenRLHF (the Makefile's clients install)",
)

import torch  # noqa: E402
from openrlhf.trainer.ppo_utils.experience import Experience  # noqa: E402  (OpenRLHF's)
from openrlhf.utils.agent import AgentExecutorBase  # noqa: E402

from rewardsmith.environments import RetryArithmetic  # noqa: E402
from rewardsmith.environments import episodes as episodes_module  # noqa: E402
from rewardsmith.environments.base import EnvironmentFailure  # noqa: E402
from rewardsmith.environments.episodes import make_environment  # noqa: E402
from rewardsmith.environments.protocol import EpisodeState  # noqa: E402
from rewardsmith.trainer.openrlhf_agent_func import AGENT_FILE, template_text  # noqa: E402
from rewardsmith.trainer.tiny import CHAT_TEMPLATE, build_tokenizer  # noqa: E402
from tests.environments.conftest import tasks  # noqa: E402

SUM = {"id": "add-3-4", "prompt": "3+4=", "reference": "7", "task": "arithmetic"}
MATH = {"id": "m", "prompt": "What is 7**222 modulo 1000?", "reference": "49", "task": "math"}
ALPHABET = string.printable + "".join(sorted({c for t in tasks("math.jsonl") for c in t["prompt"]}))


class ScriptedEngine:
    """vLLM's engine as OpenRLHF calls it: each generation is the next scripted action (and
    EOS), cut at the sampling budget, in the ``RequestOutput`` shape the executor reads."""

    def __init__(self, tokenizer: Any, actions: list[str]) -> None:
        self.tokenizer, self.actions = tokenizer, list(actions)
        self.given: list[list[int]] = []

    async def generate(
        self, prompt_token_ids: list[int], sampling_params: Any, multi_modal_data: Any = None
    ) -> Any:
        ids = self.tokenizer(self.actions.pop(0), add_special_tokens=False)["input_ids"]
        ids = [*ids, self.tokenizer.eos_token_id]
        cut = len(ids) > sampling_params.max_tokens
        ids = ids[: sampling_params.max_tokens]
        self.given.append(ids)
        text = self.tokenizer.decode(ids, skip_special_tokens=False)
        finish = "length" if cut else "stop"
        out = SimpleNamespace(token_ids=ids, text=text, finish_reason=finish, logprobs=None)
        return SimpleNamespace(outputs=[out])


def _theirs(module: str, name: str, **names: Any) -> Any:
    """OpenRLHF's own function `name` (a method's is taken as a function of `self`), its
    source taken from the installed `module`: the modules that hold `_load_agent_executor`
    and the experience maker import vLLM at their top, which this venv has not, so the
    function alone is compiled and run, unchanged, with the names it uses."""
    spec = importlib.util.find_spec("openrlhf")
    assert spec is not None and spec.origin is not None
    source = Path(spec.origin).parent.joinpath(*module.split(".")[1:]).with_suffix(".py")
    (function,) = [
        n
        for n in ast.walk(ast.parse(source.read_text()))
        if isinstance(n, ast.FunctionDef) and n.name == name
    ]
    namespace: dict[str, Any] = dict(names)
    exec(compile(ast.Module([function], []), str(source), "exec"), namespace)
    return namespace[name]


def _experience(result: dict[str, Any]) -> Any:
    """The `Experience` OpenRLHF's samples generator makes of an executor's result."""
    make = _theirs(
        "openrlhf.trainer.ppo_utils.samples_generator",
        "_process_response_into_experience",
        torch=torch,
        Experience=Experience,
    )
    return make(None, result, max_len=4096)


@pytest.fixture(scope="module")
def executor() -> Iterator[Any]:
    load = _theirs(
        "openrlhf.trainer.ray.vllm_engine",
        "_load_agent_executor",
        AgentExecutorBase=AgentExecutorBase,
    )
    loaded = load(str(AGENT_FILE))
    assert isinstance(loaded, orlhf.EnvironmentAgentExecutor)
    yield loaded
    orlhf.close_environments()


def _run(
    executor: Any,
    environment: str,
    task: dict[str, Any],
    actions: list[str],
    max_length: int = 256,
    chat: bool = False,
) -> tuple[dict[str, Any], ScriptedEngine]:
    tokenizer = build_tokenizer(ALPHABET, chat_template=CHAT_TEMPLATE if chat else None)
    engine = ScriptedEngine(tokenizer, actions)
    sampling = SimpleNamespace(max_tokens=None, logprobs=None)  # vLLM's SamplingParams fields
    result = asyncio.run(
        executor.execute(
            prompt="(the dataset's prompt; the agent renders the environment's own)",
            label=orlhf.episode_label(environment, task),
            sampling_params=sampling,
            max_length=max_length,
            hf_tokenizer=tokenizer,
            llm_engine=engine,
        )
    )
    return result, engine


def _our_reward(environment: str, task: dict[str, Any], engine: ScriptedEngine) -> float:
    """The environment's own episode on the actions the engine gave (decoded as our rollout
    decodes them), truncated as our rollout truncates when the row had no more room."""
    env = make_environment(environment)
    tokenizer = engine.tokenizer
    try:
        state: EpisodeState = env.reset(task)[0]
        for ids in engine.given:
            action = tokenizer.decode(ids, skip_special_tokens=True)
            transition = env.step(state, action, len(ids))
            state = transition.state
            if transition.done:
                assert transition.reward is not None
                return transition.reward.value
        final = env.truncate(state, "token_budget").reward
        assert final is not None
        return final.value
    finally:
        env.close()


@pytest.mark.parametrize("chat", [False, True], ids=["plain", "chat_template"])
@pytest.mark.parametrize(
    ("actions", "value", "turns"),
    [(["7"], 1.0, 1), (["8", "7"], 1.0, 2), (["8", "9"], 0.2, 2)],
    ids=["right_first", "right_on_retry", "wrong_twice"],
)
def test_recorded_reward_is_the_environments(
    executor: Any, actions: list[str], value: float, turns: int, chat: bool
) -> None:
    result, engine = _run(executor, "retry_arithmetic", SUM, actions, chat=chat)
    ours = _our_reward("retry_arithmetic", SUM, engine)
    # The wrong first turn earned 0.2 in the environment; OpenRLHF sums step rewards, so
    # only the final reward may reach it.
    assert result["reward"] == ours == value and result["scores"] == ours
    experience = _experience(result)  # what OpenRLHF trains on and logs
    assert experience.rewards.tolist() == experience.scores.tolist() == [pytest.approx(ours)]
    assert experience.info["environment_error"].tolist() == [0.0]
    assert result["extra_logs"] == {"turns": float(turns), "environment_error": 0.0}
    assert len(result["action_ranges"]) == turns and not result["truncated"]
    assert json.loads(result["label"])["task"] == SUM  # the reference stays in the label


def test_the_context_is_the_environments_chat(executor: Any) -> None:
    result, engine = _run(executor, "retry_arithmetic", SUM, ["8", "7"], chat=True)
    text = engine.tokenizer.decode(result["observation_tokens"], skip_special_tokens=False)
    assert text == "U:3+4=\nA:8<eos>U:wrong, try again\nA:7<eos>"
    ids, decode = result["observation_tokens"], engine.tokenizer.decode
    actions = [decode(ids[start:end]) for start, end in result["action_ranges"]]
    assert actions == ["8<eos>", "7<eos>"]  # the sampled tokens, the rest is context


def test_a_row_cut_by_max_length_records_the_truncated_episodes_reward(executor: Any) -> None:
    # "3+4=" (4) + "8<eos>" (2) + "wrong, try again" (16): 22 tokens; 22 leave no turn
    # after the feedback at 22, so OpenRLHF's loop would stop without a last step.
    result, engine = _run(executor, "retry_arithmetic", SUM, ["8", "7"], max_length=22)
    ours = _our_reward("retry_arithmetic", SUM, engine)
    assert len(engine.given) == 1 and ours == 0.2  # the wrong answer, scored as it stands
    assert result["reward"] == ours and result["scores"] == ours


def test_an_action_cut_by_the_budget_is_scored_as_it_stands(executor: Any) -> None:
    result, engine = _run(executor, "retry_arithmetic", SUM, ["8", "77777"], max_length=25)
    assert (
        result["truncated"]
        and engine.given[-1] == engine.tokenizer("777", add_special_tokens=False)["input_ids"]
    )
    assert result["reward"] == _our_reward("retry_arithmetic", SUM, engine)


class FailingArithmetic(RetryArithmetic):
    """An environment whose infrastructure fails on the first answer."""

    name = "failing_arithmetic"

    def answer(self, state: EpisodeState, action: str) -> Any:
        raise EnvironmentFailure("the sandbox did not start")


@pytest.fixture
def failing(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setitem(episodes_module.ENVIRONMENTS, FailingArithmetic.name, FailingArithmetic)
    return FailingArithmetic.name


def test_an_environment_failure_fails_the_rollout_by_default(executor: Any, failing: str) -> None:
    with pytest.raises(orlhf.EnvironmentEpisodeError, match="sandbox did not start"):
        _run(executor, failing, SUM, ["7"])


def test_an_environment_failure_recorded_as_zero_is_logged(failing: str) -> None:
    zero = orlhf.agent_executor_class("zero", template_text)()
    result, _ = _run(zero, failing, SUM, ["7"])
    assert result["reward"] == 0.0 and result["extra_logs"]["environment_error"] == 1.0
    assert _experience(result).info["environment_error"].tolist() == [1.0]
    with pytest.raises(ValueError, match="on_environment_error"):
        orlhf.agent_executor_class("ignore")


def test_a_label_without_an_episode_is_refused_by_name(executor: Any) -> None:
    tokenizer = build_tokenizer(ALPHABET)
    sampling = SimpleNamespace(max_tokens=None, logprobs=None)
    run = executor.execute("3+4=", "7", sampling, 64, tokenizer, ScriptedEngine(tokenizer, []))
    with pytest.raises(ValueError, match="label must be"):  # a plain reference, not an episode
        asyncio.run(run)


def test_rows_carry_the_task_in_the_label_only() -> None:
    rows = orlhf.openrlhf_rows("retry_arithmetic", [SUM])
    assert rows == [
        {
            "prompt": [{"role": "user", "content": "3+4="}],
            "label": orlhf.episode_label("retry_arithmetic", SUM),
        }
    ]


@pytest.mark.sandbox
def test_a_sandboxed_tool_episode(executor: Any) -> None:
    call = json.dumps({"name": "python", "arguments": {"code": "print(pow(7, 222, 1000))"}})
    actions = [f"<tool_call>{call}</tool_call>", "\\boxed{49}"]
    result, engine = _run(executor, "math_tool", MATH, actions, max_length=2048, chat=True)
    text = engine.tokenizer.decode(result["observation_tokens"], skip_special_tokens=False)
    assert "T:49\n" in text  # the sandbox's output, as the template's tool turn
    assert result["reward"] == _our_reward("math_tool", MATH, engine) == 1.0
