"""One attempt at a repair task, built and tested in the sandbox, recorded as a `Step`.

A repair task (a sample's ``reference``) names a language, a trusted test harness and
stdin/stdout cases:

    {"language": "c",
     "harness": {"main.c": "...reads a case, calls the model's functions, prints..."},
     "cases": [{"input": "3\\n", "output": "6\\n"}, ...],
     "checker": "tokens"}

`run_attempt(task, source)` writes the model's source next to the harness (as
``solution.c``, ``solution.rs``, ``Solution.java``, ...: `SOLUTION_FILES`), builds both
with the real compiler, runs every case and compares the output outside the jail (the
`code_tests` checkers). The step it returns is what an environment would record:

- ``observation``: the compiler's output, then the standard error of each run that
  failed (assertion messages, panics, tracebacks), as the tools printed them;
- ``meta``: ``tool`` (the parser to read the log with), ``language``, ``exit_code`` (the
  compiler's status when the build failed, else the first failing run's, 128 + the
  signal for a killed run, else 0) and, when it built, ``tests``:
  ``{"passed": int, "total": int}`` and ``cases``: how each case went, in words
  (``"pass"``, ``"wrong output"``, ``"exited with code 1"``, ``"stopped: time limit"``, ...).

The model's code can print anything into the log; it cannot change ``meta``, which the
rewards trust over the text (docs/diagnostics.md).
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rewardsmith.verifiers.code import stdio
from rewardsmith.verifiers.code.languages import LANGUAGES, Language
from rewardsmith.verifiers.code.outcome import text_excerpt
from rewardsmith.verifiers.sandbox import Limits, Program, SandboxResult, fork_server, run
from rewardsmith.verifiers.sandbox.limits import LimitHit
from rewardsmith.verifiers.types import Step

__all__ = ["RECIPES", "SOLUTION_FILES", "RepairTask", "TaskError", "run_attempt"]


@dataclass(frozen=True)
class Recipe:
    """How one language builds the harness with the model's file and runs the result."""

    tool: str
    solution: str
    run: tuple[str, ...]
    build: tuple[str, ...] | None = None
    artifact: str | None = None


_GO = "GOCACHE=/tmp/go-cache GOPATH=/tmp/go HOME=/box go build -o main *.go"
RECIPES: dict[str, Recipe] = {
    "c": Recipe(
        "gcc",
        "solution.c",
        ("./main",),
        ("sh", "-c", "gcc -Wall -O2 -std=gnu17 -o main *.c -lm"),
        "main",
    ),
    "cpp": Recipe(
        "g++", "solution.cpp", ("./main",), ("sh", "-c", "g++ -Wall -O2 -o main *.cpp"), "main"
    ),
    "rust": Recipe(
        "rustc", "solution.rs", ("./main",), ("rustc", "-O", "-o", "main", "main.rs"), "main"
    ),
    "java": Recipe(
        "javac",
        "Solution.java",
        (
            "java",
            "-Xmx256m",
            "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1",
            "-cp",
            "main.jar",
            "Main",
        ),
        ("sh", "-c", "javac -J-Xmx512m -d classes *.java && jar cf main.jar -C classes ."),
        "main.jar",
    ),
    "go": Recipe("go", "solution.go", ("./main",), ("sh", "-c", _GO), "main"),
    "javascript": Recipe("node", "solution.js", ("node", "main.js")),
    "python": Recipe("python", "solution.py", ("python3", "-E", "-s", "main.py")),
}
SOLUTION_FILES = {lang: recipe.solution for lang, recipe in RECIPES.items()}
_RUNTIMES = {**LANGUAGES}
_RUNTIMES.setdefault("go", Language("go", "main.go", run=("./main",), tool="go", run_processes=32))
"""Run limits, environment and binds per language: code_tests' where it knows the language."""
"""The file each language's harness imports the model's code from."""

_BUILD_LIMITS = Limits(
    wall_s=120.0,
    cpu_s=120.0,
    memory_bytes=1 << 30,
    processes=64,
    file_bytes=256 << 20,
    disk_bytes=512 << 20,
    output_bytes=256 << 10,
)


class TaskError(ValueError):
    """The repair task is not usable (a data problem, not the model's)."""


@dataclass(frozen=True)
class RepairTask:
    language: str
    harness: Mapping[str, str]
    cases: tuple[dict[str, str], ...]
    checker: str = "tokens"
    float_tol: float = 1e-6
    run_limits: Limits = field(default_factory=lambda: Limits(wall_s=5.0, cpu_s=5.0))

    @classmethod
    def parse(cls, reference: Any) -> RepairTask:
        if not isinstance(reference, Mapping):
            raise TaskError("a repair task is a dict with language, harness and cases")
        language = reference.get("language")
        if language not in RECIPES:
            raise TaskError(f"repair language {language!r} is not one of {', '.join(RECIPES)}")
        harness, cases = reference.get("harness"), reference.get("cases")
        if not isinstance(harness, Mapping) or not all(
            isinstance(k, str) and "/" not in k and isinstance(v, str) for k, v in harness.items()
        ):
            raise TaskError("repair `harness` maps file names to sources")
        if not isinstance(cases, list) or not cases or not all(_case(c) for c in cases):
            raise TaskError("repair `cases` is a non-empty list of {input, output} strings")
        checker = reference.get("checker", "tokens")
        if checker not in stdio.CHECKERS or checker == "custom":
            raise TaskError(f"repair checker {checker!r} is not a built-in stdio checker")
        return cls(language, dict(harness), tuple(cases), checker)


def _case(case: Any) -> bool:
    return isinstance(case, Mapping) and all(
        isinstance(case.get(k), str) for k in ("input", "output")
    )


_CACHE: OrderedDict[str, Step] = OrderedDict()
_CACHE_SIZE = 256


def run_attempt(task: RepairTask, source: str) -> Step:
    """Build `source` with the task's harness, run its cases, and record the attempt.

    The last few hundred attempts are remembered per process: the exploit generators of
    three verifiers audited on one task build the same rewrites once."""
    key = hashlib.sha256(json.dumps([repr(task), source]).encode()).hexdigest()
    step = _recall(_CACHE, key)
    if step is None:
        step = _attempt(task, source)
        _remember(_CACHE, key, step, _CACHE_SIZE)
    return step


_LOCK = threading.Lock()
"""Episodes step in threads: the caches below are read and trimmed under it."""


def _recall(cache: OrderedDict[str, Any], key: str) -> Any:
    with _LOCK:
        if key not in cache:
            return None
        cache.move_to_end(key)
        return cache[key]


def _remember(cache: OrderedDict[str, Any], key: str, value: Any, size: int) -> None:
    with _LOCK:
        cache[key] = value
        while len(cache) > size:
            cache.popitem(last=False)


def _attempt(task: RepairTask, source: str) -> Step:
    recipe = RECIPES[task.language]
    meta: dict[str, Any] = {"tool": recipe.tool, "language": task.language}
    build = _build(task, source)
    if build.failed is not None:
        return Step(action=source, observation=build.log, meta={**meta, "exit_code": build.failed})
    results = _run_cases(task, recipe, dict(build.files))
    outputs = [_text(r.stdout) if r else "" for r in results]
    ok = stdio.check_outputs(task.checker, list(task.cases), outputs, task.float_tol)
    assert not isinstance(ok, stdio.CheckerError)  # built-in checkers never fail
    passed = [good and r is not None and r.ok for good, r in zip(ok, results, strict=True)]
    ran = [r for r in results if r is not None]
    failing = [r for r, good in zip(results, passed, strict=True) if r is not None and not good]
    meta["exit_code"] = next((_status(r) for r in ran if _status(r) != 0), 0)
    meta["tests"] = {"passed": sum(passed), "total": len(passed)}
    meta["cases"] = [_outcome(r, good) for r, good in zip(results, passed, strict=True)]
    errors = dict.fromkeys(text_excerpt(r.stderr, 4000) for r in failing if r.stderr)
    return Step(action=source, observation=build.log + "".join(errors), meta=meta)


@dataclass(frozen=True)
class _Built:
    log: str
    """The compiler's output ('' for an interpreted language)."""
    failed: int | None
    """The compiler's status when the build failed, else None."""
    files: Mapping[str, bytes]
    """What the cases run: the artifact, or the sources of an interpreted language."""


_BUILDS: OrderedDict[str, _Built] = OrderedDict()
_BUILDS_SIZE = 16


def _build(task: RepairTask, source: str) -> _Built:
    """The harness built with `source`, remembered per process: an environment runs the
    visible and the hidden cases of one attempt (two tasks, one harness) off one build."""
    key = hashlib.sha256(json.dumps([task.language, task.harness, source]).encode()).hexdigest()
    built: _Built | None = _recall(_BUILDS, key)
    if built is None:
        built = _compile(task, source)
        _remember(_BUILDS, key, built, _BUILDS_SIZE)
    return built


def _compile(task: RepairTask, source: str) -> _Built:
    recipe, lang = RECIPES[task.language], _RUNTIMES[task.language]
    files = {**{k: v.encode() for k, v in task.harness.items()}, recipe.solution: source.encode()}
    if recipe.build is None:
        return _Built("", None, files)
    built = run(
        list(recipe.build),
        files=files,
        limits=_BUILD_LIMITS,
        collect=(recipe.artifact,) if recipe.artifact else (),
        env=lang.env,
        binds=lang.binds,
    )
    if built.error:
        raise RuntimeError(f"the sandbox failed to build: {built.error}")
    log = _text(built.stdout) + _text(built.stderr)
    if not built.ok or recipe.artifact not in built.files:
        return _Built(log, _status(built) or 1, {})
    assert recipe.artifact is not None  # a recipe that builds names what it makes
    return _Built(log, None, {recipe.artifact: built.files[recipe.artifact]})


def _run_cases(
    task: RepairTask, recipe: Recipe, files: dict[str, bytes]
) -> list[SandboxResult | None]:
    lang = _RUNTIMES[task.language]
    limits = task.run_limits.replace(
        memory_bytes=max(task.run_limits.memory_bytes, lang.run_memory_bytes),
        processes=max(task.run_limits.processes, lang.run_processes),
    )
    executables = (recipe.artifact,) if recipe.artifact == "main" else ()
    with fork_server(binds=lang.binds) as server:
        programs = [
            Program(
                command=recipe.run,
                files=files,
                executables=executables,
                stdin=case["input"].encode(),
                limits=limits,
                env=lang.env,
                binds=lang.binds,
            )
            for case in task.cases
        ]
        results = _until_a_hang(server, programs)
    for result in results:
        if result is not None and result.error:
            raise RuntimeError(f"the sandbox failed to run a case: {result.error}")
    return results


_OUT_OF_TIME = (LimitHit.WALL_TIME, LimitHit.CPU_TIME)


def _until_a_hang(server: Any, programs: list[Program]) -> list[SandboxResult | None]:
    """Each case in turn until one runs out of time, wall or CPU (a loop that spins is
    stopped by the CPU limit first): the cases after it are not run (None; they fail,
    saying why). A program that hangs costs one case's limit, not every case's in turn; a
    slow but finishing one never reaches the limit."""
    results: list[SandboxResult | None] = []
    for program in programs:
        hung = any(r is not None and r.limit_hit in _OUT_OF_TIME for r in results)
        results.append(None if hung else server.run_programs([program])[0])
    return results


def _outcome(result: SandboxResult | None, passed: bool) -> str:
    if result is None:
        return "not run: an earlier case ran out of time"
    if passed:
        return "pass"
    return "wrong output" if result.ok else result.describe()


def _status(result: SandboxResult) -> int:
    """The shell's convention: the exit code, or 128 + the signal that killed it."""
    if result.signal is not None:
        return 128 + result.signal
    if result.limit_hit is not None and result.exit_code in (None, 0):
        return 137
    return result.exit_code if result.exit_code is not None else 1


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")
