"""A rewardsmith environment as a veRL agent loop (veRL 0.9.x ``AgentLoopBase``).

veRL runs one agent loop per sample: it hands the loop the row's fields and an
OpenAI-compatible LLM server client, and takes back the episode's token ids, a response
mask (1 on tokens the model sampled, 0 on tool and user turns) and a reward. This loop
resets the environment the row names on the row's task, then alternates: the server
generates from the running token ids, the environment steps on the decoded action, and
veRL's own continuous-token builder appends the messages the environment added (so the
tokens are those veRL's other loops would produce). The reward is the environment's final
reward, computed by its `Scorer` exactly as in rewardsmith's own trainer; each turn's
reward is in ``extra_fields["turn_scores"]``.

Rows (`verl_rows`) carry the environment's name and the task in ``extra_info``, which
stays in the trainer process: the reference never reaches the prompt. In the veRL config::

    actor_rollout_ref:
      rollout:
        agent:
          agent_loop_config_path: <a YAML listing this loop>   # or import this module
    data:
      # each row: {"prompt": [...], "agent_name": "rewardsmith_env", "extra_info": {...}}

Importing this module registers the loop under ``rewardsmith_env``; it needs veRL (the
``clients`` install of the Makefile: verl without its heavy dependencies, plus hydra-core
and cachetools).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from uuid import uuid4

try:
    from verl.experimental.agent_loop.agent_loop import (
        AgentLoopBase,
        AgentLoopMetrics,
        AgentLoopOutput,
        register,
    )
except ImportError as exc:  # an optional integration: say what to install
    raise ImportError(
        "the veRL agent loop needs veRL: `pip install --no-deps verl==0.9.1 hydra-core "
        "cachetools` (see the Makefile's clients install)"
    ) from exc

from rewardsmith.environments.episodes import make_environment
from rewardsmith.environments.protocol import EpisodeState, Transition

__all__ = ["AGENT_NAME", "EnvironmentAgentLoop", "verl_rows"]

AGENT_NAME = "rewardsmith_env"


def verl_rows(environment: str, tasks: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """veRL dataset rows for `tasks` of `environment`: the first observation as the prompt
    messages, the task (with its reference) in ``extra_info`` only."""
    env = make_environment(environment)
    try:
        rows = []
        for task in tasks:
            state, _ = env.reset(task)
            rows.append(
                {
                    "prompt": [dict(m) for m in state.messages],
                    "agent_name": AGENT_NAME,
                    "data_source": f"rewardsmith/{environment}",
                    "extra_info": {"environment": environment, "task": dict(task)},
                }
            )
        return rows
    finally:
        env.close()


@register(AGENT_NAME)
class EnvironmentAgentLoop(AgentLoopBase):
    """Roll one episode of the environment a row names; see the module docstring."""

    async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> AgentLoopOutput:
        info = kwargs["extra_info"]
        env = make_environment(str(info["environment"]))
        try:
            return await self._episode(env, dict(info["task"]), sampling_params)
        finally:
            env.close()

    async def _episode(
        self, env: Any, task: dict[str, Any], sampling_params: dict[str, Any]
    ) -> AgentLoopOutput:
        tools: Any = [tool.schema for tool in getattr(env, "tools", ())] or None
        tokenizer: Any = self.tokenizer
        state, _ = env.reset(task)
        prompt_ids = await self.ct_build_initial_tokens(list(state.messages), tools=tools)
        running, mask = list(prompt_ids), []  # type: ignore[var-annotated]
        logprobs: list[float] | None = []
        turn_scores: list[float | None] = []
        budget = int(self.rollout_config.response_length)
        transition: Transition | None = None
        while transition is None or not transition.done:
            out = await self.server_manager.generate(
                request_id=uuid4().hex, prompt_ids=running, sampling_params=sampling_params
            )
            merged, mask, logprobs = await self.ct_merge_assistant_token(
                running, out.token_ids, mask, logprobs, assistant_logprobs=out.log_probs
            )
            running = merged.token_ids
            action = tokenizer.decode(out.token_ids, skip_special_tokens=True)
            transition = await self.loop.run_in_executor(
                None, env.step, state, action, len(out.token_ids)
            )
            turn_scores.append(None if transition.reward is None else transition.reward.value)
            if not transition.done:
                observed, observed_mask, observed_logprobs = await self.ct_merge_context_msg(
                    _through_last_assistant(transition.state),
                    [dict(m) for m in transition.state.messages],
                    running,
                    mask,
                    logprobs,
                    tools=tools,
                )
                # As our own rollout does: an observation that leaves no room for another
                # turn ends the episode as it stands, and its tokens are not kept.
                if len(observed_mask) >= budget:
                    transition = env.truncate(transition.state, "token_budget")
                else:
                    running, mask, logprobs = (
                        observed.token_ids,
                        observed_mask,
                        observed_logprobs,
                    )
            state = transition.state
        final = transition.reward
        response = running[len(prompt_ids) :]
        return AgentLoopOutput(
            prompt_ids=list(prompt_ids),
            response_ids=response[:budget],
            response_mask=mask[:budget],
            response_logprobs=logprobs[:budget] if logprobs else None,
            reward_score=None if final is None else final.value,
            num_turns=len(state.messages),
            metrics=AgentLoopMetrics(),
            extra_fields={"turn_scores": turn_scores, "end": state.end},
        )


def _through_last_assistant(state: EpisodeState) -> list[dict[str, Any]]:
    messages = [dict(m) for m in state.messages]
    last = max(i for i, m in enumerate(messages) if m.get("role") == "assistant")
    return messages[: last + 1]
