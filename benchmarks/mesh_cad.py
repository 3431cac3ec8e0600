"""Part (c) of `benchmarks/mesh.py`: CadQuery scripts, warm CAD server against a fresh
interpreter per phase (see that file's docstring). Run through `benchmarks/mesh.py`."""

from __future__ import annotations

import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from side_by_side import agreement, interleaved, row, timed_map

import rewardsmith.verifiers.mesh.cad as cad_module
from rewardsmith.datasets.scenes3d.parts import PARTS
from rewardsmith.verifiers.cad import CadRun, cad_python, run_cad
from rewardsmith.verifiers.cad.run import venv_of
from rewardsmith.verifiers.mesh import MeshCompare
from rewardsmith.verifiers.mesh.cad import CadCode
from rewardsmith.verifiers.sandbox import Limits, Program, SandboxResult, run
from rewardsmith.verifiers.types import Sample, Verdict

EXAMPLES = Path(__file__).resolve().parents[1].parent / "shared/data/cad/cadquery-examples"
LIMITS = Limits(wall_s=120, cpu_s=120, memory_bytes=2 << 30)


def fresh_phase(program: Program) -> SandboxResult:
    """One phase in a fresh interpreter of the CAD venv, in the same jail as the warm one."""
    python = cad_python()
    assert python is not None and program.python is not None
    return run(
        [python, "-I", "-c", program.python],
        files=program.files,
        readonly_files=program.readonly_files,
        collect=program.collect,
        limits=program.limits,
        binds=(venv_of(python),),
    )


def fresh_run_cad(script: str, **kwargs: Any) -> CadRun:
    """`run_cad` with each phase in a fresh interpreter."""
    return run_cad(script, execute=fresh_phase, **kwargs)


_SIDE = threading.local()
_WARM_RUN_CAD = cad_module.run_cad


def _dispatch(script: str, **kwargs: Any) -> CadRun:
    """`cad_code`'s runner: the fresh one in a thread inside `fresh_runner`, else warm."""
    runner = fresh_run_cad if getattr(_SIDE, "fresh", False) else _WARM_RUN_CAD
    return runner(script, **kwargs)


cad_module.run_cad = _dispatch  # type: ignore[assignment]


@contextmanager
def fresh_runner() -> Iterator[None]:
    """In this thread, `cad_code` runs each phase in a fresh interpreter."""
    _SIDE.fresh = True
    try:
        yield
    finally:
        _SIDE.fresh = False


def cad_samples(folder: Path) -> list[Sample]:
    """The 27 examples and the generated parts with their variants, each against the
    reference made by its base script (variants against their part's)."""
    pairs: list[tuple[str, str, str]] = []
    for path in sorted(EXAMPLES.glob("*.py")):
        text = path.read_text()
        pairs.append((path.stem, text, text))
    for part in PARTS:
        base = part.script()
        pairs.append((part.name, base, base))
        pairs += [(f"{part.name}-{k}", v, base) for k, v in part.variant_scripts().items()]
    samples = []
    references: dict[str, dict[str, str]] = {}
    for name, candidate, reference in pairs:
        if reference not in references:
            made = run_cad(reference, kind="cadquery", limits=LIMITS)
            assert made.mesh is not None and made.brep is not None, name
            target = folder / f"ref_{len(references)}"
            target.mkdir()
            (target / "ref.stl").write_bytes(made.mesh)
            (target / "ref.brep").write_bytes(made.brep)
            references[reference] = {
                "mesh": str(target / "ref.stl"),
                "brep": str(target / "ref.brep"),
            }
        ref = {**references[reference], "components": None}
        samples.append(Sample(id=name, completion=candidate, reference=ref))
    return samples


def runner_only(samples: list[Sample], workers: int) -> list[str]:
    """The two sandboxed phases alone: what the warm server changes."""

    def warm(sample: Sample) -> Verdict:
        run_cad(sample.completion_text, kind="cadquery", limits=LIMITS)
        return Verdict.passed("runner", "1")

    def fresh(sample: Sample) -> Verdict:
        fresh_run_cad(sample.completion_text, kind="cadquery", limits=LIMITS)
        return Verdict.passed("runner", "1")

    _, warm_s, _, fresh_s = interleaved(warm, fresh, samples, workers)
    n = len(samples)
    return [
        row("runner alone, warm server", warm_s, n),
        row("runner alone, fresh interpreter per phase", fresh_s, n),
        f"| ratio | **{fresh_s / warm_s:.2f}x** | | |",
    ]


def spread(samples: list[Sample], n: int) -> list[Sample]:
    """`n` samples spread evenly over the list (all of them when `n` is 0 or too large)."""
    if n <= 0 or n >= len(samples):
        return samples
    return [samples[round(k * len(samples) / n)] for k in range(n)]


def bench_cad(workers: int, n: int = 0, runner: bool = True) -> list[str]:
    if cad_python() is None or not EXAMPLES.is_dir():
        return ["### (c) CadQuery: skipped (no .venv-cad or no examples)", ""]
    with tempfile.TemporaryDirectory(prefix="bench-cad-") as scratch:
        samples = spread(cad_samples(Path(scratch)), n)
        verifier = CadCode(kind="cadquery", wall_s=120.0, compare=MeshCompare(preset="cadrille"))
        timed_map(verifier, samples[:2], workers)  # the warm server and workers, started

        def fresh(sample: Sample) -> Verdict:
            with fresh_runner():
                return verifier(sample)

        warm_v, warm_s, fresh_v, fresh_s = interleaved(verifier, fresh, samples, workers)
        lines = [
            f"### (c) CadQuery scripts, {len(samples)} samples, {workers} workers, interleaved",
            "",
            "| runner | total s | samples/s | per sample ms |",
            "| --- | ---: | ---: | ---: |",
            *(runner_only(samples, workers) if runner else []),
            row("end to end (`cad_code`, cadrille preset), warm server", warm_s, len(samples)),
            row("end to end, fresh interpreter per phase", fresh_s, len(samples)),
            "",
            f"End-to-end ratio: **{fresh_s / warm_s:.2f}x**. Same verdicts (status, score, "
            f"failure): {agreement(warm_v, fresh_v)}/{len(samples)}. Statuses: "
            f"{sorted({v.status.value for v in warm_v})}.",
            "",
        ]
    return lines
