"""Render truth on the scoring side: gate the checks on what the render shows.

The scene's settings say what should render; the truth render (`_truth.py`, in the Blender
child: the scene's own camera, exposure and crop, 48 px, 4 samples, seeded, with an
object-index render) says what does. From its statistics and the dump:

- **lighting**: the named objects' pixels (or the frame, when none is in view), rendered on
  white diffuse surfaces with the scene's lights, world and exposure, must have a mean
  display luminance of at least `LIT_MIN` (a black or chrome material is not a dark
  light) and at most `LIT_MAX`; a black render (exposure -20, every light dark, rays off,
  a pin-prick cone) fails every lighting check, whatever the lights' values, and so does a
  blown-out one (a world 50 times a sky, lights 1000 times the task's), which fails every
  material check too: no colour survives it (a red cube renders white);
- **lighting and materials**: on no task object, in no channel, may the light the task
  does not ask for (the world, every light that meets no light spec, the surfaces of
  objects the spec does not name) add more than `WORLD_MAX` times the asked lights' light
  on white surfaces (the light split, scene-linear, `UNASKED_STOPS` brighter;
  `WORLD_FLOOR` always allowed, and anything where the spec states no lights): under
  `LIT_MAX`, a white world at strength 5 left the red cube pale pink, a green one turned
  it yellow-brown, a 3000 W flood light beside it or an unseen glowing plane salmon;
- **camera**: at least one pixel must show one of the task's objects (a camera aimed right
  whose picture holds none of them: crop border, clipping, shift, a 0.5 mm sensor looking
  past them) fails every camera check;
- **geometry**: a named mesh no pixel shows, while the camera shows something (occluded by
  another object, or out of frame), fails its checks;
- **materials**: some object using the material must be in the picture (and no view-layer
  material override replaces it); a material that is see-through (alpha under 0.5, or
  transmission over 0.5, unless the task asks for it) or glows (emission above `GLOW_MAX`,
  unless the task asks for emission) fails its checks, and so does one whose objects
  render more than `AS_READ_MAX_SHIFT` away from the same render with every material as
  the dump reads it (`_truth.as_read_renders`): what the checks never read (a sheen, a
  displacement) must not change what renders; so does one whose unasked emission is over
  `GLOW_MAX_LIT` times the light its objects get (the surface shows its own light), and
  one whose objects the scene's view shows in other colours than Blender's default view
  of the same render (`view_shift`: lightness moved over `VIEW_LIGHTNESS_MAX`, under
  `VIEW_SAT_KEEP` of the saturation, the hue turned over `VIEW_HUE_MAX`, a grey tinted;
  exposure +3 or film exposure 8 showed the red cube salmon inside the render-settings
  bounds), and every material check when the view's exposure and film exposure together
  move the light more than `UNASKED_STOPS` (`_exposed`), or
  every material check when the view's colour management rewrites every colour
  (`colour_rewrites`: a greyscale look, a white balance far from daylight, RGB curves).

`render_problems` checks the render settings against the task or sane bounds (one
``render settings`` check in the render stage): the output size after
``resolution_percentage``, a crop border, a camera moving during the motion-blur
shutter, exposure, film exposure, a compositor, a debug view transform (False Color,
Raw), a colour rewrite (above), gamma, pixel aspect, depth of field, and the lens as a
35 mm equivalent (``lens * 36 / sensor``: a 0.5 mm sensor makes a 50 mm lens a
3,600 mm one).

A dump without ``truth`` (an earlier step of a trajectory, or a scene with no camera) is
judged on its values alone.

    >>> render_problems({"resolution_x": 640, "resolution_y": 480,
    ...                  "resolution_percentage": 1}, {"projection": "ORTHO"}, None, None)
    ['renders 6 x 4 pixels (resolution_percentage 1); at least 64 a side']
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

__all__ = [
    "GLOW_MAX",
    "LIT_MAX",
    "LIT_MIN",
    "UNASKED_STOPS",
    "VIEW_SAT_KEEP",
    "WORLD_MAX",
    "colour_rewrites",
    "gate_on_truth",
    "material_problem",
    "render_problems",
    "view_shift",
]

LIT_MIN = 0.0005
"""Least mean display luminance (0-1) of the task's objects in the truth render, on white
diffuse surfaces (16-bit): above pitch black. A night scene (a 0.02 W sun) is dim, not
black; exposure -20 or every light dead is black."""
LIT_MAX = 0.95
"""Most mean display luminance of the task's objects on white diffuse surfaces: within 5%
of saturation the render shows light, not the scene. The 13 bundled scenes' honest
solutions are at 0.45-0.86 (their brightest object); a white world at strength 50 reads
1.0, a green one 0.986 (2026-12-05)."""
UNASKED_STOPS = 2.0
"""Most the light the task does not ask for (the world, which no spec states, and every
light that meets no light spec) may brighten any of the task's objects, in stops over the
asked lights' light on a white surface there, in any channel (scene-linear): the same two
stops a view exposure may add and keep the asked colours (`VIEW_SAT_KEEP`: exposure +2
keeps 0.70 of the red cube's saturation, +3 0.52). Judged per object, so a bright one does
not hide a washed-out one. A white sky of strength 1 brightens the bundled scenes' objects
by 1.8 stops at most (the blue ball); of strength 5 still_life's vase by 2.6 and the red
cube by 2.7; a 3000 W area light 2.1 m from the red cube by 4.5 (2026-12-05)."""
WORLD_MAX = 2.0**UNASKED_STOPS - 1.0
"""`UNASKED_STOPS` as the most unasked light for each unit of asked light (3)."""
WORLD_FLOOR = 0.2
"""World light (scene-linear, on a 0.8 white surface) always allowed, however dim the lights:
a uniform world of radiance 0.25 (Blender's default grey world gives 0.04)."""
DARKEN_FLOOR = 0.05
"""Asked light (scene-linear, on a 0.8 white surface) that may always go missing: a night
scene's dim light is not judged by the ratio. A cyan world volume (absorption 0.05) took
all the red cube's red (0.35 of 0.35) and rendered it dark teal, a direct-light sample
clamp of 0.05 six sevenths of its light, both at full reward (2026-12-05)."""
GLOW_MAX = 1.0
"""Most emission (strength times brightest channel) a material may have unasked."""
GLOW_MAX_LIT = 1.0
"""Most unasked emission (strength times colour, any channel) a material may have for each
unit of light reaching a white surface where its objects are (scene-linear): brighter, the
surface shows its own light, not its colour (white emission 1.0 on the red cube, under
`GLOW_MAX`, rendered it grey-pink: display RGB 0.80, 0.77, 0.77)."""
GLOW_FLOOR = 0.2
"""Unasked emission (strength times brightest channel) always allowed, however dim the
scene."""
WHITE_BALANCE_K = (4000.0, 9000.0)
"""Sane white-balance temperatures (a view setting that tints the whole picture)."""
WHITE_BALANCE_TINT = 50.0
MIN_SIDE = 64
EXPOSURE = (-3.0, 3.0)
FILM_EXPOSURE = (0.125, 8.0)
MIN_FSTOP = 0.5
GAMMA = (0.5, 2.0)
PIXEL_ASPECT = (0.5, 2.0)
LENS_35MM = (8.0, 1200.0)


def _unlinked(principled: dict[str, Any], key: str) -> float | list[float] | None:
    entry = principled.get(key)
    if not isinstance(entry, dict) or entry.get("linked"):
        return None
    return entry.get("value")


def material_problem(found: dict[str, Any], asked: set[str]) -> str | None:
    """Why the material does not render as its values say: see-through or glowing."""
    principled = found.get("principled") or {}
    alpha = _unlinked(principled, "Alpha")
    if "Alpha" not in asked and isinstance(alpha, int | float) and alpha < 0.5:
        return f"alpha {alpha:g}: the surface is see-through"
    clear = _unlinked(principled, "Transmission Weight")
    if "Transmission Weight" not in asked and isinstance(clear, int | float) and clear > 0.5:
        return f"transmission {clear:g}: the surface is see-through"
    coat = _coat_problem(principled, asked)
    if coat:
        return coat
    strength = _unlinked(principled, "Emission Strength")
    colour = _unlinked(principled, "Emission Color")
    if asked & {"Emission Strength", "Emission Color"}:
        return None
    if isinstance(strength, int | float) and isinstance(colour, list) and colour:
        glow = strength * max(float(c) for c in colour[:3])
        if glow > GLOW_MAX:
            return f"emission {glow:g}: the surface glows instead of showing its colour"
    return None


COAT_MAX_SHIFT = 0.2
"""How far (0-1, per channel) an unasked coat may darken or tint what is under it."""


def _coat_problem(principled: dict[str, Any], asked: set[str]) -> str | None:
    """A coat layer whose tint is not white filters every colour under it (a black tint
    at weight 1 renders the red team's red cube black): unless the task asks for the coat,
    the colour shown is not the base colour read."""
    if asked & {"Coat Weight", "Coat Tint"}:
        return None
    weight, tint = _unlinked(principled, "Coat Weight"), _unlinked(principled, "Coat Tint")
    if not isinstance(weight, int | float) or not isinstance(tint, list) or not tint:
        return None
    shift = min(1.0, max(0.0, float(weight))) * (1.0 - min(float(c) for c in tint[:3]))
    if shift > COAT_MAX_SHIFT:
        return f"a coat (weight {weight:g}, tint {tint[:3]}) filters the colour under it"
    return None


def _lens_35mm(camera: dict[str, Any]) -> float | None:
    try:
        lens = float(camera["lens"])
        if camera.get("sensor_fit") == "VERTICAL":
            return lens * 24.0 / float(camera["sensor_height"])
        return lens * 36.0 / float(camera["sensor_width"])
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        return None


def _size_problems(render: dict[str, Any], stated: bool) -> list[str]:
    try:
        pct = float(render.get("resolution_percentage", 100))
        x, y = float(render["resolution_x"]), float(render["resolution_y"])
    except (KeyError, TypeError, ValueError):
        return []
    w, h = int(x * pct / 100), int(y * pct / 100)
    if stated and pct != 100:
        return [f"renders {w} x {h} pixels: resolution_percentage {pct:g}, not the stated size"]
    if not stated and min(w, h) < MIN_SIDE:
        return [f"renders {w} x {h} pixels (resolution_percentage {pct:g}); at least 64 a side"]
    return []


def _film_problems(render: dict[str, Any]) -> list[str]:
    found = []
    border = render.get("border")
    if border:
        area = max(0.0, border[2] - border[0]) * max(0.0, border[3] - border[1])
        if area < 0.99:
            found.append(f"a crop border renders {area:.1%} of the frame")
    if render.get("camera_moves"):
        found.append(f"the camera: {render['camera_moves']}")
    found += _colour_problems(render)
    exposure, film = render.get("exposure", 0.0), render.get("film_exposure", 1.0)
    if not EXPOSURE[0] <= exposure <= EXPOSURE[1]:
        found.append(f"exposure {exposure:g} stops (sane: {EXPOSURE[0]:g} to {EXPOSURE[1]:g})")
    if not FILM_EXPOSURE[0] <= film <= FILM_EXPOSURE[1]:
        found.append(f"film exposure {film:g} (sane: {FILM_EXPOSURE[0]:g} to {FILM_EXPOSURE[1]:g})")
    return found


def _colour_problems(render: dict[str, Any]) -> list[str]:
    """What between the render and the saved picture rewrites it: a compositor, a debug
    view transform or look, a gamma far from 1, non-square pixels."""
    found = []
    if render.get("compositor"):
        found.append("a compositor node tree rewrites the rendered picture")
    transform, look = render.get("view_transform", "AgX"), str(render.get("look", "None"))
    if transform in ("False Color", "Raw") or "False Color" in look:
        found.append(f"the view transform is {transform!r} (look {look!r}): not a picture")
    found += colour_rewrites(render)
    gamma = render.get("gamma", 1.0)
    if not GAMMA[0] <= gamma <= GAMMA[1]:
        found.append(f"display gamma {gamma:g} (sane: {GAMMA[0]:g} to {GAMMA[1]:g})")
    aspect = render.get("pixel_aspect") or [1.0, 1.0]
    if not PIXEL_ASPECT[0] <= aspect[0] / max(aspect[1], 1e-9) <= PIXEL_ASPECT[1]:
        found.append(f"pixel aspect {aspect[0]:g}:{aspect[1]:g} stretches the picture")
    return found


def colour_rewrites(render: dict[str, Any]) -> list[str]:
    """What in the view's colour management rewrites every colour whatever the materials'
    (a greyscale look, a white balance outside `WHITE_BALANCE_K` or `WHITE_BALANCE_TINT`,
    RGB curves other than the identity): the render-settings check fails, and so do the
    material checks (1800 K turned the red die blue, display RGB 0.38, 0.38, 0.77)."""
    found = []
    look = str(render.get("look", "None"))
    if "Greyscale" in look:
        found.append(f"the look {look!r} renders every colour grey")
    balance = render.get("white_balance")
    if balance:
        temperature, tint = float(balance[0]), float(balance[1])
        low, high = WHITE_BALANCE_K
        if not (low <= temperature <= high and abs(tint) <= WHITE_BALANCE_TINT):
            found.append(
                f"a white balance of {temperature:g} K, tint {tint:g} tints the picture "
                f"(sane: {low:g} to {high:g} K, tint within {WHITE_BALANCE_TINT:g})"
            )
    if render.get("curves"):
        found.append("the view's RGB curves rewrite the rendered picture")
    return found


def _exposed(render: dict[str, Any]) -> list[str]:
    """Why the view shows the scene other than it is lit: its exposure and film exposure
    together brighten or darken it more than `UNASKED_STOPS` (each alone may reach three
    stops, `EXPOSURE` and `FILM_EXPOSURE`; +3 showed the red cube salmon). The same bound
    as unasked light: the asked colours are shown under the asked light, give or take two
    stops, whatever route moves them."""
    try:
        stops = float(render.get("exposure", 0.0)) + math.log2(
            max(float(render.get("film_exposure", 1.0)), 1e-9)
        )
    except (TypeError, ValueError):
        return []
    if abs(stops) <= UNASKED_STOPS + 1e-6:
        return []
    return [
        f"the view's exposure and film exposure show the scene {stops:+.3g} stops from how "
        f"it is lit (at most {UNASKED_STOPS:g} either way): not the asked colours"
    ]


def _camera_problems(camera: dict[str, Any] | None, lens: float | None, tol: float) -> list[str]:
    if not camera or camera.get("projection", "PERSP") != "PERSP":
        return []
    found = []
    fstop = camera.get("dof_fstop")
    if isinstance(fstop, int | float) and fstop < MIN_FSTOP:
        found.append(f"depth of field at f/{fstop:g}: almost nothing is in focus")
    eq = _lens_35mm(camera)
    if eq is None:
        return found
    if lens is not None and abs(eq - lens) > tol:
        found.append(f"the lens is {eq:.4g} mm as a 35 mm equivalent (sensor "
                     f"{camera.get('sensor_width')} mm); want {lens:g}")  # fmt: skip
    elif lens is None and not LENS_35MM[0] <= eq <= LENS_35MM[1]:
        found.append(f"the lens is {eq:.4g} mm as a 35 mm equivalent (sane: 8 to 1200)")
    return found


def render_problems(
    render: dict[str, Any], camera: dict[str, Any] | None, spec: Any, lens_tol: float | None
) -> list[str]:
    """What about the render settings is outside the task or sane bounds (see above).
    `spec` is the `SceneSpec` (or None); `lens_tol` its lens tolerance in mm."""
    if camera is None:
        return ["the scene has no active camera: nothing renders"]
    stated = bool(spec and spec.render and (spec.render.resolution_x or spec.render.resolution_y))
    lens = spec.camera.lens if spec is not None and spec.camera is not None else None
    return (
        _size_problems(render, stated)
        + _film_problems(render)
        + _camera_problems(camera, lens, lens_tol or 0.5)
    )


def _pixels(truth: dict[str, Any], names: list[str]) -> tuple[int, float]:
    """(pixels showing any of `names`, their mean luminance)."""
    shown = [truth["objects"][n] for n in names if n in truth.get("objects", {})]
    count = sum(int(o["pixels"]) for o in shown)
    if not count:
        return 0, 0.0
    return count, sum(o["pixels"] * o["luminance"] for o in shown) / count


def gate_on_truth(checks: list[Any], dump: dict[str, Any], spec: Any) -> list[Any]:
    """`checks` with those the truth render contradicts failed (see the module docstring)."""
    truth = dump.get("truth")
    if not truth:
        return checks
    meshes = [o for o in dump.get("objects", []) if o.get("type") == "MESH" and not o.get("hidden")]
    named = [o["name"] for o in meshes if o.get("name") in spec.objects] or [
        o["name"] for o in meshes
    ]
    count, lit = _pixels(truth, named)
    if not count:
        lit = float(truth.get("luminance", 0.0))
    users: dict[str, list[str]] = {}
    for o in meshes:
        for m in o.get("materials", []):
            users.setdefault(m, []).append(o["name"])
    render = dump.get("render") or {}
    override = render.get("material_override")
    world = _world_problem(truth, named, spec)
    rewrites = colour_rewrites(render) + _exposed(render)
    materials = {m.get("name"): m for m in dump.get("materials", [])}
    out = []
    for check in checks:
        why = None
        owner = _object_of(check.what, spec)
        if owner is not None and _unseen(owner, truth, dump):
            why = f"{owner!r} shows in no pixel of the render (occluded, out of frame)"
        elif check.stage == "materials" and override:
            why = f"the view layer's material override {override!r} replaces it in the render"
        elif check.stage == "lighting" and lit < LIT_MIN:
            why = f"the render is dark where the objects are (luminance {lit:.4f} < {LIT_MIN})"
        elif check.stage in ("lighting", "materials") and lit > LIT_MAX:
            why = f"the render is blown out where the objects are (luminance {lit:.3f} > {LIT_MAX})"
        elif check.stage in ("lighting", "materials") and world:
            why = world
        elif check.stage == "materials" and rewrites:
            why = "; ".join(rewrites)
        elif check.stage == "render" and check.what.startswith("camera") and named and not count:
            why = "none of the task's objects shows in the render (object-index pass)"
        elif check.stage == "materials":
            name = _material_of(check.what, spec)
            if name is not None and not _pixels(truth, users.get(name, []))[0]:
                why = f"no object showing {name!r} is in the render"
            elif name is not None:
                shown = users.get(name, [])
                why = (
                    _rendered_unlike_read(truth, shown)
                    or _view_shifted(truth, shown)
                    or _outshone(
                        truth,
                        shown,
                        materials.get(name),
                        set(spec.materials[name].inputs),
                    )
                )
        out.append(replace(check, ok=False, detail=why) if why and check.ok else check)
    return out


def _light_at(truth: dict[str, Any], names: list[str]) -> tuple[list[float], list[float]] | None:
    """(scene-linear RGB on white surfaces from everything, from the lights alone), the
    pixel-weighted mean over the objects `names` (None where the dump has no split)."""
    shown = [o for n in names if "light" in (o := truth.get("objects", {}).get(n) or {})]
    count = sum(int(o["pixels"]) for o in shown)
    if not count:
        return None
    try:
        mean = [[sum(o["pixels"] * float(o["light"][key][c]) for o in shown) / count
                 for c in range(3)] for key in ("all", "lights")]  # fmt: skip
    except (KeyError, TypeError, ValueError, IndexError):
        return None
    return mean[0], mean[1]


def _world_problem(truth: dict[str, Any], names: list[str], spec: Any) -> str | None:
    """Why the picture shows light the task does not ask for rather than the asked
    lights', or None: on some object, in some channel, the world and the lights that meet
    no light spec add more than `WORLD_MAX` times the asked lights' light (`UNASKED_STOPS`
    brighter; and more than `WORLD_FLOOR`). A spec without lights asks for no light to
    outshine. Nor may it take the asked light away: under a quarter of it left
    (`UNASKED_STOPS` darker, and over `DARKEN_FLOOR` gone) in some channel fails too."""
    if not spec.lights:
        return None
    found, taken = [], []
    for name in names:
        split = _light_at(truth, [name])
        if split is None:
            continue
        everything, lights = split
        for c in range(3):
            extra, own = everything[c] - lights[c], lights[c]
            if extra > WORLD_FLOOR and extra > WORLD_MAX * own:
                found.append((extra / max(own, 1e-6), name, "RGB"[c]))
            if -extra > DARKEN_FLOOR and everything[c] * 2.0**UNASKED_STOPS < own:
                taken.append((everything[c] / max(own, 1e-6), name, "RGB"[c]))
    if found:
        times, name, channel = max(found)
        return (
            f"light the task does not ask for (the world, lights no spec states) lights "
            f"{name!r} {times:.1f} times as much as the asked lights ({channel}; at most "
            f"{WORLD_MAX:g}, {UNASKED_STOPS:g} stops brighter): it washes out or tints the "
            "asked colours"
        )
    if taken:
        share, name, channel = min(taken)
        return (
            f"what the task does not ask for (a world volume, a sample clamp) leaves {name!r} "
            f"{share:.2f} of the asked lights' light ({channel}; at least "
            f"{2.0**-UNASKED_STOPS:g}, {UNASKED_STOPS:g} stops darker): it tints or darkens "
            "the asked colours"
        )
    return None


def _outshone(
    truth: dict[str, Any], names: list[str], found: dict[str, Any] | None, asked: set[str]
) -> str | None:
    """Why the material's unasked emission outshines the light its objects get, or None."""
    if found is None or asked & {"Emission Strength", "Emission Color"}:
        return None
    principled = found.get("principled") or {}
    strength = _unlinked(principled, "Emission Strength")
    colour = _unlinked(principled, "Emission Color")
    split = _light_at(truth, names)
    if split is None or not isinstance(strength, int | float) or not isinstance(colour, list):
        return None
    if not strength * max((float(c) for c in colour[:3]), default=0.0) > GLOW_FLOOR:
        return None
    try:
        glow = max(float(strength) * float(c) / max(lit, 1e-6)
                   for c, lit in zip(colour[:3], split[0], strict=False))  # fmt: skip
    except (TypeError, ValueError):
        return None
    if glow > GLOW_MAX_LIT:
        return (
            f"its emission is {glow:.1f} times the light its objects get: the surface "
            "shows its own light, not its colour"
        )
    return None


VIEW_SAT_KEEP = 0.65
"""Least share of an object's saturation (HSV, display RGB) the scene's colour management
must keep against Blender's default view of the same render (`_truth.default_view_render`).
Measured on the red cube: exposure +1 keeps 0.87, +2 0.70, +3 (or film exposure 8) 0.52
(salmon), gamma 2 0.70; the Standard, Filmic and Low Contrast views 0.86-0.92 (2026-12-05)."""
VIEW_HUE_MAX = 20.0
"""Most an object's hue (degrees, HSV) may move against the default view: a white balance
of 4000 K turns the green die teal (31 degrees), 5000 K moves the red cube 5."""
VIEW_TINT_MAX = 0.25
"""Most saturation the view may add to an object the default view shows nearly grey."""
VIEW_SAT_MIN = 0.2
"""Saturation (HSV) under which the default view shows an object grey (its hue unread)."""
VIEW_LIGHTNESS_MAX = 30.0
"""Most an object's lightness (CIE L*, 0-100, of its mean display colour) may move against
the default view: a colour is its lightness too (film exposure 8 with exposure +3 showed
the snowman's coal hat mid-grey, L* +65). Exposure +1 moves the red cube +12, +2 +25
(two stops, as much as `UNASKED_STOPS` of unasked light), +3 +37; gamma 2 +19, gamma 0.5
-17, exposure -1 the dice -10 to -14 (2026-12-05)."""


def _lightness(rgb: list[float]) -> float:
    """CIE L* (0-100) of a display (sRGB-encoded) colour."""
    linear = [
        c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
        for c in (min(1.0, max(0.0, float(v))) for v in rgb[:3])
    ]
    y = 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]
    return 116.0 * y ** (1.0 / 3.0) - 16.0 if y > 216 / 24389 else y * 24389 / 27


def _hsv(rgb: list[float]) -> tuple[float, float]:
    """(hue in degrees, saturation) of a display RGB colour."""
    import colorsys

    hue, sat, _ = colorsys.rgb_to_hsv(*(min(1.0, max(0.0, float(c))) for c in rgb[:3]))
    return hue * 360.0, sat


def view_shift(shown: list[float], default: list[float]) -> str | None:
    """Why the colour `shown` (display RGB through the scene's view) is not the colour the
    default view shows of the same render, or None: it moves the lightness more than
    `VIEW_LIGHTNESS_MAX`, keeps under `VIEW_SAT_KEEP` of the saturation, turns the hue more
    than `VIEW_HUE_MAX`, or tints a grey.

        >>> view_shift([0.93, 0.57, 0.54], [0.57, 0.14, 0.11])  # exposure +3: salmon
        'it moves its lightness by +37 L* (at most 30)'
        >>> view_shift([0.73, 0.25, 0.22], [0.57, 0.14, 0.11]) is None  # exposure +1
        True
    """
    (hue, sat), (hue0, sat0) = _hsv(shown), _hsv(default)
    lighter = _lightness(shown) - _lightness(default)
    if abs(lighter) > VIEW_LIGHTNESS_MAX:
        return f"it moves its lightness by {lighter:+.0f} L* (at most {VIEW_LIGHTNESS_MAX:g})"
    if sat0 < VIEW_SAT_MIN:
        if sat > sat0 + VIEW_TINT_MAX:
            return f"it tints a grey (saturation {sat:.2f} for {sat0:.2f})"
        return None
    if sat < VIEW_SAT_KEEP * sat0:
        return f"it keeps {sat / sat0:.2f} of the saturation (at least {VIEW_SAT_KEEP:g})"
    turn = abs((hue - hue0 + 180.0) % 360.0 - 180.0)
    if sat >= VIEW_SAT_MIN and turn > VIEW_HUE_MAX:
        return f"it turns the hue {turn:.0f} degrees (at most {VIEW_HUE_MAX:g})"
    return None


def _view_shifted(truth: dict[str, Any], names: list[str]) -> str | None:
    """Why the scene's colour management shows the objects `names` in other colours than
    the default view does (`view_shift`), or None."""
    for name in names:
        shown = truth.get("objects", {}).get(name) or {}
        colour, default = shown.get("colour"), shown.get("colour_default_view")
        if not colour or not default:
            continue
        why = view_shift(colour, default)
        if why:
            return (
                f"the view's colour management shows {name!r} unlike its colour: {why} "
                "of Blender's default view (exposure, gamma, a look or view transform)"
            )
    return None


AS_READ_MAX_SHIFT = 0.1
"""How far (display RGB, 0-1, per channel) an object's mean colour may move between the
render and the render with its materials as the dump reads them."""


def _rendered_unlike_read(truth: dict[str, Any], names: list[str]) -> str | None:
    """Why the objects showing a material render unlike its values, or None: something the
    dump does not read (a sheen, a thin film, a displacement, a volume) moved their colour."""
    for name in names:
        shown = truth.get("objects", {}).get(name) or {}
        colour, read = shown.get("colour"), shown.get("colour_as_read")
        if not colour or not read:
            continue
        shift = max(abs(float(a) - float(b)) for a, b in zip(colour, read, strict=False))
        if shift > AS_READ_MAX_SHIFT:
            return (
                f"{name!r} renders {shift:.2f} away from its material's values: "
                "something they do not hold changes its colour"
            )
    return None


def _object_of(what: str, spec: Any) -> str | None:
    for name in spec.objects:
        if what == f"object {name!r}" or what.startswith(f"{name}."):
            return name
    return None


def _unseen(name: str, truth: dict[str, Any], dump: dict[str, Any]) -> bool:
    """A named mesh the render shows in no pixel, while the camera shows some object (a
    camera that sees nothing already fails as such)."""
    found = next((o for o in dump.get("objects", []) if o.get("name") == name), None)
    if found is None or found.get("type") != "MESH" or found.get("hidden"):
        return False
    return bool(truth.get("objects")) and name not in truth["objects"]


def _material_of(what: str, spec: Any) -> str | None:
    for name in spec.materials:
        if what == f"material {name!r}" or what.startswith(f"{name}["):
            return name
    return None
