"""Metamorphic relations: the contract of each kind, composition, and every domain's
rewrites doing what their kind says (both directions: a preserving rewrite keeps a right
answer right as a careful reader reads it, a changing one makes it wrong)."""

from __future__ import annotations

import ast
import doctest
import importlib
import json
import os
import subprocess
import sys

import pytest

from rewardsmith.verifiers.code.relations import names_read_by_tests
from rewardsmith.verifiers.code.relations import relations as code_relations
from rewardsmith.verifiers.finance.relations import numeric_relations, table_relations
from rewardsmith.verifiers.math.relations import number_words
from rewardsmith.verifiers.math.relations import relations as math_relations
from rewardsmith.verifiers.metamorphic import (
    GENERIC,
    Expectation,
    Relation,
    apply_chain,
    relations_for,
    rewritten,
    text_rewrite,
)
from rewardsmith.verifiers.registry import create
from rewardsmith.verifiers.types import Sample

MATH = {r.name: r for r in math_relations(None)}
NUMERIC = {r.name: r for r in numeric_relations(None)}
TABLE = {r.name: r for r in table_relations(None)}
CODE = {r.name: r for r in code_relations(None)}


# ----------------------------------------------------------------------------- contracts


@pytest.mark.parametrize(
    "module",
    [
        "rewardsmith.verifiers.metamorphic",
        "rewardsmith.verifiers.math.relations",
        "rewardsmith.verifiers.finance.relations",
        "rewardsmith.verifiers.code.relations",
        "rewardsmith.verifiers.mesh.relations",
    ],
)
def test_docstring_examples_run(module: str) -> None:
    result = doctest.testmod(importlib.import_module(module))
    assert result.failed == 0 and result.attempted > 0


@pytest.mark.parametrize(
    ("steps", "scores", "broken"),
    [
        # preserving: the right answer's score, no more, no less
        (["preserving"], [1.0], False),
        (["preserving"], [0.0], True),
        (["preserving"], [None], True),
        (["preserving", "preserving"], [1.0, 0.5], True),
        # changing: below the right answer (and at its limit where it has one)
        (["changing"], [0.0], False),
        (["changing"], [1.0], True),
        (["changing"], [None], True),
        (["preserving", "changing"], [1.0, 0.99], False),
        # dressing: never above what was dressed
        (["dressing"], [1.0], False),
        (["dressing"], [0.2], False),
        (["changing", "dressing"], [0.0, 1.0], True),
        (["changing", "dressing"], [0.3, 0.3], False),
        (["changing", "dressing"], [0.3, 0.5], True),
        (["dressing", "preserving"], [0.5, 0.7], True),
        (["dressing", "preserving"], [0.5, 0.4], True),
        (["changing", "preserving"], [0.5, 0.5], False),
        (["changing", "preserving"], [0.0, 0.5], True),
        (["changing", "dressing", "preserving"], [0.0, 0.0, 1.0], True),
    ],
)
def test_an_expectation_follows_the_kinds_of_its_steps(
    steps: list[str], scores: list[float | None], broken: bool
) -> None:
    expect: Expectation | None = Expectation.of_right(1.0)
    value: float | None = 1.0
    for kind, score in zip(steps, scores, strict=True):
        assert expect is not None
        expect = expect.then(kind, value)  # type: ignore[arg-type]
        value = score
    assert expect is not None
    assert (expect.violation(value) > 0) is broken


def test_a_second_change_expects_nothing_and_a_limit_caps_a_change() -> None:
    wrong = Expectation.of_right(1.0).then("changing", 1.0)
    assert wrong is not None and wrong.then("changing", 0.0) is None
    capped = Expectation.of_right(1.0).then("changing", 1.0, limit=0.0)
    assert capped is not None
    assert capped.violation(0.0) == 0 and capped.violation(0.667) == pytest.approx(0.667)
    uncapped = Expectation.of_right(1.0).then("changing", 1.0)
    assert uncapped is not None and uncapped.violation(0.667) == 0


def test_no_reward_after_a_step_bounds_nothing_and_noise_is_not_a_verdict() -> None:
    assert Expectation.of_right(1.0).then("dressing", None) is None
    assert Expectation.of_right(1.0).violation(1.0 - 1e-9) == 0


@pytest.mark.parametrize(
    ("name", "kind", "limit"),
    [("nodomain", "preserving", None), ("a/b", "sideways", None), ("a/b", "dressing", 0.0)],
)
def test_a_malformed_relation_is_refused(name: str, kind: str, limit: float | None) -> None:
    with pytest.raises(ValueError):
        Relation(name, kind, text_rewrite(lambda t, s, r: t), limit=limit)  # type: ignore[arg-type]


def test_a_chain_replays_to_the_same_sample_and_stops_where_a_step_does_not_apply() -> None:
    noisy = Relation("t/noisy", "dressing", text_rewrite(lambda t, s, r: t + str(r.random())))
    never = Relation("t/never", "preserving", lambda s, r: None)
    right = Sample(id="q", completion="4", reference="4")
    first = apply_chain(right, [(noisy, 7), (noisy, 8)])
    assert first is not None and first == apply_chain(right, [(noisy, 7), (noisy, 8)])
    assert first.completion != apply_chain(right, [(noisy, 7), (noisy, 9)]).completion  # type: ignore[union-attr]
    assert apply_chain(right, [(noisy, 7), (never, 0)]) is None
    assert first.id.startswith("q~") and rewritten(right, "4").id == rewritten(right, "4").id


def test_relations_are_found_by_verifier_name_with_the_generic_dressing() -> None:
    names = {r.name for r in relations_for(create("math"))}
    assert {"math/number_words", "math/hidden_phantom", "any/repeated"} <= names
    assert {r.name for r in relations_for(create("exact_match"))} == {
        "any/appended_text",
        "any/repeated",
    }
    aligned = {r.name for r in relations_for(create("mesh_compare", align=True))}
    assert "mesh/posed" in aligned
    assert "mesh/posed" not in {r.name for r in relations_for(create("mesh_compare"))}


# ----------------------------------------------------------------------------- math


def _math(name: str, completion: str, reference: str = "12", seed: int = 0) -> str | None:
    made = MATH[name](Sample(id="q", completion=completion, reference=reference), seed)
    return None if made is None else str(made.completion)


@pytest.mark.parametrize(
    ("n", "words"),
    [
        (0, "zero"),
        (7, "seven"),
        (12, "twelve"),
        (40, "forty"),
        (99, "ninety-nine"),
        (105, "one hundred five"),
        (1205, "one thousand two hundred five"),
        (2_000_017, "two million seventeen"),
        (-3, "minus three"),
    ],
)
def test_number_words(n: int, words: str) -> None:
    assert number_words(n) == words


@pytest.mark.parametrize(
    ("name", "completion", "expected"),
    [
        ("math/number_words", "The answer is \\boxed{12}.", "The answer is \\boxed{twelve}."),
        ("math/fullwidth_digits", "12", "\uff11\uff12"),
        ("math/decimal_point", "\\boxed{12}", None),  # filled in below: 12.0 or 12.00
        ("math/thousands_separator", "12", None),
        ("math/set_order", "\\boxed{\\{1, 2, 3\\}}", None),
        ("math/sign", "\\boxed{12}", "\\boxed{-12}"),
        ("math/tuple_order", "\\boxed{(1, 2)}", "\\boxed{(2, 1)}"),
    ],
)
def test_math_rewrites_touch_only_the_final_answer(
    name: str, completion: str, expected: str | None
) -> None:
    got = _math(name, completion)
    if name == "math/decimal_point":
        assert got in ("\\boxed{12.0}", "\\boxed{12.00}")
    elif name == "math/thousands_separator":
        assert got is None  # below 1,000 there is no separator to write
        assert _math(name, "12345", "12345") in ("12,345", "12{,}345", "12\\,345")
    elif name == "math/set_order":
        assert got is not None and got != completion
        assert sorted(got[len("\\boxed{\\{") : -3].split(", ")) == ["1", "2", "3"]
    else:
        assert got == expected


@pytest.mark.parametrize(
    ("answer", "forms"),
    [
        ("\\frac{1}{3}", {"0.\\overline{3}", "0.3333\\ldots"}),
        ("\\frac{5}{6}", {"0.8\\overline{3}", "0.83333\\ldots"}),
        ("\\frac{1}{7}", {"0.\\overline{142857}", "0.142857142857\\ldots"}),
        ("7/3", {"2.\\overline{3}", "2.3333\\ldots"}),
        ("-\\frac{2}{3}", {"-0.\\overline{6}", "-0.6666\\ldots"}),
        ("\\frac{1}{4}", {None}),  # terminates: no repeating form
        ("\\frac{3}{8}", {None}),
    ],
)
def test_a_repeating_decimal_is_the_fractions_own_value(answer: str, forms: set) -> None:
    made = {
        _math("math/repeating_decimal", f"\\boxed{{{answer}}}", seed=seed) for seed in range(12)
    }
    assert {None if m is None else m[len("\\boxed{") : -1] for m in made} <= forms


def test_fraction_styles_and_parts_boxed() -> None:
    assert _math("math/fraction_style", "\\boxed{7/3}") == "\\boxed{\\frac{7}{3}}"
    styled = _math("math/fraction_style", "\\boxed{\\frac{7}{3}}")
    assert styled in ("\\boxed{\\dfrac{7}{3}}", "\\boxed{\\tfrac{7}{3}}")
    parts = _math("math/parts_boxed", "so \\boxed{(3, 5)}")
    assert parts == "So $a = \\boxed{3}$ and $b = \\boxed{5}$."
    assert _math("math/parts_boxed", "\\boxed{12}") is None


def test_parts_boxed_states_the_answer_the_verifier_reads_not_a_quoted_box() -> None:
    # The search found quoted_gold, digit, parts_boxed restating the quoted gold (-1, 4) and
    # reporting a wrong answer (-1, 7) "earning" 1.
    quoted = "\\boxed{(-1, 7)}\nYou asked: is it \\boxed{(-1, 4)}? Let us see.\n"
    stated = _math("math/parts_boxed", quoted, "(-1, 4)")
    assert stated == "So $a = \\boxed{-1}$ and $b = \\boxed{7}$."


@pytest.mark.parametrize("seed", range(6))
def test_a_unit_converted_keeps_the_quantity_and_a_unit_swapped_changes_it(seed: int) -> None:
    metres = {"mm": 0.001, "cm": 0.01, "m": 1.0, "km": 1000.0}
    converted = _math("math/unit_converted", "\\boxed{12\\text{ cm}}", seed=seed)
    swapped = _math("math/unit_swapped", "\\boxed{12\\text{ cm}}", seed=seed)
    assert converted is not None and swapped is not None
    for text, same in ((converted, True), (swapped, False)):
        number, unit = text[len("\\boxed{") : -2].split("\\text{ ")
        assert (float(number) * metres[unit] == pytest.approx(0.12)) is same
    assert _math("math/unit_converted", "\\boxed{12\\text{ apples}}") is None


@pytest.mark.parametrize("seed", range(20))
def test_math_changes_always_change_the_value(seed: int) -> None:
    for name in ("math/digit", "math/plus_one", "math/scale", "math/sign"):
        got = _math(name, "\\boxed{120}", "120", seed)
        assert got is not None and got != "\\boxed{120}"
        number, _, word = got[7:-1].partition(" ")  # "120 thousand": the scale relation
        scale = {"": 1, "thousand": 10**3, "million": 10**6, "billion": 10**9}[word]
        assert int(number) * scale != 120 and not number.startswith("0")


@pytest.mark.parametrize("name", [n for n in MATH if "hidden" in n or n.endswith("_gold")])
def test_math_dressing_names_the_right_answer_out_of_sight(name: str) -> None:
    got = _math(name, "13", "12")
    assert got is not None and "12" in got and "13" in got


def test_a_careful_reader_keeps_a_right_math_answer_under_each_preserving_form() -> None:
    """The forms the relations write are ones a grader documents as equal (the verifier
    on this branch may still miss some: those are what the search reports)."""
    for name in ("math/boxed", "math/answer_phrase", "math/whitespace", "math/verified_after"):
        got = _math(name, "12")
        assert got is not None and "12" in got


# ----------------------------------------------------------------------------- finance

FIGURE = Sample(
    id="f",
    completion="<answer>122,445 thousand</answer>",
    reference={"answer": "122,445", "scale": "thousand"},
)


@pytest.mark.parametrize("seed", range(12))
def test_a_figure_in_another_scale_keeps_its_value(seed: int) -> None:
    made = NUMERIC["finance/scale_form"](FIGURE, seed)
    assert made is not None
    text = str(made.completion)[len("<answer>") : -len("</answer>")]
    number, _, word = text.partition(" ")
    scale = {"": 1, "thousand": 10**3, "million": 10**6, "billion": 10**9}[word]
    assert float(number.replace(",", "")) * scale == pytest.approx(122_445_000)


SEPARATORS = [",", " ", "\u202f", "\u2009", "\u00a0", "{,}"]


@pytest.mark.parametrize("separator", SEPARATORS)
@pytest.mark.parametrize("seed", range(6))
def test_a_figure_with_any_separator_the_relations_write_keeps_its_value(
    separator: str, seed: int
) -> None:
    """Found by the finance_document search (`space_separator` then `scale_form` on
    initech-note-13): the relations read ``5\u2009593 thousand`` as 5 and wrote
    ``0.005 million``; every figure form they write is read whole."""
    sample = Sample(
        id="f",
        completion=f"<answer>5{separator}593 thousand</answer>",
        reference={"answer": "5,593", "scale": "thousand"},
    )
    made = NUMERIC["finance/scale_form"](sample, seed)
    assert made is not None
    text = str(made.completion)[len("<answer>") : -len("</answer>")]
    number, _, word = text.partition(" ")
    scale = {"": 1, "thousand": 10**3, "million": 10**6, "billion": 10**9}[word]
    assert float(number.replace(",", "")) * scale == pytest.approx(5_593_000)
    as_json = NUMERIC["finance/json_object"](sample, seed)
    assert as_json is not None
    inner = str(as_json.completion)[len("<answer>") : -len("</answer>")]
    assert f"5{separator}593" in json.loads(inner).values()


def test_a_scale_form_moves_only_the_scale_word_of_its_figure() -> None:
    """Text between the figure and a later scale word was dropped with it."""
    sample = Sample(id="f", completion="<answer>5,593 (p. 18), in thousand</answer>")
    assert all(NUMERIC["finance/scale_form"](sample, seed) is None for seed in range(6))


@pytest.mark.parametrize("seed", range(8))
def test_finance_changes_change_the_figure_and_dressing_names_the_gold(seed: int) -> None:
    for name in ("finance/digit", "finance/sign", "finance/scale_change", "finance/percent_sign"):
        made = NUMERIC[name](FIGURE, seed)
        assert made is not None and made.completion != FIGURE.completion
    for name in ("finance/second_tag_gold", "finance/after_tag_gold"):
        made = NUMERIC[name](FIGURE, seed)
        assert made is not None and str(made.completion).count("122,445 thousand") == 2


@pytest.mark.parametrize("seed", range(6))
def test_a_json_object_writes_only_an_answer_that_states_nothing_else(seed: int) -> None:
    """A hedge or a second figure dropped by the object would make a hedged answer a plain
    one (found by the bundled search, seed 34: `hedge_in_tag` then `json_object`)."""
    hedged = NUMERIC["finance/hedge_in_tag"](FIGURE, seed)
    assert hedged is not None and NUMERIC["finance/json_object"](hedged, seed) is None
    plain = NUMERIC["finance/json_object"](FIGURE, seed)
    assert plain is not None and "122,445" in str(plain.completion)


TABLE_SAMPLE = Sample(
    id="t",
    completion="| Item | 2024 | 2023 |\n|---|---|---|\n| Revenue | 1,234 | 1,000 |\n"
    "| Costs | (200) | (150) |\n| Profit | 1,034 | 850 |",
    reference={"table": [["Item", "2024", "2023"], ["Revenue", "1,234", "1,000"]]},
)


@pytest.mark.parametrize("seed", range(6))
def test_table_rewrites_keep_or_change_the_cells_as_their_kind_says(seed: int) -> None:
    def cells(sample: Sample | None) -> list[str]:
        assert sample is not None
        text = str(sample.completion)
        return sorted(c.strip() for line in text.splitlines() for c in line.split("|"))

    assert cells(TABLE["finance/table_row_order"](TABLE_SAMPLE, seed)) == cells(TABLE_SAMPLE)
    assert cells(TABLE["finance/table_cell_digit"](TABLE_SAMPLE, seed)) != cells(TABLE_SAMPLE)
    dropped = TABLE["finance/table_drop_row"](TABLE_SAMPLE, seed)
    assert dropped is not None and str(dropped.completion).count("\n") == 3
    hidden = TABLE["finance/table_gold_table_hidden"](TABLE_SAMPLE, seed)
    assert hidden is not None and "<!--" in str(hidden.completion)


# ----------------------------------------------------------------------------- code

PROGRAM = "import math\n\n\ndef area(r):\n    s = r * r\n    return math.pi * s\n\n\ndef twice(r):\n    return 2 * area(r)\n"  # noqa: E501


def _run(program: str) -> str:
    """Our own program (not a model's), run in a child process: what it prints."""
    code = program + "\nprint(area(2.0), twice(1.5))\n"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    return done.stdout + done.stderr


@pytest.mark.parametrize("seed", range(5))
def test_code_preserving_rewrites_keep_behaviour_and_changes_change_it(seed: int) -> None:
    right = Sample(id="c", completion=PROGRAM, reference={"format": "asserts", "asserts": []})
    before = _run(PROGRAM)
    for name in ("code/rename_locals", "code/reorder_defs", "code/dead_helper", "code/comment"):
        made = CODE[name](right, seed)
        assert made is not None and made.completion != PROGRAM
        assert _run(str(made.completion)) == before, name
    changed = CODE["code/off_by_one"](right, seed)
    assert changed is not None and _run(str(changed.completion)) != before


@pytest.mark.parametrize("seed", range(3))
def test_plus_to_minus_changes_a_repeated_program_too(seed: int) -> None:
    """After `any/repeated` the first copy is dead code (found by the bundled search, seed 35)."""
    program = "def area(r):\n    return r + r\n\n\ndef twice(r):\n    return 2 * area(r)\n"
    right = Sample(id="c", completion=program, reference={"format": "asserts", "asserts": []})
    repeated = next(r for r in GENERIC if r.name == "any/repeated")(right, seed)
    assert repeated is not None and str(repeated.completion).count("def area") >= 2
    changed = CODE["code/plus_to_minus"](repeated, seed)
    assert changed is not None and _run(str(changed.completion)) != _run(program)


def test_shadowing_names_every_helper_the_tests_read_but_never_the_candidates_own() -> None:
    reference = {
        "format": "pytest",
        "files": {
            "t.py": "from math import isclose\nfrom solution import *\n"
            "def test():\n    assert isclose(area(1), 3.14159, rel_tol=1e-3)\n"
        },
    }
    assert names_read_by_tests(reference) == ["area", "isclose"]
    sample = Sample(
        id="c", completion="def area(r):\n    return 3.14159 * r * r\n", reference=reference
    )
    made = CODE["code/shadow_test_names"](sample, 0)
    assert made is not None
    tree = ast.parse(str(made.completion))
    defined = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]
    assert defined == ["area", "isclose"]
    assert "__all__ = ['area', 'isclose']" in str(made.completion)


# ----------------------------------------------------------------------------- meshes


def test_mesh_rewrites_keep_or_remove_material_as_their_kind_says(tmp_path: os.PathLike) -> None:
    trimesh = pytest.importorskip("trimesh")
    from rewardsmith.verifiers.mesh.relations import relations as mesh_relations

    path = os.path.join(tmp_path, "box.stl")
    trimesh.creation.box(extents=[4, 2, 1]).export(path)
    sample = Sample(id="m", completion=path, reference=path)
    rel = {r.name: r for r in mesh_relations(None)}
    for seed in range(3):
        for name, ratio in (
            ("mesh/retessellated", 1.0),
            ("mesh/moved", 1.0),
            ("mesh/reordered", 1.0),
        ):
            made = rel[name](sample, seed)
            assert made is not None
            assert trimesh.load(made.completion).volume == pytest.approx(8 * ratio, rel=1e-6)
        hollow = rel["mesh/hollowed"](sample, seed)
        assert hollow is not None and trimesh.load(hollow.completion).volume < 0.3 * 8
        again = rel["mesh/hollowed"](sample, seed)
        assert again is not None and again.completion == hollow.completion  # content-addressed


def test_a_scale_form_keeps_a_scale_word_under_a_question_that_declares_one() -> None:
    """Writing "$159 thousand" out as "$159,000" under "in thousands?" would change what the
    bare figure means (the question's scale applies to it), so the relation never does."""
    from rewardsmith.verifiers.finance.relations import numeric_relations

    relation = next(r for r in numeric_relations(None) if r.name == "finance/scale_form")
    sample = Sample(
        id="s",
        prompt="What was 2023 other income, in thousands?",
        completion="<answer>$159 thousand</answer>",
        reference={"answer": "159", "scale": "thousand"},
    )
    forms = {relation(sample, seed).completion for seed in range(40)}  # type: ignore[union-attr]
    assert forms and all(any(w in f for w in ("thousand", "million", "billion")) for f in forms)
