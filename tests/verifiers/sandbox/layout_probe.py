"""Build a checkout, venv, Python install, data and work dir in a scratch layout, then
score code rows and read the data through the sandbox from there (used by test_layouts).

``python layout_probe.py SCRATCH LAYOUT MODE...`` prints one JSON object, by mode:

- ``tmp``: everything in folders under SCRATCH (a folder under /tmp);
- ``symlink``: the same, reached only through a symbolic link to it;
- ``mount``: on a tmpfs mounted at SCRATCH/real (in a private mount namespace of this
  process, so nothing outside sees it; root only), the Python install bound in beside it.

The checkout is a copy of this one's files; the venv (made by ``-m venv``, no pip) finds
the copy through a copy of the editable install's finder, and its dependencies through a
path to this venv's site-packages. ``--check`` is the part that runs in that venv.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
_CODE_SPEC = (
    "grader:\n  weighted:\n    components:\n      code: {verify: code_tests, tasks: [code]}\n"
)


def copy_checkout(dest: Path) -> None:
    """This checkout's tracked and untracked (not ignored) files, as a user's copy holds."""
    listed = subprocess.run(
        ["git", "-c", "safe.directory=*", "ls-files", "-co", "--exclude-standard", "-z"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        src = REPO / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)


def make_venv(python: str, venv: Path, checkout: Path) -> Path:
    """A venv of `python` whose `rewardsmith` is `checkout`: its python's path."""
    subprocess.run([python, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next(venv.glob("lib/python3*/site-packages"))
    ours = Path(sysconfig.get_paths()["purelib"])
    finder = next(ours.glob("__editable___rewardsmith_*_finder.py"))
    text = finder.read_text().replace(repr(str(REPO))[:-1], repr(str(checkout))[:-1])
    (site / finder.name).write_text(text)
    (site / f"__editable__.{finder.stem}.pth").write_text(
        f"import {finder.stem}; {finder.stem}.install()\n"
    )
    (site / "zz-deps.pth").write_text(f"{ours}\n")  # the dependencies, after the finder
    return venv / "bin" / "python"


def build(scratch: Path, layout: str) -> dict[str, Path]:
    real = scratch / "real"
    real.mkdir()
    python = sys._base_executable  # type: ignore[attr-defined]
    if layout == "mount":
        _private_tmpfs(real)
        py = real / "py"
        py.mkdir()
        _bind(sys.base_prefix, py)
        python = str(py / os.path.relpath(os.path.realpath(python), sys.base_prefix))
    top = real
    if layout == "symlink":
        top = scratch / "link"
        top.symlink_to(real)
    checkout, work, data = top / "checkout", top / "work", top / "data"
    for d in (checkout, work, data):
        d.mkdir()
    copy_checkout(checkout)
    rows = [
        line
        for line in (checkout / "datasets/samples/mixed.jsonl").read_text().splitlines()
        if json.loads(line)["task"] == "code"
    ]
    (work / "code.jsonl").write_text("\n".join(rows) + "\n")
    (work / "code.yaml").write_text(_CODE_SPEC)
    (data / "x.txt").write_text("data under the layout\n")
    venv_python = make_venv(python, top / "venv", checkout)
    return {"python": venv_python, "checkout": checkout, "work": work, "data": data}


def _private_tmpfs(where: Path) -> None:
    sys.path.insert(0, str(REPO / "verifiers" / "sandbox"))
    import _linux as L

    L.unshare(L.CLONE_NEWNS)
    L.mount("none", "/", None, L.MS_REC | L.MS_PRIVATE)
    L.mount("tmpfs", str(where), "tmpfs", 0, "size=256m,mode=0755")


def _bind(source: str, target: Path) -> None:
    import _linux as L

    L.mount(source, str(target), None, L.MS_BIND | L.MS_REC)


def check(checkout: str, data: str) -> dict[str, object]:
    """In the layout's venv, its work dir as cwd: where rewardsmith comes from, the data
    file read by a jailed command and a jailed Python, and the code rows scored."""
    import rewardsmith.verifiers.sandbox as sandbox

    out: dict[str, object] = {"imported_from": sandbox.__file__, "python": sys.base_prefix}
    with sandbox.ForkServer(binds=[data]) as server:
        cat = sandbox.Program(command=("cat", f"{data}/x.txt"))
        py = sandbox.Program(python=f"print(open({data + '/x.txt'!r}).read(), end='')")
        results = [server.run_programs([p])[0] for p in (cat, py)]
    out["data"] = [r.stdout.decode() if r.ok else f"{r.error or r.describe()}" for r in results]
    command = [sys.executable, "-c", "from rewardsmith.cli.main import app; app()", "score"]
    command += ["code.jsonl", "--spec", "code.yaml", "--output", "out.jsonl", "--no-resume"]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    out["score_exit"] = done.returncode
    out["score_output"] = (done.stdout + done.stderr)[-3000:]
    rows = {}
    lines = Path("out.jsonl").read_text().splitlines() if os.path.exists("out.jsonl") else []
    if lines:
        for line in lines:
            row = json.loads(line)
            if "id" in row:
                verdict = row["rewardsmith"]["verdicts"]["code"]
                rows[row["id"]] = [row["rewardsmith"]["value"], verdict["status"], verdict["fault"]]
                rows[row["id"]].append(verdict["evidence"].get("sandbox_mode"))
    out["rows"] = rows
    return out


def main(argv: list[str]) -> None:
    if argv[0] == "--check":
        print(json.dumps(check(argv[1], argv[2])))
        return
    scratch, layout, modes = Path(argv[0]), argv[1], argv[2:]
    paths = build(scratch, layout)
    report = {}
    for mode in modes:
        env = {**os.environ, "REWARDSMITH_SANDBOX_MODE": mode, "PYTHONDONTWRITEBYTECODE": "1"}
        env.pop("PYTHONPATH", None)
        command = [str(paths["python"]), __file__, "--check", str(paths["checkout"])]
        done = subprocess.run(
            [*command, str(paths["data"])],
            cwd=paths["work"],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            report[mode] = {"crashed": done.stderr[-3000:]}
        else:
            report[mode] = json.loads(done.stdout.strip().splitlines()[-1])
    print(json.dumps(report))


if __name__ == "__main__":
    main(sys.argv[1:])
