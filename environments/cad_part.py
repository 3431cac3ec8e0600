"""Model a part from a text spec in CadQuery, building it in the CAD sandbox turn by turn.

Each task is a part with known dimensions and features (holes, slots, fillets, bosses;
`environments.cad_tasks`). The model calls ``build(script)`` with a CadQuery (or
build123d) script ending in ``show_object(result)``; the tool runs it in the warm CAD
sandbox (`environments.cad_build`) and answers with the build error (the traceback lines
of the model's own script) or the measured facts of the part it made: bounding box,
volume, solids, faces, genus. Never anything of the reference.

The final answer is the script itself in a fenced block, with no tool call. It must be a
script that already built in an earlier turn (exactly, up to surrounding blank space);
any other answer is refused with an observation saying so, and the episode goes on. The
final reward is `cad_code` (``kind="cadquery"``) on that script against the reference
part's B-rep and tessellated mesh: the B-rep volume IoU, the mesh distances and the
topology (shells, genus) must all match.

The reference part is built from its script once per machine into a private cache outside
the repository and every jail (`cad_build.reference_files`); the task file holds only ids
and prompts.

    >>> CadPart().tools[0].name
    'build'
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, ClassVar

from rewardsmith.environments.cad_build import CadUnavailable, build_part, reference_files
from rewardsmith.environments.cad_tasks import TASKS_FILE, reference_script
from rewardsmith.environments.episode_exploits import EpisodeExploit
from rewardsmith.environments.protocol import EpisodeLimits, EpisodeState, Transition
from rewardsmith.environments.timed_tools import TimedTools
from rewardsmith.environments.tools import Tool, ToolCall

__all__ = [
    "CAD_TASKS",
    "FINAL_REWARD",
    "CadPart",
    "build",
    "build_call",
    "expert_actions",
    "script_of",
]

CAD_TASKS = TASKS_FILE
MAX_BUILDS_PER_TURN = 2
_FENCE = re.compile(r"```(?:python|py)?[ \t]*\n(.*?)```", re.DOTALL)
_UNAVAILABLE = f"error: tool 'build' failed: {CadUnavailable.__name__}"

FINAL_REWARD: dict[str, Any] = {
    "grader": {
        "weighted": {
            "components": {"part": {"verify": "cad_code", "kind": "cadquery"}},
            "weights": {"part": 1.0},
        }
    }
}

INSTRUCTIONS = (
    "Write a CadQuery script (`import cadquery as cq`) that builds this part and ends with "
    'show_object(result). Build it with the tool build(script): <tool_call>{"name": '
    '"build", "arguments": {"script": "..."}}</tool_call>; it answers with the build error '
    "or the part's bounding box, volume, faces and genus (through-holes). When the part is "
    "right, answer with the exact script you built, in one ```python fenced block and "
    "without a tool call."
)


def build(script: str) -> str:
    """Build a CadQuery script in the CAD sandbox; the error, or the part's measured facts.

    Args:
        script: The whole script; it ends with show_object(result).
    """
    return build_part(script)


def script_of(text: str) -> str | None:
    """The first fenced Python block of an answer, stripped (None when there is none)."""
    match = _FENCE.search(text)
    return match.group(1).strip() if match else None


def _digest(script: str) -> str:
    return hashlib.sha256(script.strip().encode("utf-8", "replace")).hexdigest()


def _built(state: EpisodeState) -> set[str]:
    return {d for a in state.attempts for d in a.get("meta", {}).get("built", ())}


class CadPart(TimedTools):
    """Build a part from a text spec; see the module doc."""

    name: ClassVar[str] = "cad_part"
    step_cost_hint: ClassVar[float] = 100.0  # every build is two sandboxed CAD runs
    turn_budget_s: ClassVar[float] = 45.0
    episode_budget_s: ClassVar[float] = 180.0
    tools = (Tool(build),)

    def __init__(
        self, limits: EpisodeLimits | None = None, scorer: Mapping[str, Any] | None = None
    ) -> None:
        super().__init__(
            FINAL_REWARD, limits or EpisodeLimits(max_turns=8, max_tokens=16384), scorer
        )

    def prompt(self, task: Mapping[str, Any]) -> str:
        return f"{task['prompt']}\n\n{INSTRUCTIONS}"

    def reset(self, task: Mapping[str, Any]) -> tuple[EpisodeState, str]:
        """A bundled part's reference becomes the cached reference B-rep and mesh."""
        task = dict(task)
        reference = dict(task.get("reference") or {})
        if "part" in reference:
            reference.update(reference_files(reference_script(task)))
        task["reference"] = reference
        return super().reset(task)

    def answer(self, state: EpisodeState, action: str) -> Transition:
        """Only a script that built in an earlier turn is taken as the answer."""
        script = script_of(action)
        if script is None or _digest(script) not in _built(state):
            problem = (
                "error: the answer must be one ```python fenced block"
                if script is None
                else "error: that script was never built; build it first, then answer "
                "with exactly the script that built"
            )
            state = state.with_attempt(action, problem, kind="refused")
            return Transition(state, problem, None, False)
        return super().answer(state, action)

    def _call_all(
        self, state: EpisodeState, calls: list[ToolCall]
    ) -> tuple[list[str], dict[str, Any]]:
        builds = [c for c in calls if not c.error and c.name == "build"]
        allowed = builds[:MAX_BUILDS_PER_TURN]  # each build may start a CAD server
        results, meta = super()._call_all(state, allowed)
        if any(r.startswith(_UNAVAILABLE) for r in results):
            raise CadUnavailable(next(r for r in results if r.startswith(_UNAVAILABLE)))
        by_call = dict(zip(map(id, allowed), results, strict=True))
        built = [
            _digest(c.arguments.get("script", ""))
            for c, r in zip(allowed, results, strict=True)
            if r.startswith("built:")
        ]
        answered = [
            by_call.get(id(c))
            or (f"error: {c.error}" if c.error else "")
            or f"error: at most {MAX_BUILDS_PER_TURN} builds run per turn; this one did not"
            for c in calls
        ]
        return answered, {**meta, "built": built}

    def exploits(self, tasks: Sequence[Mapping[str, Any]]) -> Iterator[EpisodeExploit]:
        from rewardsmith.environments.cad_exploits import exploits

        return exploits(tasks)


def build_call(script: str) -> str:
    return (
        f"<tool_call>{json.dumps({'name': 'build', 'arguments': {'script': script}})}</tool_call>"
    )


def expert_actions(task: Mapping[str, Any]) -> list[str]:
    """The reference script played as turns: build it, then answer with it."""
    script = reference_script(task)
    return [build_call(script), f"```python\n{script}\n```"]
