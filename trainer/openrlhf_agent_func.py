"""OpenRLHF's ``--train.agent_func_path``: rewardsmith environments as its agent.

OpenRLHF loads this file by path and builds its ``AgentExecutor``
(`rewardsmith.environments.integrations.openrlhf_agent`). Each dataset row's label names the
environment and the task (`openrlhf_agent.episode_label`). Where the tokenizer has a chat
template, the first observation and each feedback are its rendering of the environment's
messages (tools as schemas), as rewardsmith's own rollout renders them (`trainer.chat`);
without one, the environment's text. An environment failure fails the rollout unless
``REWARDSMITH_ON_ENVIRONMENT_ERROR=zero`` is set in the rollout workers' environment (Ray's
``runtime_env``), which records 0 and logs ``environment_error``.

    --train.agent_func_path "$(python -c 'from rewardsmith.trainer.openrlhf_agent_func \\
        import AGENT_FILE; print(AGENT_FILE)')"
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rewardsmith.environments.integrations.openrlhf_agent import agent_executor_class
from rewardsmith.environments.protocol import EpisodeState, Transition
from rewardsmith.trainer.chat import ChatRenderer, new_messages

AGENT_FILE = Path(__file__)
"""This file: the one to pass as ``--train.agent_func_path``."""


class TemplateText:
    """An episode's texts under the tokenizer's chat template (an openrlhf_agent
    `Rendering`): decoded with their special tokens, which OpenRLHF tokenizes back."""

    def __init__(self, env: Any, tokenizer: Any) -> None:
        self.tokenizer, self.chat = tokenizer, ChatRenderer.for_environment(env, tokenizer)

    def prompt(self, state: EpisodeState, text: str) -> str:
        return self._text(self.chat.prompt_ids(state.messages))

    def feedback(self, before: EpisodeState, transition: Transition, action: list[int]) -> str:
        said = new_messages(before.messages, transition.state.messages) or [
            {"role": "user", "content": transition.observation or ""}
        ]
        return self._text(self.chat.observation_ids(said, ended=self.chat.ends_turn(action)))

    def _text(self, ids: Sequence[int]) -> str:
        return str(self.tokenizer.decode(list(ids), skip_special_tokens=False))


def template_text(env: Any, tokenizer: Any) -> TemplateText | None:
    """The chat template's texts where the tokenizer has one, else the environment's."""
    return TemplateText(env, tokenizer) if getattr(tokenizer, "chat_template", None) else None


AgentExecutor = agent_executor_class(
    os.environ.get("REWARDSMITH_ON_ENVIRONMENT_ERROR", "raise"), template_text
)
