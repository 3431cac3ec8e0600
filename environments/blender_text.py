"""The `blender_scene` environment's observations in words: a scene dump and a render.

Both read only trusted values: the dump the inspection child wrote (`blender_workbench`)
and the PNG the render child wrote. Names a scene holds are the model's own text: they are
cut short and shown with ``repr`` so a name cannot pose as a line of the description.

    >>> print(describe_scene({"objects": [], "camera": None}))
    objects: none
    materials: none
    lights: none
    camera: none (nothing can render)
    render: {}
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rewardsmith.verifiers.blender.image import read_image

__all__ = ["describe_render", "describe_scene"]

_SHOWN = 40
"""Objects, materials and lights listed at most."""


def _name(value: Any) -> str:
    return repr(str(value)[:60])


def _xyz(values: Any) -> str:
    try:
        return "(" + ", ".join(f"{float(v):.3g}" for v in values) + ")"
    except (TypeError, ValueError):
        return "(?)"


def _object(o: dict[str, Any]) -> str:
    line = (
        f"  {_name(o.get('name'))} {o.get('type')} at {_xyz(o.get('location'))}, "
        f"size {_xyz(o.get('dimensions'))}"
    )
    if o.get("modifiers"):
        line += ", modifiers " + ", ".join(str(m.get("type")) for m in o["modifiers"][:8])
    if o.get("materials"):
        line += ", materials " + ", ".join(_name(m) for m in o["materials"][:8])
    if o.get("hidden"):
        line += f" [not rendered: {o['hidden']}]"
    return line


def _material(m: dict[str, Any]) -> str:
    principled = m.get("principled")
    if not principled:
        return f"  {_name(m.get('name'))}: {m.get('surface')}"
    values = []
    for key, entry in principled.items():
        value = entry.get("value")
        shown = _xyz(value[:3]) if isinstance(value, list) else f"{value:.3g}"
        values.append(f"{key.lower()} {'linked' if entry.get('linked') else shown}")
    return f"  {_name(m.get('name'))}: " + ", ".join(values)


def _light(light: dict[str, Any]) -> str:
    energy = light.get("energy")
    line = (
        f"  {_name(light.get('name'))} {light.get('type')} {energy if energy is not None else '?'}"
        f" W, colour {_xyz(light.get('color'))}, at {_xyz(light.get('location'))}, pointing "
        f"{_xyz(light.get('direction'))}"
    )
    return line + (f" [not rendered: {light['hidden']}]" if light.get("hidden") else "")


def _section(title: str, lines: list[str]) -> list[str]:
    if not lines:
        return [f"{title}: none"]
    more = [f"  ... and {len(lines) - _SHOWN} more"] if len(lines) > _SHOWN else []
    return [f"{title}:", *lines[:_SHOWN], *more]


def describe_scene(dump: dict[str, Any]) -> str:
    """The scene as the checks read it, in lines."""
    out = _section("objects", [_object(o) for o in dump.get("objects") or []])
    out += _section("materials", [_material(m) for m in dump.get("materials") or []])
    out += _section("lights", [_light(x) for x in dump.get("lights") or []])
    cam = dump.get("camera")
    if cam is None:
        out.append("camera: none (nothing can render)")
    else:
        out.append(
            f"camera: {_name(cam.get('name'))} at {_xyz(cam.get('location'))}, looking along "
            f"{_xyz(cam.get('direction'))}, {cam.get('lens')} mm {cam.get('projection')}; in "
            f"frame: {', '.join(_name(n) for n in (cam.get('in_frame') or [])[:20]) or 'nothing'}"
        )
    render = dump.get("render") or {}
    keys = ("engine", "resolution_x", "resolution_y", "resolution_percentage", "exposure")
    out.append("render: " + str({k: render[k] for k in keys if k in render}))
    return "\n".join(out)


def describe_render(png: bytes, dump: dict[str, Any]) -> str:
    """A render in words: its size, brightness, how much is black or blown out, what is in
    frame (from the scene's truth render, per object)."""
    image = read_image(png)
    luminance = image @ np.array([0.2126, 0.7152, 0.0722])
    height, width = luminance.shape
    black = float((luminance < 0.02).mean())
    blown = float((luminance > 0.98).mean())
    truth = dump.get("truth") or {}
    seen = sorted((truth.get("objects") or {}).items(), key=lambda kv: -int(kv[1].get("pixels", 0)))
    shown = ", ".join(
        f"{_name(name)} {100 * int(v.get('pixels', 0)) / max(1, truth_area(truth)):.0f}%"
        for name, v in seen[:12]
    )
    verdict = " The render is black." if black > 0.99 else ""
    return (
        f"rendered {width} x {height} px (Cycles, 16 samples): mean brightness "
        f"{float(luminance.mean()):.3f} (0-1), {100 * black:.0f}% of pixels near black, "
        f"{100 * blown:.0f}% blown out.{verdict} Objects in the picture (share of the "
        f"frame): {shown or 'none'}."
    )


def truth_area(truth: dict[str, Any]) -> int:
    size = truth.get("size") or [0, 0]
    try:
        return int(size[0]) * int(size[1])
    except (TypeError, ValueError, IndexError):
        return 0
