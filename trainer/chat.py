"""Chat templates in multi-turn rollouts: prompts and observations rendered with the
tokenizer's own `apply_chat_template` (tools passed as schemas), actions never
re-tokenized.

An episode's row is the prompt (its messages rendered with the generation prompt), then
per turn the tokens the model sampled, exactly as sampled, then the tokens of what the
environment said (tool results, a user message) followed by the next generation prompt.
Those observation tokens are the template's own rendering of the new messages where it
appends them after an assistant turn: rendered after a fixed placeholder conversation and
taken as the suffix, so every separator is the one the model meets in production. When
the model stopped without the template's end-of-turn tokens (its turn was cut), they are
put back at the head of the observation, as context it did not sample.

    >>> from rewardsmith.trainer.tiny import ARITHMETIC_ALPHABET, build_tokenizer, CHAT_TEMPLATE
    >>> tokenizer = build_tokenizer(ARITHMETIC_ALPHABET + "AUT:\\n", chat_template=CHAT_TEMPLATE)
    >>> chat = ChatRenderer(tokenizer)
    >>> tokenizer.decode(chat.prompt_ids([{"role": "user", "content": "3+4="}]))
    'U:3+4=\\nA:'
    >>> tokenizer.decode(chat.observation_ids([{"role": "user", "content": "8"}], ended=True))
    'U:8\\nA:'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ChatRenderer", "new_messages"]

Message = Mapping[str, Any]
_PLACEHOLDER: tuple[Message, ...] = (
    {"role": "user", "content": "0"},
    {"role": "assistant", "content": "0"},
)


@dataclass(frozen=True)
class ChatRenderer:
    """Token ids of prompts and observations under `tokenizer`'s chat template."""

    tokenizer: Any
    tools: tuple[dict[str, Any], ...] = ()
    """JSON schemas of the environment's tools (`Tool.schema`), given to the template."""
    _closer: list[int] = field(init=False, repr=False, compare=False)
    _answered: list[int] = field(init=False, repr=False, compare=False)
    """The placeholder conversation's ids: every observation is the suffix after them."""

    def __post_init__(self) -> None:
        if not getattr(self.tokenizer, "chat_template", None):
            raise ValueError(
                "the tokenizer has no chat template: give the model one (tokenizer_config.json "
                "`chat_template`), or roll out with chat_template off"
            )
        user_only = self._ids(_PLACEHOLDER[:1], generation_prompt=True)
        answered = self._ids(_PLACEHOLDER, generation_prompt=False)
        content = self.tokenizer(_PLACEHOLDER[1]["content"], add_special_tokens=False)
        start = len(user_only) + len(content["input_ids"])
        if answered[: len(user_only)] != user_only:
            raise ValueError(
                "the chat template does not render an assistant turn after its generation "
                "prompt; multi-turn rollouts need a template that appends turns"
            )
        object.__setattr__(self, "_closer", answered[start:])
        object.__setattr__(self, "_answered", answered)

    @classmethod
    def for_environment(cls, env: Any, tokenizer: Any) -> ChatRenderer:
        """The renderer of `env`'s episodes: its tools' schemas given to the template."""
        tools = getattr(env, "tools", ()) or ()
        return cls(tokenizer, tuple(tool.schema for tool in tools))

    def prompt_ids(self, messages: Sequence[Message]) -> list[int]:
        """The episode's first context: its messages and the generation prompt."""
        return self._ids(messages, generation_prompt=True)

    def observation_ids(self, messages: Sequence[Message], ended: bool) -> list[int]:
        """The tokens that follow an assistant turn: the end-of-turn tokens when the model
        did not produce them (`ended` False), the new `messages`, the generation prompt."""
        before = self._answered
        after = self._ids([*_PLACEHOLDER, *messages], generation_prompt=True)
        if after[: len(before)] != before:
            raise ValueError(
                "the chat template renders a conversation differently once a turn is added; "
                "its observation tokens cannot be appended to a live episode"
            )
        return ([] if ended else list(self._closer)) + after[len(before) :]

    def ends_turn(self, action_ids: Sequence[int]) -> bool:
        """Whether the sampled action ends with the template's end-of-turn tokens."""
        closer = self._closer
        return not closer or list(action_ids[-len(closer) :]) == closer

    def _ids(self, messages: Sequence[Message], generation_prompt: bool) -> list[int]:
        ids = self.tokenizer.apply_chat_template(
            [dict(m) for m in messages],
            tools=list(self.tools) or None,
            add_generation_prompt=generation_prompt,
            tokenize=True,
            return_dict=False,
        )
        return [int(i) for i in ids]


def new_messages(before: Sequence[Message], after: Sequence[Message]) -> list[Message]:
    """The messages an environment added after the model's last assistant turn."""
    added = list(after[len(before) :])
    last = max((i for i, m in enumerate(added) if m.get("role") == "assistant"), default=-1)
    return added[last + 1 :]
