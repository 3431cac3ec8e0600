"""The scene spec: what a Blender task asks for, checkable against a scene dump.

A spec is JSON or YAML validated by pydantic (unknown keys are errors, so a typo fails
loudly). Every field is optional: a spec states only what the task fixes. Example::

    {
      "objects": {"Table": {"type": "MESH", "dimensions": [2, 1, 0.8],
                            "modifiers": ["BEVEL"], "materials": ["Wood"]}},
      "materials": {"Wood": {"inputs": {"Base Color": [0.4, 0.2, 0.1], "Roughness": 0.6}}},
      "lights": [{"type": "SUN", "energy": 3.0, "color": [1, 1, 1]}],
      "camera": {"location": [6, -6, 4], "look_at": [0, 0, 0], "lens": 50},
      "render": {"engine": "CYCLES", "resolution_x": 640, "resolution_y": 480},
      "image": {"reference": "preview.png", "min_psnr": 25, "min_ssim": 0.9},
      "tolerances": {"length": 0.01, "color": 0.02}
    }

Lengths are world-space (after parenting and modifiers); object `dimensions` are the
evaluated object's bounding-box size; `bbox_min`/`bbox_max` its world-space corners.
Material `inputs` name Principled BSDF inputs; colours compare on the channels given.
Each light spec must be met by a different light (type, energy, colour, location within a
distance, direction or look-at within an angle). The camera's look-at is checked as the
angle between its view direction and the direction to the point; a camera that faces away
from the scene's objects fails as such. `image.views` adds renders from other cameras.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "CameraSpec",
    "ImageSpec",
    "LightSpec",
    "MaterialSpec",
    "ObjectSpec",
    "RenderSpec",
    "SceneSpec",
    "Tolerances",
    "ViewSpec",
]

Vec3 = Annotated[list[float], Field(min_length=3, max_length=3)]
Colour = Annotated[list[float], Field(min_length=3, max_length=4)]


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Tolerances(_Strict):
    length: float = Field(default=0.01, gt=0)
    """Absolute, in scene units, per coordinate."""
    color: float = Field(default=0.02, gt=0)
    """Absolute, per channel (linear RGB in [0, 1])."""
    scalar: float = Field(default=0.02, gt=0)
    """Absolute, for other material inputs (metallic, roughness, ...)."""
    energy_rel: float = Field(default=0.05, gt=0)
    """Relative, for light energy (watts)."""
    angle_deg: float = Field(default=2.0, gt=0)
    """Camera and light look-at and direction: largest angle between the view (or light)
    direction and the one asked for."""
    position: float = Field(default=0.05, gt=0)
    """Light location: largest distance from the position asked for."""
    lens_mm: float = Field(default=0.5, gt=0)


class ObjectSpec(_Strict):
    type: str | None = None
    """Blender object type: MESH, LIGHT, CAMERA, CURVE, EMPTY, ..."""
    location: Vec3 | None = None
    dimensions: Vec3 | None = None
    bbox_min: Vec3 | None = None
    bbox_max: Vec3 | None = None
    modifiers: list[str] | None = None
    """Modifier types that must be present (e.g. ["BEVEL", "SUBSURF"])."""
    materials: list[str] | None = None
    """Material names that must be assigned to the object."""


class MaterialSpec(_Strict):
    inputs: dict[str, float | Colour] = Field(default_factory=dict)
    """Principled BSDF input name -> expected value (unlinked)."""


class LightSpec(_Strict):
    name: str | None = None
    type: str | None = None
    """POINT, SUN, SPOT or AREA."""
    energy: float | None = None
    color: Vec3 | None = None
    location: Vec3 | None = None
    """World position, within `tolerances.position` (a distance)."""
    direction: Vec3 | None = None
    """Where the light points (its local -Z in the world), within `tolerances.angle_deg`."""
    look_at: Vec3 | None = None
    """A point the light must point at, within `tolerances.angle_deg`."""


class CameraSpec(_Strict):
    location: Vec3 | None = None
    look_at: Vec3 | None = None
    direction: Vec3 | None = None
    """The view direction (the camera's local -Z in the world), within `angle_deg`."""
    lens: float | None = None
    """Focal length in mm."""


class RenderSpec(_Strict):
    engine: str | None = None
    resolution_x: int | None = None
    resolution_y: int | None = None
    samples: int | None = None


class ViewSpec(_Strict):
    location: Vec3
    look_at: Vec3
    reference: str
    """Path of this view's reference render (PNG), made with the same settings."""


class ImageSpec(_Strict):
    reference: str
    """Path of the reference preview (PNG), rendered by the same settings."""
    views: list[ViewSpec] = Field(default_factory=list, max_length=6)
    """More views to render and compare (a 50 mm camera at `location` aimed at `look_at`):
    a scene right from the scene camera can be a flat cut-out from another."""
    size: int = Field(default=64, ge=8, le=512)
    """Preview width in pixels (height follows the scene's aspect)."""
    samples: int = Field(default=16, ge=1, le=256)
    min_psnr: float = 30.0
    min_ssim: float = 0.9


class SceneSpec(_Strict):
    objects: dict[str, ObjectSpec] = Field(default_factory=dict)
    materials: dict[str, MaterialSpec] = Field(default_factory=dict)
    lights: list[LightSpec] = Field(default_factory=list)
    camera: CameraSpec | None = None
    render: RenderSpec | None = None
    image: ImageSpec | None = None
    tolerances: Tolerances = Tolerances()
