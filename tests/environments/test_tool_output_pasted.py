"""A tool's output pasted after the answer (`tool_output_appended`) in `math_tool`.

The environment search (`audit --env math_tool --search --budget 200 --seed 0`) found four
chains paying 1.0 where the relation said "at most 0": a changing rewrite of the expert's
``\\boxed{gold}`` (`disowned_after`, `framed_untrue`, `gold_as_last_number`,
`gold_in_a_term`), then the output of the expert's ``print(gold)`` pasted after it:
``\\boxed{30} Scratch that.\\n\\n30``, ``#### 73x + 30\\n\\n30``.

The reading is right and the relation was wrong. The model writes every character of its
final action: a value it copies from the tool is a value it states, and the `math`
verifier reads it as it reads any text (a disowning applies to the value it disowns and a
value after it corrects it; a last line answers where no marked answer comes before it).
What pasting may never do is change a *marked* answer (a box, an answer phrase, a stated
correction, read with no problem): after one, another value is a hedge, and that the
relation keeps testing. After a disowned, framed or unmarked answer, the pasted value is the answer
(as the relation already said of an answer with no digit in it), so the relation does not
apply there.

Reading the tool's output out of the answer instead would refuse right answers (last rows).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from rewardsmith.environments.bundled_relations import relations_for_environment
from rewardsmith.environments.episode_exploits import play
from rewardsmith.environments.episode_relations import actions_of, episode_sample
from rewardsmith.environments.math_tool import MathWithPython
from rewardsmith.environments.policies import POLICIES, bundled_tasks

pytestmark = pytest.mark.sandbox

TASKS = {t["id"]: t for t in bundled_tasks("math_tool")}
WHOLE = ["m-divisors", "m-lcm", "m-binom", "m-collatz"]  # integer golds (every relation applies)


@pytest.fixture(scope="module")
def env() -> Iterator[MathWithPython]:
    made = MathWithPython()
    yield made
    made.close()


def _relations(env: MathWithPython) -> dict[str, object]:
    return {r.name.removeprefix("math_tool/"): r for r in relations_for_environment(env)}


def _expert(task_id: str):  # type: ignore[no-untyped-def]
    task = TASKS[task_id]
    return episode_sample("math_tool", task, POLICIES["math_tool"].expert(task) or [], "expert")


UNANSWERED_OR_UNMARKED = [
    "disowned_after",
    "framed_untrue",
    "gold_in_a_term",
]
"""`gold_as_last_number` writes some of its forms as a GSM8K answer line (``#### 73x + 30``),
which `math` reads as a marked answer, as it reads "Answer:" (a value after it is a hedge):
there the paste applies and earns nothing (the test below)."""


def test_after_a_gsm8k_answer_line_the_paste_is_a_hedge(env: MathWithPython) -> None:
    relations = _relations(env)
    pasted, first = relations["tool_output_appended"], relations["math/gold_as_last_number"]
    applied = 0
    for task_id in WHOLE:
        for seed in range(3):
            changed = first(_expert(task_id), seed)  # type: ignore[operator]
            made = pasted(changed, seed)  # type: ignore[operator]
            if made is None:  # another form (an <answer> tag holding a list): not marked
                assert "####" not in actions_of(changed)[-1]
                continue
            applied += 1
            assert "####" in actions_of(made)[-1]
            assert play(env, TASKS[task_id], actions_of(made)) == 0.0, actions_of(made)
    assert applied > 0


@pytest.mark.parametrize("first", UNANSWERED_OR_UNMARKED)
@pytest.mark.parametrize("task_id", WHOLE)
def test_no_paste_is_dressing_after_an_answer_that_is_not_a_marked_one(
    env: MathWithPython, task_id: str, first: str
) -> None:
    """The search's four chains (budget 200, seed 0): after these the pasted value is the
    only one the text still asserts, or a new last line: an answer, not a dressing."""
    relations = _relations(env)
    pasted = relations["tool_output_appended"]
    for seed in range(3):
        changed = relations[f"math/{first}"](_expert(task_id), seed)  # type: ignore[operator]
        assert changed is not None
        assert pasted(changed, seed) is None, actions_of(changed)  # type: ignore[operator]


@pytest.mark.parametrize("first", ["sign", "digit", "retraction", "plus_one"])
@pytest.mark.parametrize("task_id", WHOLE[:2])
def test_after_a_marked_wrong_answer_the_paste_still_earns_nothing(
    env: MathWithPython, task_id: str, first: str
) -> None:
    """The relation keeps its teeth where the answer is marked: ``\\boxed{-30}\\n\\n30``."""
    relations = _relations(env)
    pasted = relations["tool_output_appended"]
    made = pasted(relations[f"math/{first}"](_expert(task_id), 0), 0)  # type: ignore[operator]
    assert made is not None
    assert play(env, TASKS[task_id], actions_of(made)) == 0.0


def test_the_expert_answer_is_still_dressed_with_the_tool_output(env: MathWithPython) -> None:
    pasted = _relations(env)["tool_output_appended"]
    for task_id in TASKS:
        made = pasted(_expert(task_id), 0)  # type: ignore[operator]
        assert made is not None, task_id
        assert actions_of(made)[-1].endswith(f"\n\n{TASKS[task_id]['reference']}\n")


COMPUTE = '<tool_call>{"name": "python", "arguments": {"code": "print(30)"}}</tool_call>'
PAID = [
    "30",  # the tool's output, alone
    "So the result is\n\n30",  # math/undelimited: a preserving form of the expert's answer
    "I first got 29 by hand; the program says:\n\n30",
    "\\boxed{31} Scratch that.\n\n30",  # a disowned box, then the corrected value
    "\\boxed{30}\n\n30",
]
UNPAID = [
    "\\boxed{30} Scratch that.",
    "\\boxed{31}\n\n30",  # a marked answer, then another value: a hedge
    "The answer is 31.\n\n30",
    "<answer>31</answer>\n\n30",
    "#### 31\n\n30",  # GSM8K's answer line marks an answer as "Answer:" does
]


@pytest.mark.parametrize("answer", PAID)
def test_a_value_copied_from_the_tool_is_the_models_answer(
    env: MathWithPython, answer: str
) -> None:
    """Controls: stripping what the tool printed from the answer would refuse all of these."""
    task = {"id": "d", "prompt": "How many divisors has 720?", "reference": "30"}
    assert play(env, task, [COMPUTE, answer]) == 1.0


@pytest.mark.parametrize("answer", UNPAID)
def test_a_disowned_or_hedged_answer_earns_nothing_after_the_tool(
    env: MathWithPython, answer: str
) -> None:
    task = {"id": "d", "prompt": "How many divisors has 720?", "reference": "30"}
    assert play(env, task, [COMPUTE, answer]) == 0.0
