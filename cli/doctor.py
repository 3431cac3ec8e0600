"""``rewardsmith doctor``: what this machine gives the sandbox, and what will be used.

rewardsmith doctor            # tables; exit 1 if the code verifier cannot run at all
rewardsmith doctor --run      # also build and run a tiny program in each language's jail
rewardsmith doctor --json     # the same facts as one JSON object
"""

from __future__ import annotations

import json
import platform
import shutil
import subprocess
import sys
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

__all__ = ["doctor"]

_VERSION_FLAGS = {"javac": ["-version"], "go": ["version"]}


def _toolchain_version(tool: str, path: str) -> str | None:
    """The first line a toolchain prints about its version (None when it is not there)."""
    found = shutil.which(tool, path=path)
    if found is None:
        return None
    try:
        done = subprocess.run(
            [found, *_VERSION_FLAGS.get(tool, ["--version"])],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"found at {found}, but: {exc}"
    lines = (done.stdout or done.stderr).strip().splitlines()
    return lines[0] if lines else f"found at {found}"


_HELLO = {
    "python": "print(input())",
    "c": '#include <stdio.h>\nint main(){char s[64]; if(scanf("%63s", s)==1) puts(s);}\n',
    "cpp": "#include <iostream>\nint main(){std::string s; std::cin >> s; std::cout << s;}\n",
    "rust": "fn main(){let mut s=String::new(); std::io::stdin().read_line(&mut s).unwrap();"
    ' print!("{}", s);}\n',
    "java": "public class Main{public static void main(String[] a){"
    "System.out.println(new java.util.Scanner(System.in).next());}}\n",
    "javascript": 'process.stdout.write(require("fs").readFileSync(0, "utf8"))\n',
    "go": 'package main\nimport "fmt"\nfunc main(){var s string; fmt.Scan(&s); fmt.Println(s)}\n',
}


def _languages(run: bool) -> list[dict[str, Any]]:
    from rewardsmith.verifiers.code import CodeTests
    from rewardsmith.verifiers.code.languages import LANGUAGES, _path
    from rewardsmith.verifiers.types import Sample

    out = []
    for name, lang in LANGUAGES.items():
        if name == "python":
            version: str | None = f"Python {platform.python_version()} ({sys.executable})"
        else:
            version = _toolchain_version(lang.tool, _path(lang))
        row: dict[str, Any] = {"language": name, "tool": lang.tool, "version": version}
        row["available"] = lang.available and version is not None
        if run and row["available"]:
            ref = {"format": "stdio", "language": name, "cases": [{"input": "ok", "output": "ok"}]}
            verdict = CodeTests()(Sample(id="doctor", completion=_HELLO[name], reference=ref))
            row["jail"] = "ok" if verdict.score == 1.0 else f"{verdict.status}: {verdict.feedback}"
        out.append(row)
    return out


def _sandbox_check() -> dict[str, Any]:
    """Start a fork server in the chosen mode and run one program: the real test."""
    from rewardsmith.verifiers.sandbox import ForkServer, Limits, Program

    probe = "print([l.split()[1] for l in open('/proc/self/status') if l.startswith('Seccomp:')])"
    with ForkServer() as server:
        result = server.run_programs([Program(python=probe, limits=Limits(wall_s=10))])[0]
    if result.error:
        return {"ok": False, "mode": server.mode, "error": result.error}
    return {
        "ok": result.ok,
        "mode": result.mode,
        "seccomp_in_jail": result.stdout.strip() == b"['2']",
        "error": None if result.ok else result.describe(),
    }


def facts(run: bool = False) -> dict[str, Any]:
    """Everything `doctor` reports, as plain data."""
    from rewardsmith.verifiers.sandbox import modes
    from rewardsmith.verifiers.sandbox._seccomp import filter_program

    host = modes.probe(check_user_namespaces=True)
    mode, why = modes.select_mode(host)
    return {
        "machine": {
            "root": host.root,
            "arch": host.arch,
            "kernel": platform.release(),
            "user_namespaces": host.user_namespaces,
            "user_namespaces_error": host.user_namespaces_error or None,
            "cgroup_v1": host.cgroup_v1,
            "cgroup_v2": host.cgroup_v2,
            "cgroup_v2_controllers": list(host.cgroup_v2_controllers),
            "systemd_run": host.systemd_run,
            "seccomp_filter": filter_program() is not None,
        },
        "mode": mode.value if mode else None,
        "why": why,
        "not_covered": list(modes.NOT_COVERED.get(mode, ())) if mode else [],
        "check": _sandbox_check() if mode else {"ok": False, "error": why},
        "languages": _languages(run),
    }


def _yes(value: object) -> str:
    return {True: "yes", False: "no", None: "not checked"}.get(value, str(value))  # type: ignore[call-overload]


def _print(report: dict[str, Any], ran: bool) -> None:
    console = Console()
    machine = Table(title="This machine", show_header=False)
    m = report["machine"]
    v1 = ", ".join(f"{c} ({p})" for c, p in m["cgroup_v1"].items()) or "not mounted"
    v2 = f"{m['cgroup_v2']} ({', '.join(m['cgroup_v2_controllers']) or 'no controllers'})"
    userns = _yes(m["user_namespaces"])
    if m["user_namespaces_error"]:
        userns += f" ({m['user_namespaces_error']})"
    rows = [
        ("root", _yes(m["root"])),
        ("architecture / kernel", f"{m['arch']} / {m['kernel']}"),
        ("user namespaces", userns),
        ("cgroup v1", v1),
        ("cgroup v2", v2 if m["cgroup_v2"] else "not mounted"),
        ("seccomp filter table", _yes(m["seccomp_filter"])),
    ]
    for key, value in rows:
        machine.add_row(key, escape(value))
    console.print(machine)
    check = report["check"]
    sandbox = Table(title="Sandbox", show_header=False)
    sandbox.add_row("mode", escape(f"{report['mode'] or 'none'} ({report['why']})"))
    sandbox.add_row("jail started", "yes" if check["ok"] else escape(f"no: {check.get('error')}"))
    if check.get("ok"):
        sandbox.add_row("seccomp in the jail", _yes(check.get("seccomp_in_jail")))
    for gap in report["not_covered"]:
        sandbox.add_row("not covered", escape(gap))
    console.print(sandbox)
    langs = Table(title="Languages (code_tests)")
    for column in ("language", "toolchain", "used", *(["in the jail"] if ran else [])):
        langs.add_column(column)
    for row in report["languages"]:
        cells = [row["language"], row["version"] or f"no {row['tool']}", _yes(row["available"])]
        if ran:
            cells.append(row.get("jail", "-"))
        langs.add_row(*(escape(c) for c in cells))
    console.print(langs)


def doctor(
    run: Annotated[
        bool, typer.Option("--run", help="Also build and run a tiny program per language.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Show what this machine provides the sandbox (root, user namespaces, cgroups, seccomp,
    toolchains) and which sandbox mode and languages will be used.

    Exits 1 when the code verifier cannot run at all (no mode works, or its jail fails).
    """
    report = facts(run)
    if as_json:
        typer.echo(json.dumps(report, indent=2))
    else:
        _print(report, run)
    if not report["check"]["ok"]:
        raise typer.Exit(1)
