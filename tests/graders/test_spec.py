"""YAML reward specs: equal to the Python API, and every mistake named with its line."""

from __future__ import annotations

import textwrap

import pytest
from grader_helpers import samples

from rewardsmith.graders import (
    Executor,
    Grader,
    SpecError,
    chain,
    clip,
    cosine_length,
    gate,
    group_normalize,
    length_penalty,
    linear_schedule,
    load_spec,
    maximum,
    minimum,
    overlong_penalty,
    penalize,
    piecewise_schedule,
    potential_shaping,
    product,
    repetition_penalty,
    running_normalize,
    scale,
    threshold,
    verify,
    weighted,
)

FMT = verify("format", key="fmt", required_tags=("think", "answer"))

EQUAL_CASES = [
    ("grader: exact_match", Grader("exact_match")),
    (
        """
        grader:
          weighted:
            components:
              correct: exact_match
              fmt: {verify: format, key: fmt, required_tags: [think, answer]}
            weights: {correct: 0.8, fmt: 0.2}
        """,
        Grader(
            weighted({"correct": "exact_match", "fmt": FMT}, weights={"correct": 0.8, "fmt": 0.2})
        ),
    ),
    (
        """
        grader:
          chain:
            - weighted:
                components:
                  correct: exact_match
                  fmt: {verify: format, required_tags: [think, answer]}
                weights: {fmt: {linear: {start: 0.5, end: 0.0, steps: 1000}}}
                renormalize: false
            - gate: {on: fmt, threshold: 0.5, otherwise: -1}
            - penalize: {on: fmt, amount: {piecewise: {0: 0.1, 100: 0.0}}}
            - length_penalty: {free: 100, limit: 400, coef: 0.2}
            - overlong_penalty: {max_length: 512, buffer: 128, unit: chars}
            - repetition_penalty: {ngram: 4, coef: 0.5}
            - potential_shaping: {gamma: 0.99}
            - threshold: {at: 0.5}
            - scale: {factor: 2}
            - clip: {low: -1, high: 1}
            - group_normalize: {scale: mean}
            - running_normalize: {window: 64}
        on_infra_failure: fallback
        fallback: 0.0
        """,
        Grader(
            chain(
                weighted(
                    {"correct": "exact_match", "fmt": FMT},
                    weights={"fmt": linear_schedule(0.5, 0.0, 1000)},
                    renormalize=False,
                ),
                gate("fmt", threshold=0.5, otherwise=-1),
                penalize("fmt", piecewise_schedule({0: 0.1, 100: 0.0})),
                length_penalty(100, 400, 0.2),
                overlong_penalty(512, 128, unit="chars"),
                repetition_penalty(4, 0.5),
                potential_shaping(0.99),
                threshold(0.5),
                scale(2),
                clip(-1, 1),
                group_normalize(scale="mean"),
                running_normalize(64),
            ),
            on_infra_failure="fallback",
            fallback=0.0,
        ),
    ),
    (
        """
        definitions:
          fmt: {verify: format, key: fmt, required_tags: [think, answer]}
        grader:
          chain:
            - min: {correct: exact_match, style: {use: fmt}}
            - cosine_length: {max_length: 1000, correct: [2, 1], wrong: [-2, -1]}
        """,
        Grader(
            chain(
                minimum({"correct": "exact_match", "style": FMT}),
                cosine_length(1000, correct=(2, 1), wrong=(-2, -1)),
            )
        ),
    ),
    (
        "grader: {max: {a: exact_match, b: {product: {c: exact_match}}}}",
        Grader(maximum({"a": "exact_match", "b": product({"c": "exact_match"})})),
    ),
    (  # a mixed-task grader: leaves routed by Sample.task (order of tasks does not matter)
        """
        grader:
          chain:
            - weighted:
                components:
                  math: {verify: math, tasks: [math, gsm8k], rel_tol: 0.01}
                  code: {verify: code_tests, key: tests, tasks: [code]}
                  match: exact_match
            - gate: {on: tests, threshold: 0.5}
        """,
        Grader(
            chain(
                weighted(
                    {
                        "math": verify("math", tasks=["gsm8k", "math"], rel_tol=0.01),
                        "code": verify("code_tests", key="tests", tasks=("code",)),
                        "match": "exact_match",
                    }
                ),
                gate("tests", threshold=0.5),
            )
        ),
    ),
]


@pytest.mark.parametrize(("text", "expected"), EQUAL_CASES)
def test_yaml_builds_the_same_grader_as_python(text, expected):
    assert load_spec(textwrap.dedent(text)) == expected


def test_yaml_and_python_graders_give_equal_rewards():
    text, python = EQUAL_CASES[2]
    yaml_grader = load_spec(textwrap.dedent(text))
    rows = samples(
        [
            {"completion": "<think>ok</think><answer>4</answer>"},
            {"completion": "<answer>4</answer>"},
            {"completion": "4 4 4 4 4 4 4 4"},
        ]
    )
    rows = [r.model_copy(update={"reference": "<think>ok</think><answer>4</answer>"}) for r in rows]
    with Executor("inline") as ex:
        a = yaml_grader.score(rows, ex, step=50)
        b = python.score(rows, ex, step=50)
    assert [r.value for r in a] == [r.value for r in b]


def test_load_spec_reads_a_file(tmp_path):
    path = tmp_path / "reward.yaml"
    path.write_text("grader: exact_match\n")
    assert load_spec(path) == load_spec(str(path)) == Grader("exact_match")


ERROR_CASES = [
    # (spec, line, words the message must contain)
    (
        "grader:\n  weigthed:\n    components: {a: exact_match}\n",
        2,
        ["unknown block 'weigthed'", "'weighted'"],
    ),
    (
        "grader:\n  weighted:\n    components: {a: exact_mach}\n",
        3,
        ["unknown verifier 'exact_mach'", "'exact_match'"],
    ),
    (
        "grader:\n  weighted:\n    components: {a: exact_match}\n    weigths: {a: 1}\n",
        4,
        ["unknown key 'weigths'", "'weights'"],
    ),
    (
        "grader:\n  chain:\n    - exact_match\n    - clip: {low: x, high: 1}\n",
        4,
        ["clip.low", "valid number"],
    ),
    (
        "grader:\n  weighted:\n    components:\n      a: {verify: format, required_tag: [x]}\n",
        4,
        ["required_tag", "accepts: required_tags"],
    ),
    (
        "definitions:\n  a: {chain: [{use: b}]}\n  b: {use: a}\ngrader: {use: a}\n",
        3,
        ["cycle", "a -> b -> a"],
    ),
    ("grader:\n  gate: {on: exact_match}\n", 2, ["changes a value but makes none"]),
    ("grader:\n  chain:\n    - exact_match\n    - exact_match\n", 4, ["only the first block"]),
    (
        "grader:\n  weighted:\n    components: {a: exact_match}\n    weights: {b: 1}\n",
        4,
        ["unknown component 'b'"],
    ),
    (
        "grader:\n  weighted:\n    components: {a: exact_match}\n    weights: {a: fast}\n",
        4,
        ["number or a schedule"],
    ),
    (
        "grader: exact_match\non_infra_failure: retry\n",
        2,
        ["on_infra_failure", "'drop' or 'fallback'"],
    ),
    ("grader: exact_match\nfallbak: 0\n", 2, ["unknown key 'fallbak'", "'fallback'"]),
    ("graders: exact_match\n", 1, ["missing required key 'grader'"]),
    ("grader: [exact_match\n", 2, ["not valid YAML"]),
    ("- just a list\n", 1, ["mapping with a 'grader' key"]),
    ("grader: {use: nope}\n", 1, ["no definition named 'nope'"]),
    (
        "grader:\n  chain:\n    - exact_match\n    - length_penalty: {free: 10, limit: 5}\n",
        4,
        ["free < limit"],
    ),
    ("grader: &x {chain: [*x]}\n", 1, ["refers to itself"]),
    ("grader: {weighted: {components: {}}}\n", 1, ["at least one component"]),
    (
        "grader:\n  weighted:\n    components:\n      m:\n        verify: math\n"
        "        tasks: math\n",
        6,
        ["components.m.tasks", "tasks is a list of task names, got 'math'", "[math, gsm8k]"],
    ),
    (
        "grader:\n  min:\n    m: {verify: math, tasks: {math: 1}}\n",
        3,
        ["min.m.tasks", "list of task names"],
    ),
    ("grader: {verify: math, tasks: []}\n", 1, ["grader.tasks", "never run"]),
    ("grader:\n  verify: math\n  tasks: [math, 3]\n", 3, ["non-empty name", "3"]),
    ("grader: {verify: math, taks: [math]}\n", 1, ["'taks'", "Did you mean 'tasks'?"]),
]


@pytest.mark.parametrize(("text", "line", "words"), ERROR_CASES)
def test_spec_errors_name_the_line_and_the_fix(text, line, words):
    with pytest.raises(SpecError) as info:
        load_spec(text)
    message = str(info.value)
    assert message.startswith(f"line {line}:"), message
    for word in words:
        assert word in message, message


def test_from_spec_takes_a_mapping_and_names_the_path():
    assert Grader.from_spec(
        {"grader": {"weighted": {"components": {"a": "exact_match"}}}}
    ) == Grader(weighted({"a": "exact_match"}))
    with pytest.raises(
        SpecError, match=r"^grader\.weighted\.components\.a\.verify: unknown verifier"
    ):
        Grader.from_spec({"grader": {"weighted": {"components": {"a": "nope"}}}})


def test_a_plugin_verifier_is_usable_by_name(tmp_path, monkeypatch):
    # A real installed distribution (a dist-info folder on sys.path) that registers a
    # verifier under the entry-point group, as `pip install` of a plugin would.
    dist = tmp_path / "rs_test_plugin-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: rs-test-plugin\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(
        "[rewardsmith.verifiers]\nplugin_meta = grader_testkit:MetaScore\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    grader = load_spec(
        "grader:\n  weighted:\n    components:\n      a: {verify: plugin_meta, field: a}\n"
    )
    with Executor("inline") as ex:
        assert [r.value for r in grader.score(samples([{"a": 0.25}]), ex)] == [0.25]


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("grader: " + "{min: {a: " * 200 + "exact_match" + "}}" * 200, "nest deeper than 64"),
        ("grader: " + "[" * 50_000 + "]" * 50_000, "too deeply"),
        ("grader: exact_match\n" + "#" * 1_000_001, "limit is"),
    ],
    ids=["deep blocks", "deep yaml", "huge"],
)
def test_hostile_specs_end_in_a_spec_error(text, words):
    with pytest.raises(SpecError, match=words):
        load_spec(text)
