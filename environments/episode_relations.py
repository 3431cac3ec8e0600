"""Metamorphic relations over episodes: rewrites of a scripted policy's *actions* whose
effect on the episode's return is known in advance (`verifiers.metamorphic` for single
answers; `rewardsmith audit --env NAME --search` searches them, `cli.audit_env_search`).

An episode is a `Sample` here: its completion the actions as `Step`s (no observations: the
environment makes those when the episode is played), its reference the whole task, its
``meta["policy"]`` the scripted policy it came from (``expert``: the reference solution
played as turns; ``lazy``: a policy that earns clearly less). Its score is its return as
the trainer sums it (`episode_exploits.played`: the final reward plus every earlier
turn's reward), so shaping that pays for a round trip shows.

The three kinds keep their meaning: a ``preserving`` rewrite (an extra read-only tool call
before the answer, independent calls of a turn reordered or split over two turns, the
same answer in another allowed form) keeps the return; a ``changing`` one (a digit of the
answer, a dimension of the part, a feature removed, an off-by-one in the program) makes
the expert's episode wrong and must lose return (it applies to expert episodes only: a
lazy one is wrong already); a ``dressing`` one (a note to the grader, the answer repeated
or split across turns, a tool flood, a failed try first, a write then its undo, a tool's
output copied as the answer) must not raise the return above its input's.

    >>> import random
    >>> right = episode_sample("toy", {"id": "t", "reference": "7"}, ["7"], "expert")
    >>> note = Relation("toy/note", "dressing", answer_rewrite(lambda a, t, r: a + " (sure)"))
    >>> actions_of(note(right, 0))
    ['7 (sure)']
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from rewardsmith.environments.tools import has_tool_call
from rewardsmith.verifiers.metamorphic import Relation, Rewrite, rewritten
from rewardsmith.verifiers.types import Sample, Step

__all__ = [
    "ActionsChange",
    "AnswerChange",
    "actions_of",
    "answer_index",
    "answer_rewrite",
    "episode_rewrite",
    "episode_sample",
    "intact_only",
    "lifted",
    "map_tool_calls",
    "right_only",
    "task_of",
]

ActionsChange = Callable[[list[str], Mapping[str, Any], random.Random], "list[str] | None"]
"""The new actions of an episode, given its actions, its task and the randomness to draw
from; None (or the same actions) where the rewrite does not apply."""
AnswerChange = Callable[[str, Mapping[str, Any], random.Random], "str | None"]
"""The new text of an episode's final answer (its last action with no tool call)."""

_CALL = re.compile(r"<tool_call>(.*?)</tool_call>", re.DOTALL)


def episode_sample(
    env: str, task: Mapping[str, Any], actions: Sequence[str], policy: str
) -> Sample:
    """A scripted policy's episode on ``task`` as the search holds it."""
    return Sample(
        id=f"{task.get('id', 'task')}:{policy}",
        completion=[Step(action=a) for a in actions],
        reference=dict(task),
        task=env,
        meta={"policy": policy},
    )


def actions_of(sample: Sample) -> list[str]:
    return [step.action for step in sample.steps]


def task_of(sample: Sample) -> dict[str, Any]:
    return dict(sample.reference) if isinstance(sample.reference, Mapping) else {}


def answer_index(actions: Sequence[str], tools: bool = True) -> int | None:
    """Where the final answer is: with tools, the first action with no tool call (the one
    a tool environment ends the episode on; what follows it is never played); without,
    the last action (every action is a try). None when there is none."""
    if not tools:
        return len(actions) - 1 if actions else None
    return next((i for i, a in enumerate(actions) if not has_tool_call(a)), None)


def episode_rewrite(change: ActionsChange, max_turns: int) -> Rewrite:
    """A rewrite of an episode's actions by ``change``; None where it does not apply or
    the new episode would not fit in ``max_turns`` (the environment would end it early:
    that is its turn limit, not a verdict on the rewrite). What it makes is marked
    ``meta["changed"]`` (see `intact_only`)."""

    def rewrite(sample: Sample, rng: random.Random) -> Sample | None:
        actions = actions_of(sample)
        new = change(list(actions), task_of(sample), rng)
        if not new or new == actions or len(new) > max_turns:
            return None
        made = rewritten(sample, [Step(action=a) for a in new])
        return made.model_copy(update={"meta": {**made.meta, "changed": True}})

    return rewrite


def answer_rewrite(change: AnswerChange, tools: bool = True, max_turns: int = 64) -> Rewrite:
    """A rewrite of the episode's final answer text alone."""

    def on_actions(
        actions: list[str], task: Mapping[str, Any], rng: random.Random
    ) -> list[str] | None:
        index = answer_index(actions, tools)
        if index is None:
            return None
        new = change(actions[index], task, rng)
        if new is None:
            return None
        actions[index] = new
        return actions

    return episode_rewrite(on_actions, max_turns)


def right_only(relation: Relation) -> Relation:
    """``relation`` applied to expert episodes only: a changing rewrite needs a right
    answer to make wrong (a lazy episode is wrong already, and changing it may fix it)."""

    def rewrite(sample: Sample, rng: random.Random) -> Sample | None:
        return relation.rewrite(sample, rng) if sample.meta.get("policy") == "expert" else None

    return Relation(relation.name, relation.kind, rewrite, relation.description, relation.limit)


def intact_only(relation: Relation) -> Relation:
    """``relation`` applied to unchanged expert episodes only: a rewrite that drops part
    of the answer (the first half taken as the answer, a tool's output in its place) can
    drop what an earlier rewrite added ("338350. Wait, no: 338351" cut after the first
    figure; a hedge cut off), so it is a dressing of right answers as they were played."""

    def rewrite(sample: Sample, rng: random.Random) -> Sample | None:
        intact = sample.meta.get("policy") == "expert" and not sample.meta.get("changed")
        return relation.rewrite(sample, rng) if intact else None

    return Relation(relation.name, relation.kind, rewrite, relation.description, relation.limit)


def lifted(env: str, relation: Relation, tools: bool, keep_limit: bool = False) -> Relation:
    """A leaf verifier's text relation applied to an episode's final answer (the leaf
    sample's question and reference are the task's: a relation that reads the question,
    as `finance/scale_form` does for a declared scale, reads it here too): ``math/digit``
    becomes ``<env>/math/digit``. A
    changing relation's limit is kept only where asked (``keep_limit``): where other
    components of the environment's reward still pay a wrong answer (a format check), the
    leaf's limit is not the episode's."""

    def change(answer: str, task: Mapping[str, Any], rng: random.Random) -> str | None:
        leaf = Sample(
            id=str(task.get("id", "task")),
            prompt=str(task.get("prompt") or ""),
            completion=answer,
            reference=task.get("reference"),
            task=task.get("task"),
        )
        made = relation.rewrite(leaf, rng)
        return made.completion if made is not None and isinstance(made.completion, str) else None

    limit = relation.limit if keep_limit else None
    return Relation(
        f"{env}/{relation.name}", relation.kind, answer_rewrite(change, tools), "", limit
    )


def map_tool_calls(
    action: str, change: Callable[[dict[str, Any]], dict[str, Any] | None]
) -> str | None:
    """``action`` with each of its tool calls' JSON replaced by ``change(call)`` (a call
    it returns None for is dropped); None where no call changed."""
    changed = False

    def one(match: re.Match[str]) -> str:
        nonlocal changed
        try:
            call = json.loads(match.group(1))
        except ValueError:
            return match.group(0)
        new = change(call) if isinstance(call, dict) else call
        if new == call:
            return match.group(0)
        changed = True
        return "" if new is None else f"<tool_call>{json.dumps(new)}</tool_call>"

    out = _CALL.sub(one, action)
    return out if changed else None


def tool_calls(action: str) -> list[str]:
    """The tool-call blocks of an action, each whole (``<tool_call>...</tool_call>``)."""
    return [m.group(0) for m in _CALL.finditer(action)]


# ----------------------------------------------------------------------------- generic

Actions = Callable[[Mapping[str, Any], random.Random], list[str]]
"""Actions made for a task (a read-only tool call, a write and its undo)."""


def _before_answer(made: Actions, tools: bool) -> ActionsChange:
    def change(actions: list[str], task: Mapping[str, Any], rng: random.Random) -> list[str] | None:
        index = answer_index(actions, tools)
        if index is None:
            return None
        return [*actions[:index], *made(task, rng), *actions[index:]]

    return change


def _multi_call_turns(actions: list[str]) -> list[int]:
    """Turns whose action is two or more tool calls and nothing else."""
    return [
        i for i, a in enumerate(actions) if len(tool_calls(a)) >= 2 and not _CALL.sub("", a).strip()
    ]


def _pick_multi_call_turn(actions: list[str], rng: random.Random) -> tuple[int, list[str]] | None:
    """A turn of two or more tool calls, drawn with `rng`, and its calls."""
    turns = _multi_call_turns(actions)
    if not turns:
        return None
    index = rng.choice(turns)
    return index, tool_calls(actions[index])


def _split_calls(
    actions: list[str], task: Mapping[str, Any], rng: random.Random
) -> list[str] | None:
    picked = _pick_multi_call_turn(actions, rng)
    if picked is None:
        return None
    index, calls = picked
    cut = rng.randrange(1, len(calls))
    return [*actions[:index], "".join(calls[:cut]), "".join(calls[cut:]), *actions[index + 1 :]]


def _reorder_calls(
    actions: list[str], task: Mapping[str, Any], rng: random.Random
) -> list[str] | None:
    picked = _pick_multi_call_turn(actions, rng)
    if picked is None:
        return None
    index, calls = picked
    order = calls[:]
    while order == calls:
        rng.shuffle(order)
    actions[index] = "".join(order)
    return actions


def _split_answer(tools: bool) -> ActionsChange:
    def change(actions: list[str], task: Mapping[str, Any], rng: random.Random) -> list[str] | None:
        index = answer_index(actions, tools)
        if index is None or len(actions[index]) < 2:
            return None
        cut = rng.randrange(1, len(actions[index]))
        answer = actions[index]
        return [*actions[:index], answer[:cut], answer[cut:], *actions[index + 1 :]]

    return change


def _no_tools(actions: list[str], task: Mapping[str, Any], rng: random.Random) -> list[str] | None:
    kept = [a for a in actions if not has_tool_call(a)]
    return kept if kept and len(kept) < len(actions) else None


def generic_relations(
    env: str, max_turns: int, tools: bool, retries: bool = False
) -> list[Relation]:
    """What applies to every environment's episodes: the answer with a trailing newline
    (preserving); every tool call dropped, the answer given straight away (dressing); the
    generic text dressing of `verifiers.metamorphic` (confident prose after the answer,
    the answer repeated) lifted onto the final answer; and, where an answer ends the
    episode (not ``retries``), the answer split across two turns (dressing). Where every
    turn is a new try, the second half is an answer of its own ("-2" split is "-", then
    "2"): that is no dressing of the first."""
    from rewardsmith.verifiers.metamorphic import GENERIC

    def on(name: str, kind: Any, change: ActionsChange, description: str) -> Relation:
        return Relation(f"{env}/{name}", kind, episode_rewrite(change, max_turns), description)

    made = [
        Relation(
            f"{env}/trailing_newline",
            "preserving",
            answer_rewrite(lambda a, t, r: a + "\n", tools, max_turns),
            "the answer ends in a newline",
        ),
        *[lifted(env, relation, tools) for relation in GENERIC],
    ]
    if not retries:
        split = on("answer_split_across_turns", "dressing", _split_answer(tools), "half, rest")
        made.append(intact_only(split))
    if tools:
        made.append(on("no_tools", "dressing", _no_tools, "every tool call dropped"))
    return made


def tool_relations(env: str, max_turns: int, read_only: Actions) -> list[Relation]:
    """What applies to an environment with tools, given ``read_only`` (tool calls that
    change no state, made for a task): one more read-only turn before the answer, a turn's
    calls reordered or split over two turns (preserving, where a turn's calls are
    independent, as in every bundled environment); a flood of read-only calls before the
    answer (dressing: calls past the per-turn cap are refused, none may pay)."""

    def flood(task: Mapping[str, Any], rng: random.Random) -> list[str]:
        return ["".join(c for _ in range(6) for c in read_only(task, rng))]

    def on(name: str, kind: Any, change: ActionsChange, description: str) -> Relation:
        return Relation(f"{env}/{name}", kind, episode_rewrite(change, max_turns), description)

    return [
        on("read_only_call_first", "preserving", _before_answer(read_only, True), "a look first"),
        on("calls_reordered", "preserving", _reorder_calls, "a turn's calls in another order"),
        on("calls_split_over_turns", "preserving", _split_calls, "a turn's calls in two turns"),
        on("tool_flood", "dressing", _before_answer(flood, True), "read-only calls past the cap"),
    ]


def failed_try_first(
    env: str, max_turns: int, tools: bool, changes: Sequence[Relation]
) -> Relation:
    """Dressing: a wrong try (made by one of ``changes``, the environment's changing
    relations) before the right answer: where the environment has tools, the wrong
    version's tool calls (a wrong part built, then the right one); where every action is
    a try, the wrong answer itself. Where the environment lets the policy try again, the
    try must not pay."""

    def change(actions: list[str], task: Mapping[str, Any], rng: random.Random) -> list[str] | None:
        index = answer_index(actions, tools)
        if index is None or not changes:
            return None
        probe = episode_sample(env, task, actions, "expert")
        wrong = rng.choice(list(changes))(probe, rng.randrange(2**31))
        if wrong is None:
            return None
        # With tools, the try is the wrong part built (a wrong answer would end the
        # episode there); without, the wrong answer itself.
        tried = [
            a for a in actions_of(wrong) if a not in actions and (has_tool_call(a) or not tools)
        ]
        if not tried:
            return None
        return [*actions[:index], *tried, *actions[index:]]

    rewrite = episode_rewrite(change, max_turns)
    # On a changed answer the "wrong" try may change it back (-(-13)): right ones only.
    return intact_only(Relation(f"{env}/failed_try_first", "dressing", rewrite, "a wrong try"))


def write_then_undo(env: str, max_turns: int, round_trip: Actions) -> Relation:
    """Dressing: a turn that writes state (raising the shaping potential) and a later one
    that takes it away, before the answer: shaping must not pay for the round trip."""
    return Relation(
        f"{env}/write_then_undo",
        "dressing",
        episode_rewrite(_before_answer(round_trip, True), max_turns),
        "a write, then its undo",
    )
