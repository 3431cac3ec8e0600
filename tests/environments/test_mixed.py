"""Several environments in one batch (`MixedEnvironment`): each task goes to the environment
it names, cost hints come from that environment, and a task naming none is a clear error."""

from __future__ import annotations

import pytest

from rewardsmith.environments import CodeRepair, MixedEnvironment, RetryArithmetic
from rewardsmith.environments.episodes import make_environment


def test_each_task_goes_to_the_environment_it_names() -> None:
    mixed = MixedEnvironment(
        {"retry_arithmetic": RetryArithmetic(), "math_tool": make_environment("math_tool")}
    )
    try:
        sum_task = {
            "id": "s",
            "prompt": "3+4=",
            "reference": "7",
            "environment": "retry_arithmetic",
        }
        math_task = {"id": "m", "prompt": "2**10?", "reference": "1024", "environment": "math_tool"}
        state, _ = mixed.reset(sum_task)
        wrong = mixed.step(state, "8")
        assert not wrong.done and wrong.observation == "wrong, try again"
        state, _ = mixed.reset(math_task)
        assert mixed.step(state, "1024").reward.value == 1.0  # type: ignore[union-attr]
        assert mixed.step_cost(state) == 10.0
        with pytest.raises(ValueError, match="names environment 'chess'"):
            mixed.reset({**sum_task, "environment": "chess"})
    finally:
        mixed.close()


def test_cost_hints_rank_a_sandboxed_test_step_above_a_check() -> None:
    assert CodeRepair.step_cost_hint > make_environment("math_tool").step_cost_hint
    assert make_environment("math_tool").step_cost_hint > RetryArithmetic.step_cost_hint
