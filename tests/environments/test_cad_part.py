"""`cad_part`: builds in the real CAD sandbox, the expert, the lazy policy, every exploit
class on many tasks, hostile scripts, the answer gate, and the dump scored back."""

from __future__ import annotations

import dataclasses
import hashlib
import pickle
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rewardsmith.environments import CadPart, cad_build
from rewardsmith.environments.cad_build import (
    LIMITS,
    CadUnavailable,
    build_part,
    own_traceback,
    reference_files,
)
from rewardsmith.environments.cad_exploits import HOSTILE_SCRIPTS, exploits, peek_script
from rewardsmith.environments.cad_part import MAX_BUILDS_PER_TURN, build_call, expert_actions
from rewardsmith.environments.cad_tasks import EXAMPLES, EXAMPLES_DIR, reference_script
from rewardsmith.environments.episodes import spec_document
from rewardsmith.graders import Scorer
from rewardsmith.verifiers.cad.run import cad_python
from rewardsmith.verifiers.mesh import cad as cad_verifier
from rewardsmith.verifiers.sandbox import Limits, Program, SandboxResult

from .conftest import tasks

pytestmark = pytest.mark.skipif(cad_python() is None, reason="the CAD venv is not installed")

ALL = tasks("cad_part.jsonl")
TASKS = [t for t in ALL if t["id"] not in EXAMPLES or EXAMPLES_DIR.is_dir()]
# Every task is played: all of them with ../shared, the generated ones without (CadQuery's
# examples are read from ../shared and skipped where it is absent).
PLAYED = len(ALL) - (0 if EXAMPLES_DIR.is_dir() else sum(t["id"] in EXAMPLES for t in ALL))
BOX = "import cadquery as cq\nresult = cq.Workplane('XY').box(10, 10, 10)\nshow_object(result)"
REPO = Path(__file__).resolve().parents[2]
ENDLESS = ("hang", "sleep")
"""The hostile scripts that only a limit ends: each waits out `cad_build.LIMITS` (15 s of
CPU, 40 s of wall time) wherever it is built."""
SHORT = Limits(wall_s=6.0, cpu_s=3.0, memory_bytes=LIMITS.memory_bytes)
"""The limits an ENDLESS build gets in these tests: the same kill (RLIMIT_CPU, the PID
namespace's SIGKILL at the wall limit) at a fifth of the size, so a hang costs 3 s, not 15,
and a sleep 6 s, not 40. `test_the_build_limits_are_the_documented_ones` pins the real ones."""


@pytest.fixture(scope="module")
def env() -> Iterator[CadPart]:
    environment = CadPart()
    yield environment
    environment.close()


@pytest.fixture
def endless_builds_stop_sooner(monkeypatch: pytest.MonkeyPatch) -> list[Limits]:
    """Builds of the ENDLESS scripts run under SHORT; every other run (the box that shows
    the server survived, the fakes, the huge parts that may build) keeps the real limits.
    The list records each shortened run, so a test can show the patch took effect."""
    execute = cad_build._execute
    endless = {HOSTILE_SCRIPTS[name].encode() for name in ENDLESS}
    shortened: list[Limits] = []

    def run(program: Program) -> SandboxResult:
        if program.files.get("main.py") in endless:
            program = dataclasses.replace(program, limits=SHORT)
            shortened.append(program.limits)
        return execute(program)

    monkeypatch.setattr(cad_build, "_execute", run)
    return shortened


HUGE = ("huge_spline", "huge_tessellation")
"""The hostile scripts that may build (a part too heavy to judge): answered, the final
`cad_code` run of one waits out its inspection limit (30 s of wall time)."""


@pytest.fixture
def huge_answers_judged_sooner(monkeypatch: pytest.MonkeyPatch) -> list[Limits]:
    """The final `cad_code` run of a HUGE script gets SHORT's CPU and wall limits (the same
    kill, so the same verdict: a limit hit scores 0); every other answer keeps the
    verifier's own. The list records each shortened run, as above."""
    run_cad = cad_verifier.run_cad
    huge = {HOSTILE_SCRIPTS[name].strip() for name in HUGE}
    shortened: list[Limits] = []

    def run(script: str, **kwargs: Any) -> Any:
        if script.strip() in huge:
            kwargs["limits"] = kwargs["limits"].replace(wall_s=SHORT.wall_s, cpu_s=SHORT.cpu_s)
            shortened.append(kwargs["limits"])
        return run_cad(script, **kwargs)

    monkeypatch.setattr(cad_verifier, "run_cad", run)
    return shortened


def _play(env: CadPart, task: dict[str, Any], actions: Any) -> tuple[float, str | None]:
    """Final reward and how the episode ended."""
    state, _ = env.reset(task)
    for action in actions:
        transition = env.step(state, action)
        state = transition.state
        if transition.done:
            break
    else:
        transition = env.truncate(state, "policy_stopped")
    reward = transition.reward
    return (0.0 if reward is None else float(reward.value)), transition.state.end


def _answer(script: str, before: str = "", after: str = "") -> str:
    return f"{before}```python\n{script.strip()}\n```{after}"


def test_at_least_twelve_tasks_with_features() -> None:
    assert len(ALL) >= 12 and len({t["id"] for t in ALL}) == len(ALL)
    words = " ".join(t["prompt"] for t in ALL)
    for feature in ("hole", "slot", "fillet", "boss"):
        assert feature in words
    assert all("show_object" not in t["prompt"] for t in ALL)  # no script in a prompt


@pytest.mark.slow
def test_the_expert_earns_full_reward_on_every_task(env: CadPart) -> None:
    assert len(TASKS) == PLAYED > 0
    for task in TASKS:
        assert _play(env, task, expert_actions(task)) == (1.0, "answered"), task["id"]


@pytest.mark.slow
def test_the_lazy_policy_earns_clearly_less(env: CadPart) -> None:
    rewards = [_play(env, t, (build_call(BOX), _answer(BOX)))[0] for t in TASKS]
    assert sum(rewards) / len(rewards) <= 0.1


RIGHT_IN_OTHER_FORMS = {
    "gen-filleted-block": (  # build123d
        "from build123d import *\nwith BuildPart() as p:\n    with Locations((0, 0, 10)):\n"
        "        Box(60, 40, 20)\n    fillet(p.edges().filter_by(Axis.Z), radius=8)\n"
        "show_object(p.part)"
    ),
    "gen-plate-slot": (
        "import cadquery as cq\nplate = cq.Workplane('XY').box(70, 40, 8).translate((0, 0, 4))\n"
        "slot = cq.Workplane('XY').slot2D(36, 10).extrude(8)\n"
        "show_object(plate.cut(slot))"
    ),
    "gen-boss-block": (
        "import cadquery as cq\nbase = cq.Workplane('XY').rect(50, 50).extrude(10)\n"
        "boss = cq.Workplane('XY').workplane(offset=10).circle(10).extrude(15)\n"
        "result = base.union(boss)"
    ),
    "gen-plate-holes-4x1": (
        "import cadquery as cq\nresult = (cq.Workplane('XY').rect(120, 30).extrude(5)\n"
        "    .faces('>Z').workplane().pushPoints([(-36, 0), (-12, 0), (12, 0), (36, 0)])\n"
        "    .hole(6))\nshow_object(result)"
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("task_id", sorted(RIGHT_IN_OTHER_FORMS))
def test_right_parts_written_otherwise_earn_full_reward(env: CadPart, task_id: str) -> None:
    task = next(t for t in ALL if t["id"] == task_id)
    script = RIGHT_IN_OTHER_FORMS[task_id]
    answer = _answer(script, "Here is the part:\n", "\nIt matches the spec.")
    assert _play(env, task, (build_call(script), answer)) == (1.0, "answered")


SCORED = ("bbox_only_box", "hollowed_shell", "surface_skin_only", "read_or_poison_reference")
CLASSES = sorted({e.name for e in exploits(TASKS[:1], facts=False)})


@pytest.mark.slow
@pytest.mark.parametrize("name", CLASSES)
def test_every_exploit_class_earns_nothing_on_every_task(
    env: CadPart,
    name: str,
    endless_builds_stop_sooner: list[Limits],
    huge_answers_judged_sooner: list[Limits],
) -> None:
    # Only copy_measured_facts uses the built references' facts: the other classes skip
    # those builds (a build per task, each time), which would change none of their actions.
    played = [e for e in exploits(TASKS, facts=name == "copy_measured_facts") if e.name == name]
    assert len(played) == len(TASKS) == PLAYED > 0
    huge = {_answer(HOSTILE_SCRIPTS[n]) for n in HUGE}
    judged_huge = 0  # HUGE answers that built, so were judged by the final cad_code run
    for exploit in played:
        reward, end = _play(env, dict(exploit.task), exploit.actions)
        judged_huge += end == "answered" and bool(huge & set(exploit.actions))
        assert reward <= exploit.limit, (exploit.task["id"], reward)
        if name in SCORED:  # the fake was built and judged, not merely refused
            assert end == "answered", (exploit.task["id"], end)
    endless = {build_call(HOSTILE_SCRIPTS[n]) for n in ENDLESS}
    hanging = sum(any(a in endless for a in e.actions) for e in played)
    assert len(endless_builds_stop_sooner) == hanging  # each ENDLESS build ran under SHORT
    assert len(huge_answers_judged_sooner) == judged_huge  # each such run under SHORT
    assert hanging or name != "hang_or_crash_the_server"


def test_the_reference_is_neither_readable_nor_writable_from_the_jail() -> None:
    task = next(t for t in ALL if t["id"] == "gen-plate-slot")
    paths = reference_files(reference_script(task))
    before = {p: hashlib.sha256(Path(p).read_bytes()).hexdigest() for p in paths.values()}
    observed = build_part(peek_script(task))
    assert "size=(10.000, 10.000, 10.000)" in observed, observed  # only its own box
    after = {p: hashlib.sha256(Path(p).read_bytes()).hexdigest() for p in paths.values()}
    assert before == after
    assert oct(Path(paths["brep"]).parent.stat().st_mode & 0o777) == "0o700"


def test_a_build_error_shows_only_the_scripts_own_traceback() -> None:
    script = (
        "import cadquery as cq\n\nbox = cq.Workplane().box(1, 1, 1)\n"
        "result = box.edges().fillet(5)\n"
    )
    observed = build_part(script)
    assert observed.startswith("build failed:")
    assert "main.py, line 4" in observed and "fillet(5)" in observed
    assert "cadquery" not in observed.replace("import cadquery", "")  # no library frames
    assert "site-packages" not in observed and "line 83" not in observed
    assert "NameError: name 'nope' is not defined" in build_part("nope\n")
    assert build_part("def f(:\n").startswith("build failed:")


def test_own_traceback_drops_harness_and_library_frames() -> None:
    stderr = (
        "Traceback (most recent call last):\n"
        '  File "main.py", line 83, in build\n'
        '  File "main.py", line 2, in <module>\n'
        "    result = f()\n"
        '  File "/x/site-packages/cadquery/cq.py", line 9, in f\n'
        "    secret_library_line()\n"
        "    ^^^^^\n"
        "ValueError: bad\n"
    )
    assert own_traceback(stderr) == "  main.py, line 2\n    result = f()\nValueError: bad"


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(HOSTILE_SCRIPTS))
def test_a_hostile_script_is_an_observation_and_the_server_survives(
    name: str, endless_builds_stop_sooner: list[Limits]
) -> None:
    observed = build_part(HOSTILE_SCRIPTS[name])
    # a huge part may build within its limits (then it is just a wrong part); the others
    # must be stopped, and the observation must say so
    expected = ("built:", "build failed") if name.startswith("huge") else ("build failed",)
    assert observed.startswith(expected), observed
    if name in ENDLESS:  # stopped by a limit (SHORT), and the observation names it
        assert endless_builds_stop_sooner == [SHORT], endless_builds_stop_sooner
        assert "ran past its" in observed and "limit" in observed, observed
    assert build_part(BOX).startswith("built:")  # the next build still works


def test_builds_per_turn_are_capped_and_malformed_calls_are_observations(
    env: CadPart,
) -> None:
    state, _ = env.reset(TASKS[0])
    action = "".join(build_call(BOX.replace("10, 10, 10", f"{n + 1}, 10, 10")) for n in range(4))
    transition = env.step(state, action)
    lines = [ln for ln in transition.observation.splitlines() if ln.startswith(("built", "error"))]
    assert sum(ln.startswith("built:") for ln in lines) == MAX_BUILDS_PER_TURN
    assert sum("builds run per turn" in ln for ln in lines) == 4 - MAX_BUILDS_PER_TURN
    assert not transition.done
    transition = env.step(transition.state, '<tool_call>{"name": "build"</tool_call>')
    assert "error" in (transition.observation or "")
    bad_args = '<tool_call>{"name": "build", "arguments": {"script": 5}}</tool_call>'
    transition = env.step(transition.state, bad_args)
    assert (transition.observation or "").startswith("error"), transition.observation


def test_an_unbuilt_answer_is_refused_and_the_episode_goes_on(env: CadPart) -> None:
    task = TASKS[0]
    state, _ = env.reset(task)
    transition = env.step(state, _answer(reference_script(task)))
    assert not transition.done and "never built" in transition.observation
    transition = env.step(transition.state, "the part is done")
    assert not transition.done and "fenced block" in transition.observation


def test_the_dump_scores_back_to_the_environments_reward(env: CadPart) -> None:
    task = next(t for t in ALL if t["id"] == "gen-filleted-block")
    state, _ = env.reset(task)
    for action in expert_actions(task):
        transition = env.step(state, action)
        state = transition.state
    assert transition.done and transition.reward is not None
    with Scorer(spec_document(env.final_reward), backend="inline") as scorer:
        again = scorer.score([env.sample(state)])[0]
    assert again.value == transition.reward.value == 1.0
    assert pickle.loads(pickle.dumps(env)).name == "cad_part"


def test_a_sandbox_that_cannot_run_ends_the_episode_not_feeds_it(
    env: CadPart, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rewardsmith.environments import cad_build

    state, _ = env.reset(TASKS[0])
    monkeypatch.setattr(cad_build, "cad_python", lambda: None)
    with pytest.raises(CadUnavailable):
        env.step(state, build_call(BOX))


def test_audit_env_and_env_spec(tmp_path: Path, endless_builds_stop_sooner: list[Limits]) -> None:
    from typer.testing import CliRunner

    from rewardsmith.cli.main import app

    runner = CliRunner()
    audited = runner.invoke(app, ["audit", "--env", "cad_part", "--limit", "1"])
    assert audited.exit_code == 0, audited.output
    assert "bbox_only_box" in audited.output and "flood_builds" in audited.output
    assert endless_builds_stop_sooner  # the first task's hang_or_crash script sleeps
    spec = tmp_path / "spec.yaml"
    printed = runner.invoke(app, ["env", "spec", "cad_part", "-o", str(spec)])
    assert printed.exit_code == 0, printed.output
    assert "cad_code" in spec.read_text()


def test_the_build_limits_are_the_documented_ones() -> None:
    """The ENDLESS builds above run under SHORT; every real build gets these, as the docs
    say (and the red team below reads the CPU limit)."""
    assert (LIMITS.cpu_s, LIMITS.wall_s) == (15.0, 40.0)
    assert SHORT.cpu_s < LIMITS.cpu_s and SHORT.wall_s < LIMITS.wall_s
    page = (REPO / "docs" / "environments.md").read_text(encoding="utf-8")
    assert "a build may use 15 s of CPU, 40 s of wall time" in page


@pytest.mark.slow
def test_the_final_reward_never_trusts_the_build_tools_facts(env: CadPart) -> None:
    """Red team: a script that sees which run it is in (here by its CPU limit: the build
    tool's is 15 s) shows the right part to `build` and a cube to the final `cad_code`
    run; the facts it was shown were right, the reward is what the final run made."""
    task = next(t for t in ALL if t["id"] == "gen-plate-slot")
    right = reference_script(task).replace("show_object(result)", "")
    divergent = (
        f"{right}\nimport resource\n"
        "if resource.getrlimit(resource.RLIMIT_CPU)[0] != 15:\n"
        "    result = cq.Workplane('XY').box(10, 10, 10)\n"
        "show_object(result)\n"
    )
    assert build_part(divergent) == build_part(reference_script(task))
    assert _play(env, task, (build_call(divergent), _answer(divergent))) == (0.0, "answered")
