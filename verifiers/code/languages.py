"""The languages the code runner knows: how each compiles and runs, in the same jail.

A compile step gets its own limits; its output (a binary, a jar) is read back and handed
to each test run as an executable file. Python skips compilation and runs in a warm fork.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field

from rewardsmith.verifiers.sandbox import Limits

__all__ = ["LANGUAGES", "Language", "language"]

_COMPILE_LIMITS = Limits(
    wall_s=60.0,
    cpu_s=60.0,
    memory_bytes=1 << 30,
    processes=64,
    file_bytes=256 << 20,
    disk_bytes=512 << 20,
    output_bytes=256 << 10,
    collect_bytes=256 << 20,
)
_RUSTUP = ("/root/.cargo", "/root/.rustup")


@dataclass(frozen=True)
class Language:
    name: str
    source: str
    """The file name the program is saved as."""
    run: tuple[str, ...]
    compile: tuple[str, ...] | None = None
    artifact: str | None = None
    """What the compile step produces and each run receives."""
    tool: str = ""
    """The compiler's name, for the diagnostics parser."""
    binds: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    run_memory_bytes: int = 256 << 20
    run_processes: int = 16
    compile_limits: Limits = _COMPILE_LIMITS

    @property
    def available(self) -> bool:
        """Whether the toolchain is installed here (tests skip a language that is not)."""
        return self.name == "python" or shutil.which(self.tool, path=_path(self)) is not None


def _path(lang: Language) -> str:
    extra = [os.path.join(b, "bin") for b in lang.binds]
    return ":".join([*extra, "/usr/local/bin", "/usr/bin", "/bin"])


_JAVA_FLAGS = (
    "-Xmx256m",
    "-Xss64m",
    "-XX:+UseSerialGC",
    "-XX:TieredStopAtLevel=1",
    "-XX:-UsePerfData",
    "-Xshare:auto",
)

LANGUAGES: dict[str, Language] = {
    "python": Language("python", "main.py", run=("python3", "-I", "main.py"), tool="python"),
    "c": Language(
        "c",
        "main.c",
        run=("./main",),
        artifact="main",
        tool="gcc",
        compile=("gcc", "-O2", "-std=gnu17", "-o", "main", "main.c", "-lm"),
    ),
    "cpp": Language(
        "cpp",
        "main.cpp",
        run=("./main",),
        artifact="main",
        tool="g++",
        compile=("g++", "-O2", "-std=gnu++17", "-o", "main", "main.cpp"),
    ),
    "rust": Language(
        "rust",
        "main.rs",
        run=("./main",),
        artifact="main",
        tool="rustc",
        compile=("rustc", "-O", "--edition", "2021", "-o", "main", "main.rs"),
        binds=_RUSTUP,
        env={"RUSTUP_HOME": "/root/.rustup", "CARGO_HOME": "/root/.cargo"},
    ),
    "java": Language(
        "java",
        "Main.java",
        run=("java", *_JAVA_FLAGS, "-cp", "main.jar", "Main"),
        artifact="main.jar",
        tool="javac",
        run_memory_bytes=768 << 20,
        run_processes=64,
        compile=(
            "sh",
            "-c",
            "javac -J-Xmx512m -d classes Main.java && jar cf main.jar -C classes .",
        ),
    ),
    "javascript": Language(
        "javascript",
        "main.js",
        run=("node", "--max-old-space-size=192", "main.js"),
        tool="node",
        run_memory_bytes=512 << 20,
        run_processes=32,
    ),
}
_ALIASES = {"py": "python", "c++": "cpp", "rs": "rust", "js": "javascript", "node": "javascript"}


def language(name: str) -> Language:
    """The `Language` called `name` (or an alias such as ``c++``); KeyError if unknown."""
    key = _ALIASES.get(name.lower(), name.lower())
    if key not in LANGUAGES:
        raise KeyError(f"unknown language {name!r}; known: {', '.join(LANGUAGES)}")
    return LANGUAGES[key]
