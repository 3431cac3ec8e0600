"""One builder: every door builds the same grader from the same words, and a mistake gives
the same message on every door."""

from __future__ import annotations

import dataclasses
import inspect
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from rewardsmith.graders import Grader, Scorer, SpecError, build, load_spec
from rewardsmith.graders.schedule import LinearSchedule
from rewardsmith.graders.spec import BLOCKS, build_spec
from rewardsmith.verifiers.types import Sample

EQUIVALENT = [
    (["exact_match"], {"exact_match": {}}),
    (["exact_match", "format:required_tags=answer"],
     {"exact_match": None, "format": {"required_tags": ["answer"]}}),
    (["format:{required_tags: [think, answer]}"],
     {"format": {"required_tags": ["think", "answer"]}}),
    (["math:tasks=[math]"], {"math": {"tasks": ["math"]}}),
]  # fmt: skip


@pytest.mark.parametrize(("names", "mapping"), EQUIVALENT)
def test_names_and_a_mapping_build_equal_graders(names: list[str], mapping: dict) -> None:
    assert build(names) == build(mapping)


def test_names_mean_an_equal_weight_mean_everywhere() -> None:
    sample = Sample(id="1", completion="<answer>5</answer>", reference="<answer>4</answer>")
    with Scorer(["exact_match", "format:required_tags=answer"], backend="inline") as scorer:
        assert scorer.score([sample])[0].value == 0.5
    weighted = build({"exact_match": {"weight": 3}, "format": {"required_tags": ["answer"]}})
    with Scorer(weighted, backend="inline") as scorer:
        assert scorer.score([sample])[0].value == 0.25  # (3 * 0 + 1 * 1) / 4


MISTAKES = [
    ("exact_mach", "unknown verifier 'exact_mach'. Did you mean 'exact_match'"),
    ("format:required_tag=answer", "Did you mean 'required_tags'"),
    ("format:json_tag=answer", "json_schema"),
    ("math:tasks=math", "tasks is a list of task names"),
]


@pytest.mark.parametrize(("argument", "message"), MISTAKES)
def test_a_mistake_reads_the_same_on_every_door(argument: str, message: str) -> None:
    name, _, setting = argument.partition(":")
    settings = yaml.safe_load("{" + setting.replace("=", ": ") + "}") if setting else {}
    spec = {"grader": {"weighted": {"components": {name: {"verify": name, **settings}}}}}
    errors = []
    for reward in ([argument], {name: settings}, spec):
        with pytest.raises(SpecError) as caught:
            build(reward)
        errors.append(caught.value.message)
    assert all(message in e for e in errors), errors
    assert len(set(errors)) == 1, errors  # the same words; only the place differs


def test_cli_and_trainer_give_the_same_message(tmp_path: Path) -> None:
    from rewardsmith.trainer.rewards import build_reward_source

    with pytest.raises(SpecError) as trainer:
        build_reward_source({"format": {"required_tag": "answer"}}, None, "inline")
    cli = subprocess.run(
        [sys.executable, "-m", "rewardsmith.cli.main", "score", "datasets/samples/demo.jsonl",
         "-v", "format:required_tag=answer", "-o", str(tmp_path / "o.jsonl")],
        capture_output=True, text=True, timeout=120, env={"COLUMNS": "300", "PATH": ""},
    )  # fmt: skip
    assert cli.returncode == 2
    assert trainer.value.message.split(".")[0] in " ".join(cli.stderr.split())


def test_a_grader_passes_through_and_nonsense_is_refused() -> None:
    grader = build(["exact_match"])
    assert build(grader) is grader
    with pytest.raises(SpecError, match="cannot build a reward from int"):
        build(3)


# --------------------------------------------------------------------------- declared once


def _non_default(field: dataclasses.Field, hint: str) -> object:
    """A YAML value for a field other than its default, that the block accepts."""
    special = {
        "on": "fmt",
        "unit": "words",
        "scale": "mean",
        "by": "meta.group",
        "potential": "phi",
        "correct": [0.9, 0.4],
        "wrong": [-0.9, -0.4],
        "max_length": 50,
        "buffer": 10,
        "free": 3,
        "limit": 90,
        "low": -2.0,
        "high": 2.0,
        "window": 7,
        "steps": 9,
        "gamma": 0.5,
        "name": "disagreement",  # the evidence block: a named evidence value
    }
    if field.name in special:
        return special[field.name]
    if "bool" in hint:
        return not field.default
    if "int" in hint:
        return 3
    return 0.25


@pytest.mark.parametrize("kind", sorted(BLOCKS))
def test_every_field_of_every_block_can_be_set_from_yaml(kind: str) -> None:
    cls = BLOCKS[kind]
    fields = [f for f in dataclasses.fields(cls) if f.init]
    hints = {f.name: str(f.type) for f in fields}
    args = {f.name: _non_default(f, hints[f.name]) for f in fields}
    fmt = {"verify": "format", "key": "fmt", "required_tags": ["a"]}
    if getattr(cls, "source", False):  # a block that makes a value (evidence) goes first
        spec = {"grader": {"min": {"fmt": fmt, "x": {kind: args}}}}
        block = build_spec(spec).root.children()[1]
    else:
        spec = {"grader": {"chain": [{"weighted": {"components": {"fmt": fmt}}}, {kind: args}]}}
        block = build_spec(spec).root.blocks[1]
    for name, value in args.items():
        got = getattr(block, name)
        got = got.key if hasattr(got, "key") else got
        assert got == (tuple(value) if isinstance(value, list) else value), name


@pytest.mark.parametrize("kind", sorted(BLOCKS))
def test_each_python_factory_takes_exactly_its_blocks_fields(kind: str) -> None:
    import rewardsmith.graders as graders

    cls = BLOCKS[kind]
    factory = getattr(graders, kind)
    params = inspect.signature(factory).parameters
    fields = {f.name: f.default for f in dataclasses.fields(cls) if f.init}
    assert list(params) == list(fields), kind
    for name, param in params.items():
        if fields[name] is not dataclasses.MISSING:
            assert param.default == fields[name], (kind, name)


def test_a_linear_schedule_takes_every_field_from_yaml() -> None:
    linear = "{linear: {start: 1, end: 0, steps: 9, begin: 4}}"
    spec = f"grader:\n  chain:\n    - exact_match\n    - scale: {{factor: {linear}}}\n"
    assert load_spec(spec).root.blocks[1].factor == LinearSchedule(1.0, 0.0, 9, 4)


def test_top_level_settings_reach_the_grader() -> None:
    grader = build({"grader": "exact_match", "on_infra_failure": "fallback", "fallback": -1,
                    "default_task": "math"})  # fmt: skip
    assert isinstance(grader, Grader)
    assert (grader.on_infra_failure, grader.fallback, grader.default_task) == (
        "fallback",
        -1.0,
        "math",
    )
