"""rewardsmith.environments: multi-turn task environments whose rewards are our verifiers.

An environment is a picklable object with explicit, serialisable episode state:

    state, observation = env.reset(task)
    transition = env.step(state, action_text)   # -> state, observation, reward, done

Tool calls use the transformers chat-template convention (schemas from typed Python
functions); model-written code runs only in the sandbox; every reward is a
`rewardsmith.graders.Reward` from a `Scorer`. See docs/environments.md.
"""

from typing import TYPE_CHECKING, Any

from rewardsmith.environments.arithmetic import RetryArithmetic
from rewardsmith.environments.cad_part import CadPart
from rewardsmith.environments.code_repair import CodeRepair
from rewardsmith.environments.finance_document import FinanceDocument
from rewardsmith.environments.math_tool import MathWithPython
from rewardsmith.environments.mixed import MixedEnvironment
from rewardsmith.environments.protocol import (
    Environment,
    EpisodeLimits,
    EpisodeState,
    Transition,
)
from rewardsmith.environments.tools import Tool, ToolCall, parse_tool_calls

if TYPE_CHECKING:
    from rewardsmith.environments.blender_scene import BlenderSceneEnv

__all__ = [
    "BlenderSceneEnv",
    "CadPart",
    "CodeRepair",
    "Environment",
    "EpisodeLimits",
    "EpisodeState",
    "FinanceDocument",
    "MathWithPython",
    "MixedEnvironment",
    "RetryArithmetic",
    "Tool",
    "ToolCall",
    "Transition",
    "parse_tool_calls",
]


def __getattr__(name: str) -> Any:
    # Blender's environment imports the scene checks (numpy, images): loaded on first use, so
    # `import rewardsmith.environments` (the CLI, every server) does not carry them.
    if name == "BlenderSceneEnv":
        from rewardsmith.environments.blender_scene import BlenderSceneEnv

        return BlenderSceneEnv
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
