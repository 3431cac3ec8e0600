"""The episode relations of each bundled environment (`environments.episode_relations`).

Every environment gets the generic ones: the answer with a trailing newline (preserving);
confident prose after it, the answer repeated, every tool call dropped (dressing); split
across two turns where an answer ends the episode (dressing). Per environment:

- ``retry_arithmetic``: `math`'s changing and dressing relations on the answer (its
  preserving forms are not allowed forms here: the format check asks for bare digits);
  a wrong try before the right answer (dressing: the retry must not pay).
- ``math_tool``: every `math` relation on the answer; a read-only `python` call first,
  a turn's calls reordered or split (preserving); a flood of calls, the tool's output
  pasted after the answer (dressing).
- ``code_repair``: every `code_tests` relation on the program; a wrong program, or the
  given broken one, tried first (dressing).
- ``finance_document``: every `numeric_answer` relation on the answer (those that add the
  right figure only where the answer has an ``<answer>`` tag); the claim citing another
  page (changing); read-only `page_text`/`search`/`calc` calls first (preserving); a
  flood, a tool's output pasted after or as the answer (dressing).
- ``cad_part``: another fence, a cube built first (preserving); a dimension scaled or a
  feature (hole, cut, fillet) removed, built and answered (changing); a flood of builds,
  a wrong part built first (dressing).
- ``blender_scene``: an inspection or preview first, a turn's scripts reordered or split
  (preserving); a dimension scaled, a light's energy changed, the lighting script dropped,
  a material layer the dump does not read, colours washed out by a strong world, an
  emission or a greyscale look (changing); a flood of calls, an object added
  then removed (dressing: shaping must not pay for the round trip).

Changing relations apply to expert episodes only (`episode_relations.right_only`);
rewrites that drop or replace part of the answer, to unchanged expert episodes only
(`episode_relations.intact_only`).
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Mapping
from typing import Any

from rewardsmith.environments.episode_relations import (
    ActionsChange,
    actions_of,
    answer_index,
    answer_rewrite,
    episode_rewrite,
    failed_try_first,
    generic_relations,
    intact_only,
    lifted,
    map_tool_calls,
    right_only,
    tool_relations,
    write_then_undo,
)
from rewardsmith.environments.tools import parse_tool_calls
from rewardsmith.verifiers.metamorphic import Relation
from rewardsmith.verifiers.types import Sample

__all__ = ["relations_for_environment"]


def _call(name: str, **arguments: Any) -> str:
    return f"<tool_call>{json.dumps({'name': name, 'arguments': arguments})}</tool_call>"


def _on(env: Any, name: str, kind: Any, change: ActionsChange, description: str) -> Relation:
    """A relation of ``env``'s episodes by a change of their actions."""
    rewrite = episode_rewrite(change, env.limits.max_turns)
    return Relation(f"{env.name}/{name}", kind, rewrite, description)


def _changing(relations: list[Relation]) -> list[Relation]:
    return [r for r in relations if r.kind == "changing"]


Answered = Callable[[str, Mapping[str, Any]], bool]
"""Whether an answer text states an answer that text pasted after it cannot replace."""


def _has_digit(answer: str, task: Mapping[str, Any]) -> bool:
    return re.search(r"\d", answer) is not None


def tool_output(env: Any, replace: bool, answered: Answered = _has_digit) -> Relation:
    """Dressing: what the last tool call before the answer returned (the tool run again
    here: for tools whose result depends on the call alone), pasted after the answer or,
    with ``replace``, as the answer (for intact right answers only: where the tool
    printed the right answer, as `python` may, pasting it is no exploit).

    Pasted after the answer only where ``answered`` says the answer states one that a
    later value cannot replace (by default: it has a digit). After an answer with no value
    in it ("\\b", half of one), or one the reader drops or reads off the end, the pasted
    value is the answer the text gives: no dressing of what was there."""

    def on_actions(
        actions: list[str], task: Mapping[str, Any], rng: random.Random
    ) -> list[str] | None:
        index = answer_index(actions)
        calls = [c for a in actions[: index or 0] for c in parse_tool_calls(a, env.tools)]
        calls = [c for c in calls if not c.error]
        if index is None or not calls:
            return None
        if not replace and not answered(actions[index], task):
            return None
        call = calls[-1]
        tool = next(t for t in env.tools if t.name == call.name)
        output = str(tool.function(**call.arguments))
        actions[index] = output if replace else f"{actions[index]}\n\n{output}"
        return actions

    name = "copy_tool_output" if replace else "tool_output_appended"
    rewrite = episode_rewrite(on_actions, env.limits.max_turns)
    relation = Relation(f"{env.name}/{name}", "dressing", rewrite, "a tool's output pasted")
    return intact_only(relation) if replace else relation


# ----------------------------------------------------------------------------- per environment


def _arithmetic(env: Any) -> list[Relation]:
    from rewardsmith.verifiers.math.relations import relations as math_relations

    turns = env.limits.max_turns
    math = [lifted(env.name, r, False) for r in math_relations(None) if r.kind != "preserving"]
    return [*math, failed_try_first(env.name, turns, False, _changing(math))]


_MARKED = frozenset({"boxed", "restated", "final_statement", "answer_phrase", "retracted"})
"""`math`'s readings of a marked answer (a box, "the answer is", a correction "On second
thought, it is 31."): after one, another value is a hedge (`verifiers.math.extract`,
rules 1 and 2). The others read a value off the text's end (its last line, a concluding
sentence), where a new last line is the new answer."""


def _marked_math_answer(answer: str, task: Mapping[str, Any]) -> bool:
    """Whether `math` reads a marked answer in ``answer``, with no problem. Not after a
    disowned or framed one (``\\boxed{30} Scratch that.``: the text gives no answer, and
    a value after the disowning corrects it) nor a value read off the text's end (``73x +
    30`` on a last line: a new last line answers instead): there the pasted value is the
    model's answer, as any value it writes is (found by the math_tool search, budget 200,
    seed 0: four chains ending in `tool_output_appended` paid 1.0). A GSM8K line (``####
    73x + 30``) is marked, as "Answer:" is."""
    from rewardsmith.verifiers.math.reading import read_answer

    read = read_answer(answer, str(task.get("reference", "")))
    return read.answer is not None and read.problem is None and read.method in _MARKED


def _math_tool(env: Any) -> list[Relation]:
    from rewardsmith.verifiers.math.relations import relations as math_relations

    def look(task: Mapping[str, Any], rng: random.Random) -> list[str]:
        return [_call("python", code=rng.choice(("print(2 + 2)", "import math\nprint(math.pi)")))]

    math = [lifted(env.name, r, True, keep_limit=True) for r in math_relations(None)]
    pasted = tool_output(env, False, _marked_math_answer)
    return [*math, *tool_relations(env.name, env.limits.max_turns, look), pasted]


def _code_repair(env: Any) -> list[Relation]:
    from rewardsmith.verifiers.code.relations import relations as code_relations

    def given_first(actions: list[str], task: Mapping[str, Any], rng: random.Random) -> list[str]:
        return [str(task["broken"]), *actions]

    code = [lifted(env.name, r, False) for r in code_relations(None)]
    return [
        *code,
        failed_try_first(env.name, env.limits.max_turns, False, _changing(code)),
        _on(env, "given_program_first", "dressing", given_first, "the broken program, then"),
    ]


_PAGE = re.compile(r"\(p\. (\d+)\)")


def _other_page(answer: str, task: Mapping[str, Any], rng: random.Random) -> str | None:
    """The claim's page citation moved to a page that does not print its figure (a
    report may print a figure twice: the highlights page and the statement)."""
    from rewardsmith.environments.finance_document import search

    pages = _PAGE.findall(answer)
    figure = _FIGURE.search(answer.split("<answer>", 1)[0])
    doc = str((task.get("solution") or {}).get("doc") or (task.get("reference") or {}).get("pdf"))
    if not pages or figure is None:
        return None
    printed = {int(n) for n in _HIT.findall(search(doc, figure.group(0)))}
    others = [n for n in range(1, 32) if n not in printed and n != int(pages[0])]
    return answer.replace(f"(p. {pages[0]})", f"(p. {rng.choice(others)})", 1)


_FIGURE = re.compile(r"\d{1,3}(?:,\d{3})+|\d{4,}")
_HIT = re.compile(r"^p\. (\d+):", re.M)


_GOLD = {
    "finance/second_tag_gold",
    "finance/after_tag_gold",
    "finance/hedge_in_tag",
    "finance/hedge_in_free_text",
}
"""`numeric_answer`'s dressings that add the right figure: a dressing of an answer, not of a
text with none (a pasted page, half an answer), where adding the figure is answering."""


_INVENTED = {"finance/other_period_beside"}
"""`numeric_answer`'s preserving forms that state a made-up figure beside the answer (the
gold with a digit changed, as another year's amount): the answer's figure is kept, but
where `grounding` gates the reward, the made-up figure is a claim the report does not
print, and refusing it is right. Not lifted here (found once the lifted relations saw the
task's question: "2024: 117,999 (2023: 197,999 thousand)." on northwind-revenue earned 0)."""


def _tagged_only(relation: Relation) -> Relation:
    """``relation`` where the final answer holds an ``<answer>`` tag."""

    def rewrite(sample: Sample, rng: random.Random) -> Sample | None:
        actions = actions_of(sample)
        index = answer_index(actions)
        tagged = index is not None and "<answer>" in actions[index]
        return relation.rewrite(sample, rng) if tagged else None

    return Relation(relation.name, relation.kind, rewrite, relation.description, relation.limit)


def _finance(env: Any) -> list[Relation]:
    from rewardsmith.verifiers.finance.relations import numeric_relations

    def look(task: Mapping[str, Any], rng: random.Random) -> list[str]:
        doc = rng.choice(list(task.get("docs") or ["northwind"]))
        return [
            rng.choice(
                (
                    _call("page_text", doc=doc, page=rng.randrange(1, 32)),
                    _call("search", doc=doc, words=rng.choice(("revenue", "total assets"))),
                    _call("calc", expression=f"{rng.randrange(1, 999)} * 3"),
                )
            )
        ]

    turns = env.limits.max_turns
    numeric = [
        _tagged_only(lifted(env.name, r, True, keep_limit=True)) if r.name in _GOLD else
        lifted(env.name, r, True, keep_limit=True)
        for r in numeric_relations(None)
        if r.name not in _INVENTED
    ]  # fmt: skip
    wrong_page = Relation(
        f"{env.name}/claim_cites_another_page",
        "changing",
        answer_rewrite(_other_page, True, turns),
        "the claim cites a page it is not on",
        limit=0.0,
    )
    return [
        *numeric,
        wrong_page,
        *tool_relations(env.name, turns, look),
        tool_output(env, False),
        tool_output(env, True),
    ]


# ----------------------------------------------------------------------------- cad_part


def _script_change(change: Callable[[str, random.Random], str | None]) -> ActionsChange:
    """The answered script changed by ``change``, in the answer and in every build of it
    (so the changed script is built, then answered: a wrong part, not a refused answer)."""
    from rewardsmith.environments.cad_part import script_of

    def on_actions(
        actions: list[str], task: Mapping[str, Any], rng: random.Random
    ) -> list[str] | None:
        index = answer_index(actions)
        script = None if index is None else script_of(actions[index])
        new = None if script is None else change(script, rng)
        if index is None or script is None or new is None or new == script:
            return None

        def swap(call: dict[str, Any]) -> dict[str, Any]:
            args = call.get("arguments") or {}
            if call.get("name") == "build" and str(args.get("script", "")).strip() == script:
                return {**call, "arguments": {**args, "script": new}}
            return call

        out = [map_tool_calls(a, swap) or a for a in actions]
        out[index] = actions[index].replace(script, new)
        return out

    return on_actions


_FIRST_SIZE = re.compile(r"(\b(?:box|circle|rect)\(\s*|^\w+\s*=\s*)(\d+(?:\.\d+)?)", re.M)
_FEATURE = re.compile(r"\.(?:hole|cutThruAll|fillet|cboreHole)\([^()]*\)")
_CUBE = (
    "import cadquery as cq\nresult = cq.Workplane('XY').box({side}, {side}, {side})\n"
    "show_object(result)"
)


def _dimension(script: str, rng: random.Random) -> str | None:
    match = _FIRST_SIZE.search(script)
    if match is None or float(match.group(2)) == 0:
        return None
    scaled = f"{float(match.group(2)) * rng.choice((1.25, 1.5, 0.6)):g}"
    return script[: match.start(2)] + scaled + script[match.end(2) :]


def _feature_removed(script: str, rng: random.Random) -> str | None:
    found = list(_FEATURE.finditer(script))
    if not found:
        return None
    match = rng.choice(found)
    return script[: match.start()] + script[match.end() :]


def _fence(answer: str, task: Mapping[str, Any], rng: random.Random) -> str | None:
    if "```python\n" not in answer:
        return None
    return answer.replace("```python\n", rng.choice(("```py\n", "```\n")), 1)


def _cad(env: Any) -> list[Relation]:
    from rewardsmith.environments.cad_part import build_call

    turns = env.limits.max_turns

    def look(task: Mapping[str, Any], rng: random.Random) -> list[str]:
        return [build_call(_CUBE.format(side=rng.choice((5, 10, 20))))]

    changes = [
        _on(env, "dimension_scaled", "changing", _script_change(_dimension), "a size x0.6-1.5"),
        _on(env, "feature_removed", "changing", _script_change(_feature_removed), "a hole gone"),
    ]
    fence = Relation(f"{env.name}/other_fence", "preserving", answer_rewrite(_fence, True, turns))
    return [
        *changes,
        fence,
        *tool_relations(env.name, turns, look),
        failed_try_first(env.name, turns, True, changes),
    ]


# ----------------------------------------------------------------------------- blender_scene


def _on_scripts(change: Callable[[str, random.Random], str | None]) -> ActionsChange:
    """The first ``run_bpy`` script ``change`` applies to, changed (dropped where it gives
    the empty text; a turn left with nothing is no rewrite)."""

    def on_actions(
        actions: list[str], task: Mapping[str, Any], rng: random.Random
    ) -> list[str] | None:
        for index, action in enumerate(actions):
            edited = map_tool_calls(action, lambda call: _edit_code(call, change, rng))
            if edited is not None:
                return [*actions[:index], edited, *actions[index + 1 :]] if edited else None
        return None

    return on_actions


def _edit_code(
    call: dict[str, Any], change: Callable[[str, random.Random], str | None], rng: random.Random
) -> dict[str, Any] | None:
    args = call.get("arguments") or {}
    new = None if call.get("name") != "run_bpy" else change(str(args.get("code", "")), rng)
    if new is None:
        return call
    return {**call, "arguments": {**args, "code": new}} if new else None


_SIZE = re.compile(r"\b(scale=\(|radius=|size=)(\d+(?:\.\d+)?)")
_ENERGY = re.compile(r"(\.energy = )(\d+(?:\.\d+)?)")
_EXTRA = (
    "import bpy\nbpy.ops.mesh.primitive_cube_add(size=1, location=(9, 9, 9))\n"
    "bpy.context.active_object.name = 'Extra'\n"
)
_UNDO = "import bpy\nbpy.data.objects.remove(bpy.data.objects['Extra'])\n"


def _scaled(
    pattern: re.Pattern[str], factors: tuple[float, ...]
) -> Callable[[str, random.Random], str | None]:
    def change(code: str, rng: random.Random) -> str | None:
        match = pattern.search(code)
        if match is None:
            return None
        value = f"{float(match.group(2)) * rng.choice(factors):g}"
        return code[: match.start(2)] + value + code[match.end(2) :]

    return change


def _lights_dropped(code: str, rng: random.Random) -> str | None:
    return "" if "bpy.data.lights.new" in code else None


def _unread_layer(code: str, rng: random.Random) -> str | None:
    """The script that makes the materials, then a layer the scene dump does not read (a
    green sheen, transmission, a displacement: `exploits_render.UNREAD`) on all of them."""
    from rewardsmith.verifiers.blender.exploits_render import PRINCIPLED_HEAD, UNREAD

    if "bpy.data.materials.new" not in code:
        return None
    return code + "\n" + PRINCIPLED_HEAD + rng.choice(sorted(UNREAD.values()))


def _washed_out(code: str, rng: random.Random) -> str | None:
    """The script that makes the materials, then what washes their colours out under the
    blown-out ceiling (a white world at 5, a green one at 3, a white emission of 1 on every
    material, the greyscale look: `exploits_render.WASHED_OUT_*`)."""
    from rewardsmith.verifiers.blender.exploits_render import (
        PRINCIPLED_HEAD,
        WASHED_OUT_MATERIAL,
        WASHED_OUT_WORLD,
    )

    if "bpy.data.materials.new" not in code:
        return None
    return (
        code
        + "\n"
        + PRINCIPLED_HEAD
        + rng.choice(sorted([*WASHED_OUT_WORLD.values(), *WASHED_OUT_MATERIAL.values()]))
    )


def _appended(table: str) -> Callable[[str, random.Random], str | None]:
    """The script that makes the materials, then one entry of `exploits_render`'s `table`
    (``COLOUR_SHIFTED``: a view that shows the asked colours in others, exposure +3 in
    the view, the film or the output's override; ``UNASKED_LIGHT``: light no spec states,
    a 3000 W flood, a glowing plane the camera does not see)."""

    def change(code: str, rng: random.Random) -> str | None:
        from rewardsmith.verifiers.blender import exploits_render

        if "bpy.data.materials.new" not in code:
            return None
        entries = sorted(getattr(exploits_render, table).values())
        return code + "\nimport bpy\n" + rng.choice(entries)

    return change


def _second_layer(code: str, rng: random.Random) -> str | None:
    """The script that makes the camera, then the scene rendered through a second view
    layer with the first disabled (`exploits_render.SECOND_LAYER`): the same picture."""
    from rewardsmith.verifiers.blender.exploits_render import SECOND_LAYER

    if "scene.camera" not in code:
        return None
    return code + "\n" + SECOND_LAYER


def _blender(env: Any) -> list[Relation]:
    turns = env.limits.max_turns

    def look(task: Mapping[str, Any], rng: random.Random) -> list[str]:
        return [rng.choice((_call("inspect_scene"), _call("render_preview", size=32)))]

    def round_trip(task: Mapping[str, Any], rng: random.Random) -> list[str]:
        return [_call("run_bpy", code=_EXTRA), _call("run_bpy", code=_UNDO)]

    size, energy = _scaled(_SIZE, (1.5, 0.5)), _scaled(_ENERGY, (4.0, 0.1))
    return [
        _on(env, "dimension_scaled", "changing", _on_scripts(size), "the first size x1.5, x0.5"),
        _on(env, "light_energy", "changing", _on_scripts(energy), "a light's energy x4, x0.1"),
        _on(env, "lights_dropped", "changing", _on_scripts(_lights_dropped), "no lighting"),
        _on(env, "unread_layer", "changing", _on_scripts(_unread_layer), "a sheen, displacement"),
        _on(env, "washed_out", "changing", _on_scripts(_washed_out), "a bright world, a glow"),
        _on(
            env,
            "colour_shifted",
            "changing",
            _on_scripts(_appended("COLOUR_SHIFTED")),
            "exposure +3 (view, film, output)",
        ),
        _on(
            env,
            "second_layer",
            "preserving",
            _on_scripts(_second_layer),
            "a second view layer renders",
        ),
        _on(
            env,
            "unasked_light",
            "changing",
            _on_scripts(_appended("UNASKED_LIGHT")),
            "a flood light, a glowing plane",
        ),
        *tool_relations(env.name, turns, look),
        write_then_undo(env.name, turns, round_trip),
    ]


_RETRIES = {"retry_arithmetic", "code_repair"}
"""Environments where every answer is a new try (until one is right): no answer ends the
episode early, so an answer split in two is two answers."""

_BUNDLED: dict[str, Callable[[Any], list[Relation]]] = {
    "retry_arithmetic": _arithmetic,
    "math_tool": _math_tool,
    "code_repair": _code_repair,
    "finance_document": _finance,
    "cad_part": _cad,
    "blender_scene": _blender,
}


def relations_for_environment(env: Any) -> list[Relation]:
    """The relations of environment ``env``: its own (``env.relations()``, where it offers
    them) or the bundled set for its name, then the generic ones; changing relations are
    for expert episodes only. An environment where every answer is a new try (a wrong
    one does not end the episode) says so with a true ``retries`` attribute."""
    own = getattr(env, "relations", None)
    found = list(own()) if callable(own) else list(_BUNDLED.get(env.name, lambda e: [])(env))
    tools = bool(getattr(env, "tools", ()))
    retries = env.name in _RETRIES or bool(getattr(env, "retries", False))
    every = [*found, *generic_relations(env.name, env.limits.max_turns, tools, retries)]
    return [right_only(r) if r.kind == "changing" else r for r in every]
