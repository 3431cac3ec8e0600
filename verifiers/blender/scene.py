"""`blender_scene`: run a model's bpy script headless and check the scene it builds.

The completion is a Python script for Blender (a fenced ```python block is taken out of
surrounding prose), or a trajectory whose steps are scripts run one after another on the
same scene. The reference is a `SceneSpec` (a mapping, or the path of a JSON file).

The script runs in the sandbox from empty factory settings (see `run.py`); a Python error,
a syntax error, a timeout, a memory blow-up or a script that kills its own process each
give a verdict naming it. Then the saved scene is checked (see `check.py`), and when the
spec has an `image`, a small deterministic Cycles preview is compared with the reference
(`image.py`).

**Stages and score.** Checks are grouped in stages: geometry, materials, lighting, render.
Each stage's score is the fraction of its checks passed. With ``staging="mean"`` the score is
the mean over the stages the spec uses; with ``staging="sequential"`` a stage counts only
when every earlier stage is complete, ``score = (1/S) sum_i s_i prod_{j<i} [s_j = 1]``, so a
policy is paid for lighting only once its geometry and materials are right. For a
trajectory, the evidence has the stage scores after every step (``per_step``) and the
staged score after every step (``per_step_score``): the potential a grader can shape with.

    >>> BlenderScene().name
    'blender_scene'
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import ValidationError

from rewardsmith.verifiers.blender.check import STAGES, Check, check_scene, stage_scores
from rewardsmith.verifiers.blender.image import psnr, read_image, ssim
from rewardsmith.verifiers.blender.run import BlenderRun, describe_failure, run_scripts
from rewardsmith.verifiers.blender.spec import SceneSpec
from rewardsmith.verifiers.exploits import Exploit
from rewardsmith.verifiers.protocol import Cost
from rewardsmith.verifiers.sandbox import Limits, SandboxResult
from rewardsmith.verifiers.types import Failure, Sample, Status, Verdict

__all__ = ["BlenderScene", "extract_script", "staged_score"]

_FENCE = re.compile(r"```(?:python|py)?[ \t]*\n(.*?)```", re.DOTALL)


def extract_script(text: str) -> str:
    """The first fenced Python block, or the whole text when there is none."""
    match = _FENCE.search(text)
    return match.group(1) if match else text


def staged_score(scores: dict[str, float], staging: str) -> float:
    """Combine stage scores (see the module docstring)."""
    ordered = [scores[s] for s in STAGES if s in scores]
    if not ordered:
        return 0.0
    if staging == "mean":
        return sum(ordered) / len(ordered)
    total, unlocked = 0.0, True
    for value in ordered:
        total += value if unlocked else 0.0
        unlocked = unlocked and value >= 1.0
    return total / len(ordered)


@dataclass(frozen=True)
class BlenderScene:
    """Run a Blender script in the sandbox and check its scene against a spec."""

    name: ClassVar[str] = "blender_scene"
    version: ClassVar[str] = "3"
    cost: ClassVar[Cost] = Cost.SANDBOX
    takes_structured_reference: ClassVar[bool] = True  # JSON-text references are decoded

    staging: Literal["mean", "sequential"] = "mean"
    """How stage scores combine (see the module docstring)."""
    wall_s: float = 30.0
    """Wall-clock limit for each sandboxed phase (all steps together, then inspection)."""
    memory_bytes: int = 2 << 30
    """Memory limit of each phase's whole process tree."""
    max_script_chars: int = 200_000
    max_steps: int = 8

    def __post_init__(self) -> None:
        if self.staging not in ("mean", "sequential"):
            raise ValueError(f"staging must be 'mean' or 'sequential', not {self.staging!r}")

    def exploits(self, sample: Sample) -> Iterator[Exploit]:
        """Adversarial rewrites of a right scene script (see `exploits.py`)."""
        from rewardsmith.verifiers.blender.exploits import blender_exploits

        spec, _ = _load_spec(sample.reference)
        if not isinstance(spec, str):
            yield from blender_exploits(sample, spec)

    def __call__(self, sample: Sample) -> Verdict:
        spec, base = _load_spec(sample.reference)
        if isinstance(spec, str):
            return Verdict.errored(self.name, self.version, Failure.BAD_REFERENCE, spec)
        scripts = [extract_script(step.action) for step in sample.steps]
        problem = self._input_problem(scripts)
        if problem:
            return Verdict.failed(
                self.name, self.version, Failure.INPUT_TOO_LARGE, feedback=problem
            )
        size = spec.image.size if spec.image else 0
        samples = spec.image.samples if spec.image else 16
        views = (
            [v.model_dump(include={"location", "look_at"}) for v in spec.image.views]
            if spec.image
            else []
        )
        limits = Limits(wall_s=self.wall_s, cpu_s=self.wall_s, memory_bytes=self.memory_bytes)
        asked = {  # the truth render's light split: the lights that meet these are asked
            "lights": [light.model_dump(exclude_none=True) for light in spec.lights],
            "tolerances": spec.tolerances.model_dump(),
            "objects": sorted(spec.objects),
        }
        outcome = run_scripts(scripts, limits, size, samples, views, asked=asked)
        return self._judge(outcome, spec, base)

    def _input_problem(self, scripts: list[str]) -> str | None:
        if len(scripts) > self.max_steps:
            return f"{len(scripts)} steps; the limit is {self.max_steps}"
        longest = max((len(s) for s in scripts), default=0)
        if longest > self.max_script_chars:
            return f"a script has {longest} characters; the limit is {self.max_script_chars}"
        return None

    def _judge(self, outcome: BlenderRun, spec: SceneSpec, base: Path | None) -> Verdict:
        name, version = self.name, self.version
        if outcome.dumps is None:
            if outcome.inspect is None:  # phase 1 did not leave a scene: the model's run
                failure, message = describe_failure(outcome.build)
                build = outcome.build
                evidence = {
                    "exit_code": build.exit_code,
                    "signal": build.signal,
                    "stdout": _tail(build.stdout),
                    "stderr": _tail(build.stderr),
                }
                if failure is Failure.TIME_LIMIT:
                    return Verdict.timed_out(name, version, failure, message, evidence=evidence)
                return Verdict.errored(name, version, failure, message, evidence=evidence)
            return self._inspection_failed(outcome.inspect)
        per_step = [
            None if d is None else stage_scores(check_scene(d, spec)) for d in outcome.dumps
        ]
        final = outcome.dumps[-1]
        if final is None:
            return Verdict.errored(
                name, version, Failure.VERIFIER_CRASH, "the saved scene did not open"
            )
        checks = check_scene(final, spec)
        if spec.image is not None:
            renders = [("preview image", outcome.preview, spec.image.reference)]
            for k, view in enumerate(spec.image.views):
                got = outcome.views[k] if k < len(outcome.views) else None
                renders.append((f"view {k} image", got, view.reference))
            for what, got, reference in renders:
                image = _image_check(what, got, reference, spec, base)
                if isinstance(image, str):
                    return Verdict.errored(name, version, Failure.BAD_REFERENCE, image)
                checks.append(image)
        return self._score(checks, per_step, final)

    def _inspection_failed(self, inspect: SandboxResult) -> Verdict:
        """Phase 2 failed. A limit it hit is the scene's doing (a script can build a scene
        too heavy to open or render): that is the model's failure, or a model could dodge
        every penalty that way. A sandbox error, or a crash of our code, is ours."""
        name, version = self.name, self.version
        if inspect.limit_hit is not None:
            failure, message = describe_failure(inspect)
            message = f"inspecting the saved scene: {message}"
            if failure is Failure.TIME_LIMIT:
                return Verdict.timed_out(name, version, failure, message)
            return Verdict.errored(name, version, failure, message)
        if inspect.error:
            return Verdict.errored(name, version, Failure.SANDBOX_ERROR, inspect.error)
        detail = inspect.describe() + ": " + _tail(inspect.stderr)
        return Verdict.errored(
            name, version, Failure.VERIFIER_CRASH, "inspection failed: " + detail
        )

    def _score(self, checks: list[Check], per_step: list[Any], dump: dict[str, Any]) -> Verdict:
        scores = stage_scores(checks)
        score = staged_score(scores, self.staging)
        failed = [c for c in checks if not c.ok]
        evidence = {
            "stages": scores,
            "checks": [c.to_dict() for c in checks],
            "per_step": per_step,
            "per_step_score": [
                None if step is None else staged_score(step, self.staging) for step in per_step
            ],
            "scene": {k: dump.get(k) for k in ("objects", "lights", "camera", "render", "truth")},
        }
        feedback = "; ".join(f"{c.what}: {c.detail}" for c in failed[:8])
        if not failed:
            return Verdict.passed(self.name, self.version, evidence=evidence)
        if score <= 0.0:
            return Verdict.failed(self.name, self.version, evidence=evidence, feedback=feedback)
        return Verdict(
            self.name,
            self.version,
            Status.PARTIAL,
            min(score, 0.999),
            evidence=evidence,
            feedback=feedback,
        )


def _tail(data: bytes, n: int = 1500) -> str:
    return data.decode("utf-8", "replace")[-n:]


def _load_spec(reference: Any) -> tuple[SceneSpec | str, Path | None]:
    """The spec and the folder its relative paths are under; or a message saying what is wrong."""
    base = None
    if isinstance(reference, str):
        path = Path(reference)
        try:
            reference, base = json.loads(path.read_text(encoding="utf-8")), path.parent
        except (OSError, ValueError) as exc:
            return f"cannot read the scene spec {path}: {exc}", None
    if not isinstance(reference, dict):
        return "blender_scene needs `reference`: a scene spec mapping or a JSON file path", None
    try:
        return SceneSpec.model_validate(reference), base
    except ValidationError as exc:
        return f"invalid scene spec: {exc}"[:1500], None


def _image_check(
    what: str, preview: bytes | None, reference: str, spec: SceneSpec, base: Path | None
) -> Check | str:
    """One render's comparison, or a message when the reference image is unusable."""
    assert spec.image is not None
    ref_path = Path(reference)
    if not ref_path.is_absolute() and base is not None:
        ref_path = base / ref_path
    try:
        want = read_image(ref_path.read_bytes())
    except Exception as exc:  # missing or corrupt reference: a data problem, not the model's
        return f"cannot read the reference image {ref_path}: {exc}"[:500]
    if preview is None:
        return Check("render", what, False, "nothing was rendered (no active camera?)")
    try:
        got = read_image(preview)
    except Exception as exc:
        return Check("render", what, False, f"unreadable render: {exc}"[:300])
    if got.shape != want.shape:
        return Check("render", what, False, f"size {got.shape[:2]}, reference {want.shape[:2]}")
    p, s = psnr(got, want), ssim(got, want)
    ok = p >= spec.image.min_psnr and s >= spec.image.min_ssim
    return Check("render", what, ok, f"PSNR {p:.2f} dB, SSIM {s:.4f}")
