"""References never reach the jail after a regular install: a wheel of this project is
built and installed into a scratch venv, and from there a tool call (math_tool) and a
repair candidate (code_repair) try to read the bundled task files, which hold the answers.

The scratch venv is made without pip and gets this venv's site-packages through a .pth
line (its dependencies, offline); the editable install's finder is not loaded there (a
path line in a .pth is not a site dir), so `rewardsmith` is the wheel's copy in the scratch
venv's own site-packages, under /tmp, a folder the jail binds.
"""

from __future__ import annotations

import json
import subprocess
import sys
import sysconfig
import tarfile
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.sandbox]

ROOT = Path(__file__).resolve().parents[2]

_ATTACK = r"""
import json, sys
from rewardsmith.environments.code_repair import CODE_REPAIR_TASKS, CodeRepair
from rewardsmith.environments.math_tool import MATH_TASKS, python

files = sorted(str(p) for p in MATH_TASKS.parent.glob("*.jsonl"))
read = (
    "import sys\n"
    f"for p in {files!r}:\n"
    "    try: print('READ', open(p).read()[:60])\n"
    "    except Exception as e: print('DENIED', type(e).__name__)\n"
)
tool = python(read)
env = CodeRepair()
task = json.loads(CODE_REPAIR_TASKS.read_text().splitlines()[0])
state, _ = env.reset(task)
candidate = (
    f"def {task['visible']['fn']}(*args):\n"
    "    try: return open(%r).read()[:60]\n"
    "    except Exception as e: return type(e).__name__\n" % str(CODE_REPAIR_TASKS)
)
repair = env.step(state, candidate).observation
compiled = next(json.loads(x) for x in CODE_REPAIR_TASKS.read_text().splitlines()
                if '"c-digit-sum"' in x)
state, _ = env.reset(compiled)
peek = (
    "#include <stdio.h>\n#include <unistd.h>\n"
    "__attribute__((constructor)) static void peek(void) {\n"
    f"    FILE *f = fopen({json.dumps(str(CODE_REPAIR_TASKS))}, \"r\");\n"
    "    fputs(f ? \"READ\\n\" : \"DENIED\\n\", stderr);\n    _exit(3);\n}\n"
) + compiled["solution"]
c_repair = env.step(state, peek).observation
env.close()
print(json.dumps({"files": files, "installed_at": str(MATH_TASKS), "tool": tool,
                  "repair": repair, "c_repair": c_repair,
                  "heads": [open(p).read()[:30] for p in files]}))
"""


def _source_tree(dest: Path) -> None:
    """The working tree's tracked and new files (what a release would package)."""
    names = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    archive = dest.with_suffix(".tar")
    with tarfile.open(archive, "w") as tar:
        for name in names:
            if (ROOT / name).is_file():
                tar.add(ROOT / name, arcname=name)
    with tarfile.open(archive) as tar:
        tar.extractall(dest, filter="data")


def _pip(*args: str) -> None:
    done = subprocess.run([sys.executable, "-m", "pip", *args], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"pip could not build or install offline: {done.stderr[-500:]}")


def test_a_wheel_install_keeps_the_bundled_references_out_of_the_jail(tmp_path: Path) -> None:
    source, wheels, venv = tmp_path / "src", tmp_path / "wheels", tmp_path / "venv"
    _source_tree(source)
    _pip(
        "wheel",
        "--no-deps",
        "--no-build-isolation",
        "--no-index",
        "-q",
        "-w",
        str(wheels),
        str(source),
    )
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    Path(site, "_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    _pip(
        "--python",
        str(python),
        "install",
        "--no-deps",
        "--no-index",
        "-q",
        *map(str, wheels.glob("*.whl")),
    )

    done = subprocess.run(
        [python, "-c", _ATTACK], cwd=tmp_path, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["installed_at"].startswith(site), seen["installed_at"]  # the wheel's copy
    assert len(seen["files"]) >= 3 and all(h.startswith('{"') for h in seen["heads"])
    assert "READ" not in seen["tool"] and seen["tool"].count("DENIED") == len(seen["files"])
    repair = seen["repair"]
    assert "Error" in repair, repair  # the candidate got an exception, not the file
    c_repair = seen["c_repair"]  # a C candidate, built with its harness: fopen fails
    assert "DENIED" in c_repair and "READ" not in c_repair, c_repair
    for head in seen["heads"]:
        assert head[:20] not in seen["tool"] and head[:20] not in repair
