"""Materials that render unlike the values the checks read (2026-12-05). The scene dump
reads a Principled BSDF's base colour, metallic, roughness, IOR, alpha, emission,
transmission, coat and subsurface weight; every other input (a sheen, a specular tint, a
thin film) and what feeds the output's displacement or volume is not read. A green sheen
turned the red team's red cube orange, and a displacement moved its faces out of the
picture, both at full reward. The truth render now renders the scene a second time with
every material as read (`_truth.as_read_renders`), and a material whose objects move
more than `AS_READ_MAX_SHIFT` between the two fails its checks; an unasked transmission
over 0.5 is see-through, as alpha under 0.5 is."""

from __future__ import annotations

import importlib.util

import pytest

from rewardsmith.verifiers.types import Status
from tests.verifiers.blender.test_redteam_lights_and_blur import _MATERIALS, judge

pytestmark = [
    pytest.mark.blender,
    pytest.mark.sandbox,
    pytest.mark.skipif(importlib.util.find_spec("bpy") is None, reason="bpy is not installed"),
]


def _inputs(**values: object) -> str:
    """Every material's Principled BSDF with the named inputs set (underscores: spaces)."""
    return _MATERIALS + "".join(
        f"    b.inputs[{name.replace('_', ' ')!r}].default_value = {value!r}\n"
        for name, value in values.items()
    )


def _displaced(height: float, method: str = "DISPLACEMENT") -> str:
    return (
        "for m in bpy.data.materials:\n    nt = m.node_tree\n"
        f"    m.displacement_method = {method!r}\n"
        "    d = nt.nodes.new('ShaderNodeDisplacement')\n"
        f"    d.inputs['Height'].default_value = {height}\n"
        "    d.inputs['Scale'].default_value = 5.0\n"
        "    nt.links.new(d.outputs[0], nt.nodes['Material Output'].inputs['Displacement'])\n"
    )


TRICKS = {  # (task, code after the right scene): the materials stage must fall
    "transmission_1": ("red_cube", _inputs(Transmission_Weight=1.0)),
    "transmission_0.8_dice": ("dice_row", _inputs(Transmission_Weight=0.8)),
    "sheen_green": ("red_cube", _inputs(Sheen_Weight=1.0, Sheen_Tint=(0, 1, 0, 1))),
    "sheen_blue_table": ("table", _inputs(Sheen_Weight=1.0, Sheen_Tint=(0, 0, 1, 1))),
    "displaced_away": ("red_cube", _displaced(5.0)),
    "displaced_away_tree": ("tree", _displaced(3.0)),
}
HONEST = {  # the same inputs set so that what renders barely moves
    "specular_tint_green": ("red_cube", _inputs(Specular_Tint=(0, 1, 0, 1))),
    "thin_film": ("red_cube", _inputs(Thin_Film_Thickness=600.0)),
    "subsurface": ("red_cube", _inputs(Subsurface_Weight=1.0)),
    "sheen_faint": ("dice_row", _inputs(Sheen_Weight=0.1)),
    "transmission_0.3": ("red_cube", _inputs(Transmission_Weight=0.3)),
    "bump_only": ("red_cube", _displaced(0.05, "BUMP")),
}


@pytest.mark.parametrize("name", sorted(TRICKS))
def test_a_material_rendering_unlike_its_values_loses_its_stage(name: str) -> None:
    task_id, code = TRICKS[name]
    verdict = judge(task_id, code)
    assert verdict.status is not Status.PASS, name
    assert verdict.evidence["stages"]["materials"] < 1.0, verdict.evidence["stages"]


@pytest.mark.parametrize("name", sorted(HONEST))
def test_a_material_using_the_same_inputs_lightly_passes(name: str) -> None:
    task_id, code = HONEST[name]
    verdict = judge(task_id, code)
    assert verdict.status is Status.PASS, verdict.feedback
