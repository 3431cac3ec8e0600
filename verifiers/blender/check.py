"""Check a scene dump (see `_inside.dump_scene`) against a `SceneSpec`, stage by stage.

Runs in the scoring process on plain JSON values; nothing here touches Blender. Each check
is one yes/no with a sentence saying what was expected and what was found, tagged with its
stage:

- **geometry**: each named object exists, with the stated type, location, dimensions,
  world bounding box, modifiers and material slots;
- **materials**: each named material's Principled BSDF inputs;
- **lighting**: each light spec met by a distinct light (type, energy, colour, position,
  direction or look-at);
- **render**: the camera (location, look-at or direction angle, focal length, and that the
  scene's meshes are in its view: a camera facing away fails as such) and render settings
  (the stated ones, and one ``render settings`` check of the output size, crop border,
  exposure, depth of field and 35 mm equivalent lens against the task or sane bounds).
  The preview image comparison is added by the verifier (it needs the rendered file).

Then the truth render gates them (`truth.py`): lighting checks fail on a dark render,
camera checks when none of the task's objects shows, material checks when no object
showing the material is in the picture, or when it is see-through or glows. A light
that lights nothing (rays off, black, no energy, a cone under 3 degrees) or that its
light linking keeps off a rendered mesh meets no spec; a light's energy and colour are
read as rendered (exposure, node tree, blackbody temperature: `_view.light_of`).

    >>> from rewardsmith.verifiers.blender.spec import SceneSpec
    >>> spec = SceneSpec(lights=[{"type": "SUN"}])
    >>> [c.ok for c in check_scene({"objects": [], "lights": []}, spec)]
    [False]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from rewardsmith.verifiers.blender.spec import CameraSpec, LightSpec, SceneSpec, Tolerances
from rewardsmith.verifiers.blender.truth import gate_on_truth, material_problem, render_problems

__all__ = ["STAGES", "Check", "asked_lights", "check_scene", "matched_lights", "stage_scores"]

STAGES = ("geometry", "materials", "lighting", "render")


@dataclass(frozen=True)
class Check:
    stage: str
    what: str
    ok: bool
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _close(got: Any, want: Sequence[float], tol: float) -> bool:
    """Every channel of `want` within `tol` of `got` (NaN never is)."""
    try:
        return all(abs(float(g) - float(w)) <= tol for g, w in zip(got, want, strict=False)) and (
            len(got) >= len(want)
        )
    except (TypeError, ValueError):
        return False


def _fmt(values: Any) -> str:
    if isinstance(values, list | tuple):
        return "(" + ", ".join(f"{v:.3g}" if isinstance(v, float) else str(v) for v in values) + ")"
    return str(values)


def _object_checks(
    name: str, found: dict[str, Any] | None, spec: Any, tol: Tolerances
) -> list[Check]:
    if found is None:
        return [Check("geometry", f"object {name!r}", False, f"no object named {name!r}")]
    checks: list[Check] = []
    if spec.type is not None:
        ok = found.get("type") == spec.type.upper()
        checks.append(
            Check("geometry", f"{name}.type", ok, f"is {found.get('type')}, want {spec.type}")
        )
    for field in ("location", "dimensions", "bbox_min", "bbox_max"):
        want = getattr(spec, field)
        if want is not None:
            got = found.get(field)
            ok = _close(got, want, tol.length)
            checks.append(
                Check("geometry", f"{name}.{field}", ok, f"is {_fmt(got)}, want {_fmt(want)}")
            )
    if spec.modifiers is not None:
        have = [m.get("type") for m in found.get("modifiers", [])]
        missing = [m for m in spec.modifiers if m.upper() not in have]
        checks.append(
            Check("geometry", f"{name}.modifiers", not missing, f"missing {missing}; has {have}")
        )
    if spec.materials is not None:
        have = found.get("materials", [])
        missing = [m for m in spec.materials if m not in have]
        checks.append(
            Check("geometry", f"{name}.materials", not missing, f"missing {missing}; has {have}")
        )
    # The name alone is worth a check only when the spec asks nothing else of the object:
    # otherwise a scene of empties with the right names would earn part of the reward.
    checks = checks or [Check("geometry", f"object {name!r}", True)]
    hidden = found.get("hidden")
    if hidden:  # measured right but not in the picture: none of its checks is earned
        return [Check(c.stage, c.what, False, f"hidden from the render: {hidden}") for c in checks]
    return checks


def _material_checks(
    name: str, found: dict[str, Any] | None, spec: Any, tol: Tolerances
) -> list[Check]:
    if found is None:
        return [Check("materials", f"material {name!r}", False, f"no material {name!r} in use")]
    principled = found.get("principled")
    if not principled:
        surface = found.get("surface", "has no Principled BSDF node")
        return [Check("materials", f"material {name!r}", False, surface)]
    checks: list[Check] = []
    for key, want in spec.inputs.items():
        entry = principled.get(key)
        if entry is None:
            checks.append(Check("materials", f"{name}[{key}]", False, f"no input {key!r}"))
        elif entry.get("linked"):
            checks.append(
                Check("materials", f"{name}[{key}]", False, "driven by a node link, not a value")
            )
        else:
            got = entry.get("value")
            wants = want if isinstance(want, list) else [want]
            gots = got if isinstance(got, list) else [got]
            ok = _close(gots, wants, tol.color if isinstance(want, list) else tol.scalar)
            checks.append(
                Check("materials", f"{name}[{key}]", ok, f"is {_fmt(got)}, want {_fmt(want)}")
            )
    checks = checks or [Check("materials", f"material {name!r}", True)]
    problem = material_problem(found, set(spec.inputs))
    if problem:  # its values are right, but the render does not show them
        return [Check(c.stage, c.what, False, problem) for c in checks]
    return checks


def _light_matches(light: dict[str, Any], spec: LightSpec, tol: Tolerances) -> list[str]:
    """What about `light` fails `spec` (empty when it matches)."""
    wrong = []
    if light.get("hidden"):
        wrong.append(f"hidden from the render ({light['hidden']})")
    wrong += _dark(light)
    if spec.name is not None and light.get("name") != spec.name:
        wrong.append(f"name {light.get('name')!r}")
    if spec.type is not None and light.get("type") != spec.type.upper():
        wrong.append(f"type {light.get('type')}")
    if spec.energy is not None:
        energy = light.get("energy")
        if not isinstance(energy, int | float) or not abs(
            energy - spec.energy
        ) <= tol.energy_rel * abs(spec.energy):
            wrong.append(f"energy {energy}")
    if spec.color is not None and not _close(light.get("color"), spec.color, tol.color):
        wrong.append(f"color {_fmt(light.get('color'))}")
    location = light.get("location", [math.nan] * 3)
    if spec.location is not None and not _distance(location, spec.location) <= tol.position:
        wrong.append(f"location {_fmt(location)}")
    aims = [("direction", spec.direction)]
    if spec.look_at is not None:
        aims.append(("look_at", _towards(location, spec.look_at)))
    for what, want in aims:
        if want is not None:
            angle = _angle_deg(light.get("direction", [0, 0, 0]), want)
            if not angle <= tol.angle_deg:
                wrong.append(f"{what} off by {angle:.1f} degrees")
    return wrong


def _dark(light: dict[str, Any]) -> list[str]:
    """Why the light does not light the scene, whatever its values: its rays off, black,
    no energy (its exposure counted), a spot cone or an area light's spread under 3
    degrees (Blender clamps a 0.5 degree cone to 1), or light linking that keeps it off a
    rendered mesh."""
    found = []
    unlit = light.get("unlit") or []
    if unlit:
        names = ", ".join(repr(n) for n in unlit[:4])
        found.append(f"its light linking keeps it off {names}: it does not light the scene")
    rays = light.get("rays") or {}
    if rays and not (rays.get("diffuse", True) or rays.get("glossy", True)):
        found.append("its diffuse and glossy ray visibility are off: it lights nothing")
    try:
        if max(float(c) for c in light.get("color", [1.0])) < 0.01:
            found.append("its colour is black")
    except (TypeError, ValueError):
        found.append("its colour is not a number")
    energy = light.get("energy")
    if isinstance(energy, int | float) and not energy > 0:
        found.append(f"its energy is {energy}: it emits nothing")
    cone = light.get("spot_size_deg")
    if isinstance(cone, int | float) and cone < 3.0:  # Blender clamps to 1 degree
        found.append(f"its cone is {cone:g} degrees wide: it lights almost nothing")
    spread = light.get("spread_deg")
    if isinstance(spread, int | float) and spread < 3.0:  # an area light's cone
        found.append(f"its spread is {spread:g} degrees: it lights almost nothing")
    return found


def _distance(got: Any, want: Sequence[float]) -> float:
    try:
        return math.dist([float(g) for g in got], [float(w) for w in want])
    except (TypeError, ValueError):
        return math.inf


def _towards(origin: Any, target: Sequence[float]) -> list[float]:
    try:
        return [float(t) - float(o) for t, o in zip(target, origin, strict=True)]
    except (TypeError, ValueError):
        return [0.0, 0.0, 0.0]


def matched_lights(
    lights: Sequence[dict[str, Any]], specs: Sequence[LightSpec], tol: Tolerances
) -> list[int | None]:
    """For each light spec in order, the index of the light that meets it (each light meets
    at most one spec: the first free one that matches), or None. The truth render in the
    Blender child uses the same matching to light its reference with the asked lights."""
    found: list[int | None] = []
    used: set[int] = set()
    for spec in specs:
        free = [k for k in range(len(lights)) if k not in used]
        match = next((k for k in free if not _light_matches(lights[k], spec, tol)), None)
        if match is not None:
            used.add(match)
        found.append(match)
    return found


def asked_lights(
    lights: Sequence[dict[str, Any]], specs: Sequence[LightSpec], tol: Tolerances
) -> list[int]:
    """Indices of the lights the task asks for: each that meets a light spec
    (`matched_lights`) and, for a spec none meets, the first other light of its type (a
    sun turned the wrong way is still the asked sun: its light check fails, and its light
    is not light nobody asked for). The truth render's light split lights its reference
    with these alone.

        >>> sun = {"name": "Sun", "type": "SUN", "energy": 3.0, "color": [1, 1, 1]}
        >>> flood = {"name": "Flood", "type": "AREA", "energy": 3000.0, "color": [1, 1, 1]}
        >>> asked_lights([flood, sun], [LightSpec(type="SUN", energy=3.0)], Tolerances())
        [1]
        >>> asked_lights([flood, sun], [LightSpec(type="SUN", energy=9.0)], Tolerances())
        [1]
    """
    matched = matched_lights(lights, specs, tol)
    found = [k for k in matched if k is not None]
    for spec, match in zip(specs, matched, strict=True):
        if match is not None:
            continue
        kind = (spec.type or "").upper()
        free = [k for k in range(len(lights)) if k not in found]
        near = next((k for k in free if not kind or lights[k].get("type") == kind), None)
        if near is not None:
            found.append(near)
    return sorted(found)


def _light_checks(
    lights: list[dict[str, Any]], specs: list[LightSpec], tol: Tolerances
) -> list[Check]:
    checks, used = [], set()
    for i, (spec, match) in enumerate(zip(specs, matched_lights(lights, specs, tol), strict=True)):
        wanted = spec.model_dump(exclude_none=True)
        free = [k for k in range(len(lights)) if k not in used]
        if match is not None:
            used.add(match)
            checks.append(
                Check(
                    "lighting", f"light {i} {wanted}", True, f"met by {lights[match].get('name')!r}"
                )
            )
            continue
        nearest = [
            f"{lights[k].get('name')!r}: " + ", ".join(_light_matches(lights[k], spec, tol))
            for k in free
        ]
        detail = "no light in the scene" if not lights else "closest: " + "; ".join(nearest[:3])
        checks.append(Check("lighting", f"light {i} {wanted}", False, detail))
    return checks


def _angle_deg(u: Sequence[float], v: Sequence[float]) -> float:
    nu, nv = math.sqrt(sum(x * x for x in u)), math.sqrt(sum(x * x for x in v))
    if not (nu > 0 and nv > 0):  # also false for NaN
        return 180.0
    cos = sum(a * b for a, b in zip(u, v, strict=True)) / (nu * nv)
    return math.degrees(math.acos(max(-1.0, min(1.0, cos))))


def _camera_checks(cam: dict[str, Any] | None, spec: CameraSpec, tol: Tolerances) -> list[Check]:
    if cam is None:
        return [Check("render", "camera", False, "the scene has no active camera")]
    checks: list[Check] = []
    if spec.location is not None:
        ok = _close(cam.get("location"), spec.location, tol.length)
        checks.append(
            Check(
                "render",
                "camera.location",
                ok,
                f"is {_fmt(cam.get('location'))}, want {_fmt(spec.location)}",
            )
        )
    view = cam.get("direction", [0, 0, 0])
    for what, want in (
        (
            "camera.look_at",
            None if spec.look_at is None else _towards(cam.get("location"), spec.look_at),
        ),
        ("camera.direction", spec.direction),
    ):
        if want is not None:
            angle = _angle_deg(view, want)
            detail = f"off by {angle:.2f} degrees"
            if angle > 90:
                detail = f"the camera faces away ({angle:.0f} degrees from where it should look)"
            checks.append(Check("render", what, angle <= tol.angle_deg, detail))
    if spec.lens is not None:
        lens = cam.get("lens")
        projection = cam.get("projection", "PERSP")
        ok = isinstance(lens, int | float) and abs(lens - spec.lens) <= tol.lens_mm
        detail = f"is {lens} mm, want {spec.lens} mm"
        if projection != "PERSP":  # a focal length is a perspective camera's
            ok, detail = False, f"the camera is {projection}, not a {spec.lens} mm lens"
        checks.append(Check("render", "camera.lens", ok, detail))
    return checks or [Check("render", "camera", True)]


def _sees_scene(cam: dict[str, Any], objects: list[dict[str, Any]]) -> Check | None:
    """Whether the centre of the scene's meshes is inside the camera's view cone (a camera
    facing away fails this, whatever else the spec states about it), and whether any mesh
    is inside its frame and clipping range by Blender's own projection (``in_frame``: a
    camera shifted off the scene, clipping it away, or not a perspective one)."""
    boxes: list[tuple[Any, Any]] = [
        (o.get("bbox_min"), o.get("bbox_max"))
        for o in objects
        if o.get("type") == "MESH" and not o.get("hidden")
    ]
    framed = cam.get("in_frame")  # the rendered meshes the camera's picture holds
    if not boxes:
        return None
    if cam.get("projection", "PERSP") != "PERSP":
        if framed is None:
            return None
        detail = "" if framed else "no mesh is inside the camera's frame and clipping range"
        return Check("render", "camera sees the scene", bool(framed), detail)
    try:
        low = [min(float(b[0][i]) for b in boxes) for i in range(3)]
        high = [max(float(b[1][i]) for b in boxes) for i in range(3)]
        lens, sensor = float(cam.get("lens", 50.0)), float(cam.get("sensor", 36.0))
    except (TypeError, ValueError, IndexError):
        return None
    centre = [(a + b) / 2 for a, b in zip(low, high, strict=True)]
    angle = _angle_deg(cam.get("direction", [0, 0, 0]), _towards(cam.get("location"), centre))
    half_view = math.degrees(math.atan(0.5 * math.hypot(sensor, sensor * 0.75) / lens))
    if angle <= half_view and framed is not None and not framed:
        detail = "no mesh is inside the camera's frame and clipping range (shift, clipping)"
        return Check("render", "camera sees the scene", False, detail)
    if angle <= half_view:
        return Check("render", "camera sees the scene", True)
    if angle > 90:
        detail = f"the camera faces away from the scene ({angle:.0f} degrees off its centre)"
    else:
        detail = (
            f"the scene's centre is {angle:.0f} degrees off the view axis (field {half_view:.0f})"
        )
    return Check("render", "camera sees the scene", False, detail)


def check_scene(dump: dict[str, Any], spec: SceneSpec) -> list[Check]:
    """Every check the spec asks for, in stage order."""
    tol = spec.tolerances
    objects = {o.get("name"): o for o in dump.get("objects", [])}
    materials = {m.get("name"): m for m in dump.get("materials", [])}
    checks: list[Check] = []
    for name, want in spec.objects.items():
        checks += _object_checks(name, objects.get(name), want, tol)
    for name, want in spec.materials.items():
        checks += _material_checks(name, materials.get(name), want, tol)
    if spec.lights:
        checks += _light_checks(list(dump.get("lights", [])), spec.lights, tol)
    if spec.camera is not None:
        camera = dump.get("camera")
        checks += _camera_checks(camera, spec.camera, tol)
        sees = _sees_scene(camera, list(dump.get("objects", []))) if camera else None
        if sees is not None:
            checks.append(sees)
    if spec.render is not None:
        render = dump.get("render", {})
        for field, want in spec.render.model_dump(exclude_none=True).items():
            got = render.get(field)
            checks.append(Check("render", f"render.{field}", got == want, f"is {got}, want {want}"))
    if spec.camera is not None or spec.render is not None or spec.image is not None:
        problems = render_problems(dump.get("render") or {}, dump.get("camera"), spec, tol.lens_mm)
        checks.append(Check("render", "render settings", not problems, "; ".join(problems)))
    return gate_on_truth(checks, dump, spec)


def stage_scores(checks: Sequence[Check]) -> dict[str, float]:
    """Fraction of checks passed per stage, for the stages that have checks."""
    scores = {}
    for stage in STAGES:
        mine = [c for c in checks if c.stage == stage]
        if mine:
            scores[stage] = sum(c.ok for c in mine) / len(mine)
    return scores
