"""`rewardsmith audit --env NAME --search`: the metamorphic search over episodes finds a
planted hole (an environment whose reward a "note to the grader" lifts), shrinks it to the
one rewrite that shows it, replays its witness, stops in its episode budget, and finds
nothing on the bundled environments but the holes listed in `env_search_known_holes.json`
(each with what it is)."""

from __future__ import annotations

import json
import random
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import pytest
from typer.testing import CliRunner

from rewardsmith.cli.audit_env_search import (
    recheck_episode,
    replay_episode,
    run_env_search,
    starting_episodes,
)
from rewardsmith.cli.audit_search import SearchResult
from rewardsmith.cli.audit_search_io import load_witnesses, save_witnesses
from rewardsmith.cli.main import app
from rewardsmith.environments.arithmetic import RetryArithmetic
from rewardsmith.environments.bundled_relations import relations_for_environment
from rewardsmith.environments.episode_exploits import play
from rewardsmith.environments.episode_relations import actions_of, episode_sample, task_of
from rewardsmith.environments.episodes import make_environment
from rewardsmith.environments.policies import POLICIES, bundled_tasks
from rewardsmith.verifiers.cad.run import cad_python

KNOWN_HOLES = Path(__file__).parent / "env_search_known_holes.json"
CI = {"budget": 40, "seconds": 600.0, "seed": 0, "depth": 3}
"""The CI search: fixed seed, small budget (episodes played, the starting ones not
counted); the time limit is far above what it takes, so load never cuts it short."""

SUMS = bundled_tasks("retry_arithmetic")


class PaysForPraise(RetryArithmetic):
    """A planted hole: half the reward is a format check that looks for "full marks"; the
    honest variant's pays nobody (so every right and lazy episode earns what it did)."""

    name: ClassVar[str] = "pays_for_praise"
    retries: ClassVar[bool] = True

    def __init__(self, honest: bool = False) -> None:
        super().__init__()
        praise = {"weight": 0.5, "patterns": [r"(?!)" if honest else r"full marks"]}
        self.final_reward = {"math": {"weight": 0.5}, "format": praise}


def _search(env: Any, tasks: list[Mapping[str, Any]], **settings: Any) -> SearchResult:
    policies = POLICIES.get(env.name, POLICIES["retry_arithmetic"])
    return run_env_search(env, tasks, policies=policies, **{**CI, **settings})


# ----------------------------------------------------------------------------- the planted hole


def test_the_search_finds_a_reward_that_pays_for_a_note_to_the_grader() -> None:
    env = PaysForPraise()
    result = _search(env, SUMS[:8])
    assert not result.ok
    chains = {tuple(name for name, _ in w.chain) for w in result.witnesses}
    assert ("pays_for_praise/any/appended_text",) in chains, chains
    witness = next(w for w in result.witnesses if len(w.chain) == 1)
    assert "full marks" in witness.rewritten["completion"][-1]["action"]
    assert witness.score is not None and witness.score > witness.right
    assert witness.kind == "dressing" and witness.expected.startswith("must earn at most")


def test_a_witness_replays_to_its_episode_and_stops_breaking_once_fixed(tmp_path: Path) -> None:
    env = PaysForPraise()
    result = _search(env, SUMS[:8])
    path = save_witnesses(result.witnesses, tmp_path, "env-pays_for_praise")
    for witness in load_witnesses(path):
        made = replay_episode(witness, env)
        assert made is not None and made.model_dump(mode="json") == witness.rewritten
        assert recheck_episode(witness, env) > 0
        assert recheck_episode(witness, PaysForPraise(honest=True)) == 0.0


def test_the_same_seed_finds_the_same_witnesses_and_the_budget_counts_episodes() -> None:
    first, second = (_search(PaysForPraise(), SUMS[:6], budget=12) for _ in range(2))
    assert [w.chain for w in first.witnesses] == [w.chain for w in second.witnesses]
    starting = len(starting_episodes("retry_arithmetic", SUMS[:6]))
    # The budget bounds what is proposed; shrinking a violation found in the last batch
    # replays at most (depth - 1) ** 2 shorter chains on top.
    assert first.scored <= starting + 12 + (CI["depth"] - 1) ** 2


def test_an_honest_reward_breaks_nothing() -> None:
    result = _search(PaysForPraise(honest=True), SUMS[:8], budget=40)
    assert result.ok, [w.describe() for w in result.witnesses]


# ----------------------------------------------------------------------------- relations


def test_the_scripted_policies_earn_what_they_say() -> None:
    env = RetryArithmetic()
    for task in SUMS[:5]:
        assert play(env, task, POLICIES["retry_arithmetic"].expert(task) or []) == 1.0
        # Two formatted wrong answers: the final one's 0.2 (a retried try earns nothing yet).
        assert play(env, task, POLICIES["retry_arithmetic"].lazy(task) or []) == pytest.approx(0.2)


@pytest.mark.parametrize(
    "name", ["retry_arithmetic", "math_tool", "code_repair", "finance_document", "cad_part"]
)
def test_every_relation_makes_episodes_that_fit_the_turn_limit(name: str) -> None:
    """Rewrites draw only from their seed, replay the same way and never make an episode
    longer than the environment's turn limit (that would be a truncation, no verdict)."""
    env = make_environment(name)
    tasks = bundled_tasks(name, 3)
    relations = relations_for_environment(env)
    kinds = {r.kind for r in relations}
    assert kinds == {"preserving", "changing", "dressing"}, kinds
    applied = 0
    for episode in starting_episodes(name, tasks):
        for relation in relations:
            seed = random.Random(relation.name).randrange(1000)
            made = relation(episode, seed)
            if made is None:
                continue
            applied += 1
            assert made == relation(episode, seed)
            assert 0 < len(actions_of(made)) <= env.limits.max_turns
            assert task_of(made) == task_of(episode)
    assert applied >= len(relations) // 2


def test_changing_rewrites_leave_lazy_episodes_alone() -> None:
    env = RetryArithmetic()
    lazy = episode_sample(env.name, SUMS[3], ["4", "4"], "lazy")
    for relation in relations_for_environment(env):
        if relation.kind == "changing":
            assert relation(lazy, 0) is None, relation.name


def test_a_split_answer_is_no_dressing_where_every_turn_is_a_try() -> None:
    """ "-2" split is "-", then "2": a right second try, not a dressing of "-2"."""
    names = {r.name for r in relations_for_environment(RetryArithmetic())}
    assert "retry_arithmetic/answer_split_across_turns" not in names
    finance = make_environment("finance_document")
    assert "finance_document/answer_split_across_turns" in {
        r.name for r in relations_for_environment(finance)
    }


def test_a_split_answer_applies_to_expert_episodes_as_played_only() -> None:
    """Found by the finance_document search (seed 3): a hedge added to the answer, then
    the answer split where the cut drops the hedge, "lifted" the hedged answer to 1.0.
    Splitting follows no other rewrite: it cuts what that rewrite wrote."""
    finance = make_environment("finance_document")
    relations = {r.name: r for r in relations_for_environment(finance)}
    split = relations["finance_document/answer_split_across_turns"]
    hedge = relations["finance_document/finance/hedge_in_tag"]
    task = bundled_tasks("finance_document")[0]
    actions = POLICIES["finance_document"].expert(task) or []
    expert = episode_sample(finance.name, task, actions, "expert")
    assert split(expert, 0) is not None
    hedged = next(h for seed in range(20) if (h := hedge(expert, seed)) is not None)
    assert all(split(hedged, seed) is None for seed in range(20))


def test_a_spaced_figure_in_another_scale_keeps_the_finance_return() -> None:
    """Found by the finance_document search (`space_separator` then `scale_form` on
    initech-note-13, refused): ``5\u2009593 thousand`` was rewritten as ``0.005 million``
    (the relation read the figure's first group only), a wrong answer, not a form of the
    right one. Every task's expert keeps its 1.0 under the chain."""
    finance = make_environment("finance_document")
    relations = {r.name: r for r in relations_for_environment(finance)}
    spaced = relations["finance_document/finance/space_separator"]
    scaled = relations["finance_document/finance/scale_form"]
    try:
        for task in bundled_tasks("finance_document"):
            actions = POLICIES["finance_document"].expert(task) or []
            expert = episode_sample(finance.name, task, actions, "expert")
            for seed in range(4):
                made = spaced(expert, seed)
                made = None if made is None else scaled(made, seed)
                if made is not None:
                    assert play(finance, task, actions_of(made)) == 1.0, actions_of(made)[-1]
    finally:
        finance.close()


# ----------------------------------------------------------------------------- the CI search


def _known(name: str) -> list[dict[str, str]]:
    return [row for row in json.loads(KNOWN_HOLES.read_text())["holes"] if row["env"] == name]


def _only_known(name: str, result: SearchResult) -> None:
    found = {w.relation for w in result.witnesses}
    known = {row["relation"] for row in _known(name)}
    new = [w.describe() for w in result.witnesses if w.relation not in known]
    assert not new, f"{name}: violations not listed in {KNOWN_HOLES.name}:\n" + "\n".join(new)
    in_ci = {row["relation"] for row in _known(name) if row["found_with"] == "CI"}
    for gone in sorted(in_ci - found):
        warnings.warn(f"{name}: listed hole {gone} not found with the CI settings", stacklevel=1)


CHEAP = [
    pytest.param("retry_arithmetic", 30, id="retry_arithmetic"),
    pytest.param("finance_document", 22, id="finance_document"),
    pytest.param("math_tool", 12, marks=pytest.mark.sandbox, id="math_tool"),
    pytest.param("code_repair", 6, marks=pytest.mark.sandbox, id="code_repair"),
]


@pytest.mark.parametrize(("name", "tasks"), CHEAP)
def test_the_bundled_environments_break_no_relation_but_the_known_holes(
    name: str, tasks: int
) -> None:
    env = make_environment(name)
    try:
        result = run_env_search(env, bundled_tasks(name, tasks), **CI)
    finally:
        env.close()
    assert result.rows, result.skipped
    assert not [s for s in result.skipped if "expert earns" in s], result.skipped
    _only_known(name, result)


@pytest.mark.slow
@pytest.mark.sandbox
def test_cad_part_breaks_no_relation_in_a_small_search() -> None:
    if cad_python() is None:
        pytest.skip("the CAD venv is not installed")
    env = make_environment("cad_part")
    try:
        result = run_env_search(env, bundled_tasks("cad_part", 2), **{**CI, "budget": 12})
    finally:
        env.close()
    assert result.rows, result.skipped
    _only_known("cad_part", result)


@pytest.mark.slow
@pytest.mark.blender
@pytest.mark.sandbox
def test_blender_scene_breaks_no_relation_in_a_small_search() -> None:
    pytest.importorskip("bpy")
    env = make_environment("blender_scene")
    try:
        result = run_env_search(env, bundled_tasks("blender_scene", 2), **{**CI, "budget": 12})
    finally:
        env.close()
    assert result.rows, result.skipped
    _only_known("blender_scene", result)


def test_audit_env_search_on_the_command_line(tmp_path: Path) -> None:
    out = tmp_path / "search.json"
    args = ["audit", "--env", "finance_document", "--search", "--limit", "3", "--budget", "8"]
    run = CliRunner().invoke(app, [*args, "--json", str(out), "--save-witnesses", str(tmp_path)])
    assert run.exit_code == 0, run.output
    payload = json.loads(out.read_text())["finance_document"]
    assert payload["ok"] and payload["references"] == 6 and payload["relations"]
    assert (tmp_path / "env-finance_document.jsonl").exists()


@pytest.mark.blender
@pytest.mark.sandbox
def test_a_material_layer_the_dump_does_not_read_loses_the_blender_reward() -> None:
    """`blender_scene/unread_layer`: the expert's materials under a green sheen, with
    transmission, or displaced earned the expert's full return before the truth render
    compared each material with itself as read (`_truth.as_read_renders`)."""
    pytest.importorskip("bpy")
    env = make_environment("blender_scene")
    try:
        relation = {r.name: r for r in relations_for_environment(env)}["blender_scene/unread_layer"]
        task = bundled_tasks("blender_scene", 1)[0]
        actions = POLICIES["blender_scene"].expert(task) or []
        expert = play(env, task, actions)
        layered = [made for seed in range(3) if (made := relation(episode_sample(
            env.name, task, actions, "expert"), seed)) is not None]  # fmt: skip
        assert layered
        for made in layered:
            assert play(env, task, actions_of(made)) < expert
    finally:
        env.close()


@pytest.mark.blender
@pytest.mark.sandbox
def test_a_second_view_layer_keeps_the_blender_reward() -> None:
    """`blender_scene/second_layer`: the expert's scene rendered through a second view
    layer, the first disabled, earned 0.25 (the truth render's overrides went to the
    layer that does not render) until the inspection kept only the layer the picture
    shows (rtblend4)."""
    pytest.importorskip("bpy")
    env = make_environment("blender_scene")
    try:
        relation = {r.name: r for r in relations_for_environment(env)}["blender_scene/second_layer"]
        task = bundled_tasks("blender_scene", 1)[0]
        actions = POLICIES["blender_scene"].expert(task) or []
        made = relation(episode_sample(env.name, task, actions, "expert"), 0)
        assert made is not None
        assert play(env, task, actions_of(made)) == play(env, task, actions)
    finally:
        env.close()


@pytest.mark.blender
@pytest.mark.sandbox
@pytest.mark.parametrize("name", ["washed_out", "colour_shifted", "unasked_light"])
def test_colours_washed_out_lose_the_blender_reward(name: str) -> None:
    """`blender_scene/washed_out`: the expert's scene under a white world at strength 5 or
    a green one at 3, a white emission of 1, or the greyscale look earned the expert's full
    return under the blown-out ceiling before the truth render split the world's light from
    the lights' (`_truth.light_split`) and read the view's colour management.
    `blender_scene/colour_shifted` (exposure +3 in the view, the film or the output's
    override) and `blender_scene/unasked_light` (a 3000 W flood, an unseen glowing plane)
    earned it too before the truth render compared the colours with the default view's and
    split the light the spec's lights give from all the rest (rtblend4)."""
    pytest.importorskip("bpy")
    env = make_environment("blender_scene")
    try:
        relation = {r.name: r for r in relations_for_environment(env)}[f"blender_scene/{name}"]
        task = bundled_tasks("blender_scene", 1)[0]
        actions = POLICIES["blender_scene"].expert(task) or []
        expert = play(env, task, actions)
        washed = [made for seed in range(4) if (made := relation(episode_sample(
            env.name, task, actions, "expert"), seed)) is not None]  # fmt: skip
        assert washed
        for made in washed:
            assert play(env, task, actions_of(made)) < expert
    finally:
        env.close()
