"""The warm form: Python forked from a pre-imported server, under the same limits."""

from __future__ import annotations

import pytest

from rewardsmith.verifiers.sandbox import ForkServer, LimitHit, Limits, Program, run_python

pytestmark = pytest.mark.sandbox

QUICK = Limits(wall_s=3, cpu_s=2, memory_bytes=192 << 20, processes=16)


@pytest.mark.parametrize(
    ("code", "hit"),
    [
        ("import time\ntime.sleep(60)", LimitHit.WALL_TIME),
        ("x = []\nwhile True:\n    x.append(bytearray(1 << 22))", LimitHit.MEMORY),
        ("import sys\nwhile True:\n    sys.stdout.write('z' * 4096)", LimitHit.OUTPUT),
        (
            "import os\nwhile True:\n    try:\n        os.fork()\n"
            "    except OSError:\n        pass",
            LimitHit.PROCESSES,
        ),
    ],
    ids=["sleep", "memory", "flood", "fork-bomb"],
)
def test_warm_python_meets_the_same_limits(code: str, hit: LimitHit) -> None:
    r = run_python(code, limits=QUICK)
    assert r.limit_hit is hit, r
    assert r.error is None and not r.ok


@pytest.mark.slow
def test_warm_python_busy_loop_ends_by_cpu_or_wall_limit() -> None:
    r = run_python("while True:\n    pass", limits=QUICK.replace(wall_s=8))
    assert r.limit_hit in (LimitHit.CPU_TIME, LimitHit.WALL_TIME), r


def test_exit_codes_and_exceptions_are_reported() -> None:
    assert run_python("raise SystemExit(3)").exit_code == 3
    r = run_python("raise ValueError('boom')")
    assert r.exit_code == 1 and b"ValueError: boom" in r.stderr


@pytest.mark.blender
@pytest.mark.slow
def test_bpy_preloaded_once_runs_a_script_and_hands_back_a_mesh() -> None:
    pytest.importorskip("bpy")
    script = (
        "import bpy\n"
        "bpy.ops.wm.read_factory_settings(use_empty=True)\n"
        "bpy.ops.mesh.primitive_cube_add(size=2)\n"
        "bpy.ops.wm.stl_export(filepath='out.stl')\n"
    )
    limits = Limits(wall_s=120, cpu_s=120, memory_bytes=2 << 30, processes=64)
    with ForkServer(preload=("bpy",)) as blender:
        first, second = (
            blender.run_programs([Program(python=script, collect=("out.stl",), limits=limits)])[0]
            for _ in range(2)
        )
    for r in (first, second):
        assert r.exit_code == 0 and r.error is None, r
        assert r.files["out.stl"].startswith(b"solid") or len(r.files["out.stl"]) > 84


def test_a_preload_from_the_project_itself_is_found() -> None:
    """The server starts without the site module; one that preloads runs the .pth files
    (this checkout is an editable install, found through one)."""
    code = "import sys; print('rewardsmith.verifiers.code.values' in sys.modules)"
    r = run_python(code, preload=("rewardsmith.verifiers.code.values",))
    assert r.error is None and r.stdout == b"True\n", r
