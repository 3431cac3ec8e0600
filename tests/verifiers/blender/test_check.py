"""The trusted side: checking a scene dump against a spec (no Blender needed)."""

from __future__ import annotations

import math

import pytest
from pydantic import ValidationError

from rewardsmith.verifiers.blender.check import check_scene, stage_scores
from rewardsmith.verifiers.blender.scene import extract_script, staged_score
from rewardsmith.verifiers.blender.spec import SceneSpec


def dump(**changes: object) -> dict:
    """A scene dump like `_inside.dump_scene` writes, for the red box task."""
    scene = {
        "objects": [
            {
                "name": "Box",
                "type": "MESH",
                "location": [0, 0, 1],
                "dimensions": [3, 2, 1],
                "bbox_min": [-1.5, -1, 0.5],
                "bbox_max": [1.5, 1, 1.5],
                "modifiers": [{"name": "Bevel", "type": "BEVEL"}],
                "materials": ["Red"],
            },
        ],
        "materials": [
            {
                "name": "Red",
                "principled": {
                    "Base Color": {"value": [0.8, 0.05, 0.05, 1.0], "linked": False},
                    "Roughness": {"value": 0.4, "linked": False},
                },
            }
        ],
        "lights": [{"name": "Sun", "type": "SUN", "energy": 3.0, "color": [1, 1, 1]}],
        "camera": {
            "name": "Camera",
            "location": [6, -6, 4],
            "direction": [-6 / math.sqrt(81), 6 / math.sqrt(81), -3 / math.sqrt(81)],
            "lens": 50.0,
        },
        "render": {"engine": "CYCLES", "resolution_x": 320, "resolution_y": 240},
    }
    scene.update(changes)
    return scene


SPEC = SceneSpec.model_validate(
    {
        "objects": {
            "Box": {
                "type": "MESH",
                "dimensions": [3, 2, 1],
                "location": [0, 0, 1],
                "modifiers": ["BEVEL"],
                "materials": ["Red"],
            }
        },
        "materials": {"Red": {"inputs": {"Base Color": [0.8, 0.05, 0.05], "Roughness": 0.4}}},
        "lights": [{"type": "SUN", "energy": 3.0}],
        "camera": {"location": [6, -6, 4], "look_at": [0, 0, 1], "lens": 50},
        "render": {"engine": "CYCLES", "resolution_x": 320},
    }
)


def failed(scene: dict, spec: SceneSpec = SPEC) -> list[str]:
    return [c.what for c in check_scene(scene, spec) if not c.ok]


def test_matching_scene_passes_every_check() -> None:
    checks = check_scene(dump(), SPEC)
    assert checks and all(c.ok for c in checks)
    assert stage_scores(checks) == {
        "geometry": 1.0,
        "materials": 1.0,
        "lighting": 1.0,
        "render": 1.0,
    }


def box(**changes: object) -> list[dict]:
    return [{**dump()["objects"][0], **changes}]


# (what changed in the scene, the one check that must fail)
DEFECTS = [
    ({"objects": []}, "object 'Box'"),
    ({"objects": box(type="CURVE")}, "Box.type"),
    ({"objects": box(dimensions=[3, 2, 1.2])}, "Box.dimensions"),
    ({"objects": box(dimensions=[3, 2, float("nan")])}, "Box.dimensions"),
    ({"objects": box(location=[0, 0, 1.05])}, "Box.location"),
    ({"objects": box(modifiers=[])}, "Box.modifiers"),
    ({"objects": box(materials=[])}, "Box.materials"),
    ({"materials": []}, "material 'Red'"),
    ({"lights": []}, "light 0 {'type': 'SUN', 'energy': 3.0}"),
    (
        {"lights": [{"name": "Sun", "type": "SUN", "energy": 3.5, "color": [1, 1, 1]}]},
        "light 0 {'type': 'SUN', 'energy': 3.0}",
    ),
    (
        {"lights": [{"name": "L", "type": "POINT", "energy": 3.0, "color": [1, 1, 1]}]},
        "light 0 {'type': 'SUN', 'energy': 3.0}",
    ),
    ({"camera": None}, ("camera", "render settings")),  # no camera: nothing renders
    ({"render": {"engine": "BLENDER_EEVEE", "resolution_x": 320}}, "render.engine"),
]


@pytest.mark.parametrize(
    ("changes", "check"),
    DEFECTS,
    ids=[
        (d[1] if isinstance(d[1], str) else "+".join(d[1])) + str(i) for i, d in enumerate(DEFECTS)
    ],
)
def test_each_single_defect_fails_exactly_its_check(
    changes: dict, check: str | tuple[str, ...]
) -> None:
    assert failed(dump(**changes)) == ([check] if isinstance(check, str) else list(check))


def test_wrong_material_colour_fails_within_tolerance_only() -> None:
    def with_colour(rgb: list[float]) -> dict:
        red = dump()["materials"][0]
        inputs = {**red["principled"], "Base Color": {"value": [*rgb, 1.0], "linked": False}}
        return dump(materials=[{**red, "principled": inputs}])

    assert failed(with_colour([0.81, 0.06, 0.04])) == []  # within 0.02 a channel
    assert failed(with_colour([0.05, 0.8, 0.05])) == ["Red[Base Color]"]


def test_linked_input_is_not_a_value() -> None:
    red = dump()["materials"][0]
    inputs = {**red["principled"], "Roughness": {"value": 0.4, "linked": True}}
    checks = check_scene(dump(materials=[{**red, "principled": inputs}]), SPEC)
    bad = [c for c in checks if not c.ok]
    assert [c.what for c in bad] == ["Red[Roughness]"] and "node link" in bad[0].detail


def test_camera_look_at_is_an_angle() -> None:
    cam = dump()["camera"]
    # Aimed at the origin instead of (0, 0, 1): acos(84 / (9 sqrt 88)) = 5.77 degrees.
    aimed_low = {**cam, "direction": [-6 / math.sqrt(88), 6 / math.sqrt(88), -4 / math.sqrt(88)]}
    bad = [c for c in check_scene(dump(camera=aimed_low), SPEC) if not c.ok]
    assert [c.what for c in bad] == ["camera.look_at"] and "5.77" in bad[0].detail


def test_each_light_spec_needs_its_own_light() -> None:
    spec = SceneSpec(lights=[{"type": "SUN"}, {"type": "SUN"}])
    one = dump()
    two = dump(lights=[*one["lights"], {**one["lights"][0], "name": "Sun.001"}])
    assert [c.ok for c in check_scene(one, spec)] == [True, False]
    assert [c.ok for c in check_scene(two, spec)] == [True, True]


def test_spec_typos_are_errors() -> None:
    with pytest.raises(ValidationError, match="dimension"):
        SceneSpec.model_validate({"objects": {"Box": {"dimension": [1, 1, 1]}}})
    with pytest.raises(ValidationError):
        SceneSpec.model_validate({"lights": [{"type": "SUN", "colour": [1, 1, 1]}]})


def test_hostile_dump_values_fail_checks_without_crashing() -> None:
    weird = dump(
        objects=[{"name": "Box", "type": None, "location": "here", "dimensions": [None, {}, 1]}],
        lights=[{"name": 5, "type": "SUN", "energy": "lots", "color": "red"}],
        camera={"location": [float("inf")] * 3, "direction": [0, 0, 0], "lens": "x"},
    )
    checks = check_scene(weird, SPEC)
    assert not any(c.ok for c in checks if c.what.startswith(("Box.", "light", "camera.")))


def test_staged_score_by_hand() -> None:
    scores = {"geometry": 1.0, "materials": 0.5, "lighting": 1.0, "render": 1.0}
    assert staged_score(scores, "mean") == pytest.approx((1 + 0.5 + 1 + 1) / 4)
    # Sequential: lighting and render are locked until materials are complete.
    assert staged_score(scores, "sequential") == pytest.approx((1 + 0.5) / 4)
    assert staged_score({"geometry": 0.0, "lighting": 1.0}, "sequential") == 0.0
    assert staged_score({}, "mean") == 0.0


@pytest.mark.parametrize(
    ("text", "script"),
    [
        ("import bpy", "import bpy"),
        ("Here you go:\n```python\nimport bpy\n```\nDone.", "import bpy\n"),
        ("```\nx = 1\n```", "x = 1\n"),
        ("```py\na\n```\n```python\nb\n```", "a\n"),
    ],
)
def test_extract_script(text: str, script: str) -> None:
    assert extract_script(text) == script
