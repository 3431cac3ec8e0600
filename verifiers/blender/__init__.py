"""Blender scene verification: run a model's bpy script in the sandbox, check the scene.

- `BlenderScene` (``blender_scene``): script (or trajectory of scripts) + `SceneSpec` ->
  verdict with per-stage scores (geometry, materials, lighting, render).
- `SceneSpec` and `check_scene`: the spec format and the trusted checks on a scene dump.
- `psnr`, `ssim`: preview image comparison.

Importing this package does not import `bpy`: Blender only runs in sandboxed children.
See docs/3d.md.
"""

from rewardsmith.verifiers.blender.check import STAGES, Check, check_scene, stage_scores
from rewardsmith.verifiers.blender.image import psnr, ssim
from rewardsmith.verifiers.blender.scene import BlenderScene, extract_script, staged_score
from rewardsmith.verifiers.blender.spec import SceneSpec

__all__ = [
    "STAGES",
    "BlenderScene",
    "Check",
    "SceneSpec",
    "check_scene",
    "extract_script",
    "psnr",
    "ssim",
    "stage_scores",
    "staged_score",
]
