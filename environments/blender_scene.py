"""Build a Blender scene in steps: `run_bpy`, `inspect_scene`, `render_preview`.

The model is asked for a scene (objects with sizes and places, materials, lights, a camera,
render settings: every value the checks use is in the prompt) and builds it with tools:

- `run_bpy(code)`: runs the script in the sandboxed warm Blender server on the episode's
  saved scene; the scene it saves is the next state. A Python error, a syntax error, a
  hang, a crash, a signal or a limit is the observation, and the scene stays as it was.
- `inspect_scene()`: objects (evaluated, world-space dimensions), materials as rendered,
  lights, camera and render settings, as text (the trusted dump the checks read).
- `render_preview(size)`: a small seeded Cycles render from the scene camera; the
  observation is a text summary, plus the PNG's path for a vision model (``vision=True``).

The state between turns is the saved .blend, kept under its hash in a per-episode scratch
folder of the host (`blender_workbench`); the model's code only ever sees a copy of it.

**Rewards.** Each tool turn is paid ``potential(after) - potential(before)``, where the
potential is the `blender_scene` verifier's sequential staged score (a stage counts once
the earlier ones are complete) of the scene's trusted dump: potential-based shaping, so an
episode's turn rewards sum to the potential of its last scene minus that of the empty one,
and a raise-then-remove round trip pays nothing. The final reward is the verifier itself
on the episode's accepted scripts replayed in order (`sample`), truth render included, so
a scene that renders black does not pass; the text of the final answer is never run or
read. An episode's dump scores to the same reward with ``rewardsmith score``.

    >>> BlenderSceneEnv.name, [t.name for t in BlenderSceneEnv.tools]
    ('blender_scene', ['run_bpy', 'inspect_scene', 'render_preview'])
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

from rewardsmith.environments import blender_workbench as wb
from rewardsmith.environments.blender_text import describe_render, describe_scene
from rewardsmith.environments.episode_exploits import EpisodeExploit
from rewardsmith.environments.protocol import EpisodeLimits, EpisodeState, Transition
from rewardsmith.environments.timed_tools import TimedTools, episode_tool_seconds
from rewardsmith.environments.tools import Tool, ToolCall
from rewardsmith.graders import Component, Reward
from rewardsmith.verifiers.blender import SceneSpec, check_scene, stage_scores, staged_score
from rewardsmith.verifiers.types import Sample, Step

__all__ = [
    "BLENDER_TASKS",
    "FINAL_REWARD",
    "MAX_SCRIPTS",
    "BlenderSceneEnv",
    "inspect_scene",
    "load_tasks",
    "potential",
    "render_preview",
    "run_bpy",
]

BLENDER_TASKS = Path(__file__).resolve().parents[1] / "datasets/environments/blender_scene.jsonl"
MAX_SCRIPTS = 12
"""Accepted `run_bpy` scripts per episode at most (the final replay runs them all)."""
MAX_PREVIEW = 256
_EPISODE_DISK = 256 << 20

FINAL_REWARD: dict[str, Any] = {
    "grader": {
        "weighted": {
            "components": {
                "scene": {
                    "verify": "blender_scene",
                    "staging": "sequential",
                    "max_steps": MAX_SCRIPTS,
                    "wall_s": 60.0,
                }
            },
            "weights": {"scene": 1.0},
        }
    }
}

INSTRUCTIONS = (
    "Tools: run_bpy(code) runs a Blender Python script on your scene (the scene it leaves "
    "is kept for the next call), inspect_scene() describes the scene, render_preview(size) "
    'renders it small. Call one as <tool_call>{"name": ..., "arguments": {...}}</tool_call>. '
    "When the scene is finished, reply without a tool call."
)


def load_tasks() -> list[dict[str, Any]]:
    """The bundled scene tasks (`datasets/environments/blender_scenes.py` writes them)."""
    lines = BLENDER_TASKS.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def potential(dump: Mapping[str, Any], spec: Mapping[str, Any]) -> float:
    """The verifier's sequential staged score of a scene dump: the shaping potential. A
    stage counts once every earlier one is complete, so render settings set on a scene
    with no objects (or a scene deleted after its build) are worth nothing."""
    scores = stage_scores(check_scene(dict(dump), SceneSpec.model_validate(spec)))
    return round(staged_score(scores, "sequential"), 6)


def _drop_last_scripts(state: EpisodeState) -> EpisodeState:
    """The state with its last turn's accepted scripts set aside (kept in the meta as
    ``dropped_scripts``) and its scene and potential back to where the turn began."""
    *earlier, last = state.attempts
    before = BlenderSceneEnv.scene_of(replace(state, attempts=tuple(earlier)))
    meta = dict(last["meta"])
    meta["dropped_scripts"], meta["scripts"] = meta.get("scripts", []), []
    meta["blend"], meta["potential"] = before["blend"], meta["potential_before"]
    return replace(state, attempts=(*earlier, {**last, "meta": meta}))


def _key(sample: Sample) -> str:
    """Which episode and scripts a final reward belongs to."""
    steps = [step.action for step in sample.steps]
    return hashlib.sha256(json.dumps([sample.id, sample.reference, steps]).encode()).hexdigest()


# --------------------------------------------------------------------------- the turn's bench


class _Bench:
    """One turn's view of the episode's scene; the tools of the turn change it in order."""

    def __init__(
        self, state: EpisodeState, env: BlenderSceneEnv, deadline: float, prior: list[str]
    ) -> None:
        scene = env.scene_of(state)
        self.folder, self.sha, self.potential = (
            Path(scene["dir"]),
            scene["blend"],
            scene["potential"],
        )
        self.state, self.env, self.deadline, self.prior = state, env, deadline, prior
        self.scripts_left = MAX_SCRIPTS - len(prior)
        self.vision, self.call_wall_s = env.vision, env.call_wall_s
        self.scripts: list[str] = []

    def wall(self) -> float:
        left = self.deadline - time.monotonic()
        if left < 0.5:
            raise TimeoutError("no time is left in this turn's budget")
        return min(self.call_wall_s, left)

    def blend(self) -> bytes:
        return (self.folder / f"{self.sha}.blend").read_bytes()

    def dump(self) -> dict[str, Any]:
        loaded: dict[str, Any] = json.loads((self.folder / f"{self.sha}.json").read_text())
        return loaded


_BENCH: ContextVar[_Bench] = ContextVar("blender_bench")


def run_bpy(code: str) -> str:
    """Run a Blender Python (bpy) script on the scene; the scene it leaves is kept.

    Args:
        code: The script, e.g. "import bpy\\nbpy.ops.mesh.primitive_cube_add(size=2)".
    """
    bench = _BENCH.get()
    if bench.scripts_left <= 0:
        return f"error: this episode's {MAX_SCRIPTS} scripts are used up; the scene is kept"
    if sum(p.stat().st_size for p in bench.folder.iterdir()) > _EPISODE_DISK:
        return "error: this episode's scene storage is full; the scene is kept"
    outcome = wb.run_script(bench.blend(), code, bench.wall())
    if outcome.data is None:
        return f"error: {outcome.problem}; the scene is unchanged\n{outcome.log}".strip()
    dump, problem = wb.inspect_blend(outcome.data, bench.wall())
    if dump is None:
        return f"error: {problem}; the scene is unchanged\n{outcome.log}".strip()
    bench.sha = wb.store(bench.folder, outcome.data, dump)
    bench.scripts.append(code)
    bench.scripts_left -= 1
    bench.potential = bench.env.replayed_value(bench.state, [*bench.prior, *bench.scripts])
    counts = {k: len(dump.get(k) or []) for k in ("objects", "materials", "lights")}
    summary = ", ".join(f"{v} {k}" for k, v in counts.items())
    return f"ok: the script ran; the scene now holds {summary}.\n{outcome.log}".strip()


def inspect_scene() -> str:
    """Describe the scene: objects with their evaluated world-space sizes, materials as
    rendered, lights, the camera and the render settings."""
    return describe_scene(_BENCH.get().dump())


def render_preview(size: int = 64) -> str:
    """Render the scene from its camera, small (Cycles, 16 samples), and summarise the image.

    Args:
        size: Width in pixels, 16 to 256 (the height follows the camera's frame).
    """
    bench = _BENCH.get()
    if not 16 <= size <= MAX_PREVIEW:
        return f"error: size {size} is outside 16..{MAX_PREVIEW} pixels; nothing was rendered"
    outcome = wb.render_blend(bench.blend(), size, 16, bench.wall())
    if outcome.data is None:
        return f"error: {outcome.problem}"
    text = describe_render(outcome.data, bench.dump())
    if not bench.vision:
        return text
    path = bench.folder / f"preview-{uuid.uuid4().hex[:8]}.png"
    path.write_bytes(outcome.data)
    return f"{text}\nimage: {path}"


# --------------------------------------------------------------------------- the environment


class BlenderSceneEnv(TimedTools):
    """Build a scene with Blender tools; see the module doc."""

    name: ClassVar[str] = "blender_scene"
    step_cost_hint: ClassVar[float] = 100.0
    turn_budget_s: ClassVar[float] = 30.0
    episode_budget_s: ClassVar[float] = 120.0
    tools = (Tool(run_bpy), Tool(inspect_scene), Tool(render_preview))

    def __init__(
        self,
        limits: EpisodeLimits | None = None,
        scorer: Mapping[str, Any] | None = None,
        vision: bool = False,
        scratch: str | None = None,
        call_wall_s: float = 10.0,
    ) -> None:
        super().__init__(
            FINAL_REWARD, limits or EpisodeLimits(max_turns=10, max_tokens=16384), scorer
        )
        self.vision = vision
        self.call_wall_s = call_wall_s
        """One sandboxed program's wall-clock limit (less when the turn has less left)."""
        self.scratch = scratch or tempfile.mkdtemp(prefix="rewardsmith-blender-env-")
        self._own_scratch = scratch is None

    def prompt(self, task: Mapping[str, Any]) -> str:
        return f"{task['prompt']}\n\n{INSTRUCTIONS}"

    def reset(self, task: Mapping[str, Any]) -> tuple[EpisodeState, str]:
        """A fresh scratch folder holding the empty scene; its hash and potential are the
        episode's first state (kept in the task copy, which no observation shows)."""
        task = dict(task)
        folder = Path(self.scratch) / uuid.uuid4().hex
        folder.mkdir(parents=True)
        blend, dump = wb.empty_scene()
        start = {
            "dir": str(folder),
            "blend": wb.store(folder, blend, dump),
            "potential": potential(dump, task["reference"]),
        }
        task["scene_state"] = start
        return super().reset(task)

    def close(self) -> None:
        """Stop the Scorers; remove the scratch folder this environment made (the scenes
        of episodes still running go with it)."""
        super().close()
        if self._own_scratch:
            shutil.rmtree(self.scratch, ignore_errors=True)

    def __getstate__(self) -> dict[str, Any]:
        """A pickled copy shares the scratch folder but never removes it."""
        kept = {k: v for k, v in super().__getstate__().items() if k != "_finals"}
        return {**kept, "_own_scratch": False}

    # ------------------------------------------------------------------ tools, in order

    def _call_all(
        self, state: EpisodeState, calls: list[ToolCall]
    ) -> tuple[list[str], dict[str, Any]]:
        """The calls one after another (each sees the scene the last left), within the
        turn's budget; the turn's scene, potentials and accepted scripts go in its meta."""
        scene = self.scene_of(state)
        left = min(self.turn_budget_s, self.episode_budget_s - episode_tool_seconds(state))
        started = time.monotonic()
        bench = _Bench(state, self, started + left, self.scripts_of(state))
        token = _BENCH.set(bench)
        try:
            results = [self._call_one(call) for call in calls]
        finally:
            _BENCH.reset(token)
        meta = {
            "tool_s": round(time.monotonic() - started, 3),
            "blend": bench.sha,
            "potential_before": scene["potential"],
            "potential": bench.potential,
            "scripts": bench.scripts,
        }
        return results, meta

    def _call_one(self, call: ToolCall) -> str:
        try:
            return self._call(call)
        except TimeoutError as exc:
            kept = "the scene is as the last finished call left it"
            return f"error: tool {call.name!r} stopped: {exc}; {kept}"

    def _call(self, call: ToolCall) -> str:
        """`ToolEnvironment._call`, except that a sandbox that cannot start is raised: the
        environment's failure ends the episode instead of reading as the model's."""
        if call.error:
            return f"error: {call.error}"
        tool = next(t for t in self.tools if t.name == call.name)
        try:
            return str(tool.function(**call.arguments))[:4_000]
        except (wb.SandboxUnavailable, TimeoutError):
            raise
        except Exception as exc:  # a tool's own failure is the observation
            return f"error: tool {call.name!r} failed: {type(exc).__name__}: {exc}"

    @staticmethod
    def scripts_of(state: EpisodeState) -> list[str]:
        """The scripts `run_bpy` accepted so far, in order: what the final reward replays."""
        return [code for a in state.attempts for code in a.get("meta", {}).get("scripts", ())]

    @staticmethod
    def scene_of(state: EpisodeState) -> dict[str, Any]:
        """The scene after the last turn: its folder, hash and potential."""
        scene = dict(state.task["scene_state"])
        for attempt in reversed(state.attempts):
            meta = attempt.get("meta", {})
            if "blend" in meta:
                return {**scene, "blend": meta["blend"], "potential": meta["potential"]}
        return scene

    # ------------------------------------------------------------------ rewards

    def _continue(
        self, state: EpisodeState, observation: str, reward: Reward | None = None
    ) -> Transition:
        """A tool turn is paid its potential difference (shaping). A tool turn that ends
        the episode (turn, token or time limit) is paid the final reward only, so its
        scripts are dropped from the scored scene: else a scene built earlier and deleted
        in that last turn would keep the shaping paid for it and lose nothing."""
        meta = state.attempts[-1].get("meta", {}) if state.attempts else {}
        if reward is None and "potential" in meta and self._ends(state):
            state = _drop_last_scripts(state)
        elif reward is None and "potential" in meta:
            delta = meta["potential"] - meta["potential_before"]
            shaping = Component(delta, 1.0, delta)
            reward = Reward(
                str(state.task.get("id", "episode")),
                delta,
                {"shaping": shaping},
                {},
                reason=f"potential {meta['potential_before']:.3f} -> {meta['potential']:.3f}",
            )
        return super()._continue(state, observation, reward)

    def _ends(self, state: EpisodeState) -> bool:
        return bool(self.limits.exhausted(state)) or (
            episode_tool_seconds(state) >= self.episode_budget_s
        )

    def replayed_value(self, state: EpisodeState, scripts: list[str]) -> float:
        """The final reward of an episode whose accepted scripts are `scripts`: the shaping
        potential after a turn. It is the very Reward `finish` pays when no script is
        accepted after it (kept in `_finals`), so the last potential and the final reward
        are one number: a script that acts differently live and in the replay (checking
        /box/in.blend, the file path, the clock, chance) or a replay past its time limit
        gains nothing from the shaping."""
        sample = self.sample(state, scripts=scripts)
        reward = self._scorer_for(self.final_reward).score([sample])[0]
        finals = self.__dict__.setdefault("_finals", {})
        finals[_key(sample)] = reward
        while len(finals) > 256:
            finals.pop(next(iter(finals)))
        return 0.0 if reward.value is None else float(reward.value)

    def finish(self, state: EpisodeState, end: str) -> Transition:
        """The final reward (the one the last potential was read from, when the episode
        accepted a script); the episode's scratch folder is removed after it."""
        cached = self.__dict__.get("_finals", {}).pop(_key(self.sample(state)), None)
        if cached is None:
            transition = super().finish(state, end)
        else:
            transition = Transition(state.ended(end), None, cached, True)
        shutil.rmtree(state.task["scene_state"]["dir"], ignore_errors=True)
        return transition

    def sample(
        self, state: EpisodeState, attempts: int | None = None, scripts: list[str] | None = None
    ) -> Sample:
        """The trajectory the verifier replays: each accepted script, in order (the final
        answer's text is not a script and is never run); `scripts` replaces them."""
        chosen = state.attempts if attempts is None else state.attempts[:attempts]
        if scripts is None:
            scripts = self.scripts_of(replace(state, attempts=tuple(chosen)))
        steps = [Step(action=code, meta={"kind": "script"}) for code in scripts]
        task = state.task
        return Sample(
            id=str(task.get("id", "episode")),
            prompt=self.prompt(task),
            completion=steps or [Step(action="", meta={"kind": "no_script"})],
            reference=task.get("reference"),
            task=task.get("task"),
            meta={"environment": self.name, "end": state.end, "turns": state.turn},
        )

    def exploits(self, tasks: Sequence[Mapping[str, Any]]) -> Iterator[EpisodeExploit]:
        from rewardsmith.environments.blender_policies import exploits

        return exploits(tasks)
